import { describe, expect, it } from 'vitest';
import { HELP, parseArgs } from '../../node-core/cli/args.ts';

/** The HTTP API's connection caps on the command line (issue #15). */
describe('API connection cap flags', () => {
  it('are unset by default, so the node applies its own defaults', () => {
    const o = parseArgs([]);
    expect(o.apiMaxConnsPerIp).toBeUndefined();
    expect(o.apiMaxConns).toBeUndefined();
  });

  it('take whole numbers of at least 1, apart from the peer-to-peer caps', () => {
    const o = parseArgs(['--api-max-conns-per-ip', '512', '--api-max-conns=4096', '--max-conns-per-ip', '3']);
    expect(o.apiMaxConnsPerIp).toBe(512);
    expect(o.apiMaxConns).toBe(4096);
    expect(o.maxConnsPerIp).toBe(3);
    expect(o.maxInboundConns).toBeUndefined();
    expect(() => parseArgs(['--api-max-conns-per-ip', '0'])).toThrow(/at least 1/);
    expect(() => parseArgs(['--api-max-conns', 'lots'])).toThrow(/--api-max-conns: "lots"/);
    expect(() => parseArgs(['--api-max-conns'])).toThrow(/needs a value/);
  });

  it('are documented in --help', () => {
    expect(HELP).toContain('--api-max-conns-per-ip N');
    expect(HELP).toContain('--api-max-conns N');
  });
});
