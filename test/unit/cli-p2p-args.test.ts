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

/** The gossip window (net/flush-pacer.ts): 0 to 1000 ms, unset leaves the node's default. */
describe('--gossip-window', () => {
  it('is unset by default, takes 0 to 1000 ms, and is documented', () => {
    expect(parseArgs([]).gossipWindowMs).toBeUndefined();
    expect(parseArgs(['--gossip-window', '0']).gossipWindowMs).toBe(0);
    expect(parseArgs(['--gossip-window=25']).gossipWindowMs).toBe(25);
    expect(() => parseArgs(['--gossip-window', '1001'])).toThrow(/--gossip-window: "1001"/);
    expect(() => parseArgs(['--gossip-window', '2.5'])).toThrow(/from 0 to 1000/);
    expect(HELP).toContain('--gossip-window MS');
  });

  it('has a heavy-stream twin with the same bounds', () => {
    expect(parseArgs([]).gossipHeavyWindowMs).toBeUndefined();
    expect(parseArgs(['--gossip-window-heavy', '250']).gossipHeavyWindowMs).toBe(250);
    expect(parseArgs(['--gossip-window-heavy=0', '--gossip-window=40'])).toMatchObject({
      gossipHeavyWindowMs: 0,
      gossipWindowMs: 40,
    });
    expect(() => parseArgs(['--gossip-window-heavy', '-1'])).toThrow(/--gossip-window-heavy: "-1"/);
    expect(() => parseArgs(['--gossip-window-heavy', '1001'])).toThrow(/from 0 to 1000/);
    expect(HELP).toContain('--gossip-window-heavy MS');
  });
});

/** Shaping a new development network and pricing this node's certificate from the command line. */
describe('--genesis-set and --price-multiplier', () => {
  it('are empty and unset by default', () => {
    expect(parseArgs([]).genesisSet).toEqual({});
    expect(parseArgs([]).priceMultiplierMilli).toBeUndefined();
  });

  it('--genesis-set is repeatable and takes NAME=VALUE with a whole number', () => {
    const o = parseArgs([
      '--genesis-set',
      'lease_min_duration_secs=5',
      '--genesis-set=lease_settle_grace_ns=30000000000',
      '--genesis-set',
      'certificate_iterations=1000',
    ]);
    expect(o.genesisSet).toEqual({
      lease_min_duration_secs: 5n,
      lease_settle_grace_ns: 30_000_000_000n,
      certificate_iterations: 1000n,
    });
  });

  it('--genesis-set refuses unknown names and bad values, naming them', () => {
    expect(() => parseArgs(['--genesis-set', 'bogus=1'])).toThrow(
      /--genesis-set: unknown field bogus \(one of lease_min_duration_secs, .*certificate_reads\)/,
    );
    expect(() => parseArgs(['--genesis-set', 'lease_min_duration_secs'])).toThrow(/is not NAME=VALUE/);
    expect(() => parseArgs(['--genesis-set', '=5'])).toThrow(/is not NAME=VALUE/);
    for (const v of ['', '-1', '1.5', '1e3', '05', 'ten', '9223372036854775808'])
      expect(() => parseArgs(['--genesis-set', `certificate_reads=${v}`])).toThrow(
        /--genesis-set: certificate_reads: ".*" is not a whole number/,
      );
    expect(() => parseArgs(['--genesis-set'])).toThrow(/needs a value/);
  });

  it('--price-multiplier takes thousandths from 500 to 10000', () => {
    expect(parseArgs(['--price-multiplier', '500']).priceMultiplierMilli).toBe(500n);
    expect(parseArgs(['--price-multiplier=10000']).priceMultiplierMilli).toBe(10_000n);
    for (const v of ['499', '10001', '1.5', 'cheap', '-600'])
      expect(() => parseArgs(['--price-multiplier', v])).toThrow(/--price-multiplier/);
  });

  it('are documented in --help', () => {
    expect(HELP).toContain('--genesis-set NAME=VALUE');
    expect(HELP).toContain('certificate_table_entries');
    expect(HELP).toContain('max_attestation_skew_ns');
    expect(HELP).toContain('--price-multiplier M');
  });
});
