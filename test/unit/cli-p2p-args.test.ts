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

/** The verification thread cap, for operators with more cores (or none to spare). */
describe('--verify-threads', () => {
  it('is unset by default, takes 0 to 64, and is documented', () => {
    expect(parseArgs([]).verifyThreads).toBeUndefined();
    expect(parseArgs(['--verify-threads', '0']).verifyThreads).toBe(0);
    expect(parseArgs(['--verify-threads=8']).verifyThreads).toBe(8);
    expect(() => parseArgs(['--verify-threads', '65'])).toThrow(/--verify-threads: "65"/);
    expect(() => parseArgs(['--verify-threads', '-1'])).toThrow(/needs a value|--verify-threads/);
    expect(() => parseArgs(['--verify-threads', 'all'])).toThrow(/from 0 to 64/);
    expect(HELP).toContain('--verify-threads N');
  });
});
