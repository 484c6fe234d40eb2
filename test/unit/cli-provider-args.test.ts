import { describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDE, HELP, parseArgs, UsageError } from '../../node-core/cli/args.ts';

/** The provider flags (reference-behavior.md 8.1, decisions D9, D16). */
describe('provider flags', () => {
  it('a development network provides by default with the reference capacity; --no-provide turns it off', () => {
    expect(parseArgs([]).provide).toEqual(DEFAULT_PROVIDE);
    expect(parseArgs(['--no-provide']).provide).toBeUndefined();
    expect(parseArgs([]).vmDriver).toBe('auto');
  });

  it('a joined network provides only with --provide or capacity flags', () => {
    expect(parseArgs(['--genesis-dir', '/g']).provide).toBeUndefined();
    expect(parseArgs(['--genesis-dir', '/g', '--provide']).provide).toEqual(DEFAULT_PROVIDE);
    expect(parseArgs(['--genesis-dir', '/g', '--vcpus', '4']).provide).toEqual({
      ...DEFAULT_PROVIDE,
      vcpus: 4n,
    });
  });

  it('reads the capacity, in both spellings, over the defaults', () => {
    expect(parseArgs(['--vcpus', '4', '--memory=8192', '--disk', '50']).provide).toEqual({
      vcpus: 4n,
      memory_mb: 8192n,
      disk_gb: 50n,
      max_concurrent_leases: 0n,
    });
    expect(parseArgs(['--provide-disk-gb', '20', '--max-concurrent-leases', '3']).provide).toMatchObject({
      disk_gb: 20n,
      max_concurrent_leases: 3n,
    });
  });

  it('reads the driver and the lease policy (costs in whole XUSD)', () => {
    const o = parseArgs([
      '--vm-driver',
      'sandbox',
      '--allow-sandbox',
      '--min-lease-duration',
      '120',
      '--max-lease-duration=3600',
      '--min-lease-cost',
      '1',
      '--max-lease-cost',
      '20',
    ]);
    expect(o.vmDriver).toBe('sandbox');
    expect(o.allowSandbox).toBe(true);
    expect(o.leasePolicy).toEqual({
      minDurationSecs: 120n,
      maxDurationSecs: 3600n,
      minCost: 1_000_000n,
      maxCost: 20_000_000n,
    });
  });

  it('refuses bad values, nothing to offer, and --no-provide with capacity', () => {
    expect(() => parseArgs(['--vcpus', '-1'])).toThrow(UsageError);
    expect(() => parseArgs(['--vcpus', '1.5'])).toThrow(/not a whole number/);
    expect(() => parseArgs(['--vcpus', '0', '--memory', '0', '--disk', '0'])).toThrow(/a provider needs/);
    expect(() => parseArgs(['--no-provide', '--vcpus', '2'])).toThrow(/excludes/);
    expect(() => parseArgs(['--vm-driver', 'lima'])).toThrow(/auto, qemu or sandbox/);
    expect(() => parseArgs(['--max-lease-cost', '1e3'])).toThrow(/not a whole number/);
  });

  it('documents them in --help', () => {
    for (const flag of [
      '--provide',
      '--no-provide',
      '--vcpus',
      '--memory',
      '--disk',
      '--vm-driver',
      '--allow-sandbox',
      '--min-lease-duration',
      '--max-lease-cost',
      '--max-concurrent-leases',
    ])
      expect(HELP).toContain(flag);
  });
});
