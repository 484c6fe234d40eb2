import { describe, expect, it } from 'vitest';
import { HELP, parseArgs } from '../../node-core/cli/args.ts';

/** The inbound connection caps on the command line (reference-behavior.md 5.1 flag names). */
describe('connection cap flags', () => {
  it('are unset by default, so the node applies its own defaults', () => {
    const o = parseArgs([]);
    expect(o.maxConnsPerIp).toBeUndefined();
    expect(o.maxInboundConns).toBeUndefined();
  });

  it('take whole numbers of at least 1', () => {
    const o = parseArgs(['--max-conns-per-ip', '4', '--max-inbound-conns=128']);
    expect(o.maxConnsPerIp).toBe(4);
    expect(o.maxInboundConns).toBe(128);
    expect(() => parseArgs(['--max-conns-per-ip', '0'])).toThrow(/at least 1/);
    expect(() => parseArgs(['--max-inbound-conns', 'many'])).toThrow(/--max-inbound-conns: "many"/);
    expect(() => parseArgs(['--max-inbound-conns'])).toThrow(/needs a value/);
  });

  it('are documented in --help', () => {
    expect(HELP).toContain('--max-conns-per-ip N');
    expect(HELP).toContain('--max-inbound-conns N');
  });
});
