import { describe, expect, it } from 'vitest';
import { HELP, parseArgs, UsageError } from '../../node-core/cli/args.ts';

/** The provider flags: capacity offered on the marketplace; none of them, no provider. */
describe('provider flags', () => {
  it('no flag: not a provider', () => {
    expect(parseArgs([]).provide).toBeUndefined();
  });

  it('takes the capacity, missing dimensions and the lease cap being 0', () => {
    expect(parseArgs(['--provide-vcpus', '4', '--provide-memory-mb=8192']).provide).toEqual({
      vcpus: 4n,
      memory_mb: 8192n,
      disk_gb: 0n,
      max_concurrent_leases: 0n,
    });
    expect(parseArgs(['--provide-disk-gb', '20', '--max-concurrent-leases', '3']).provide).toMatchObject({
      disk_gb: 20n,
      max_concurrent_leases: 3n,
    });
  });

  it('refuses non-numbers and a provider with nothing to offer', () => {
    expect(() => parseArgs(['--provide-vcpus', '-1'])).toThrow(UsageError);
    expect(() => parseArgs(['--provide-vcpus', '1.5'])).toThrow(/not a whole number/);
    expect(() => parseArgs(['--max-concurrent-leases', '2'])).toThrow(/a provider needs/);
    expect(() => parseArgs(['--provide-vcpus', '0'])).toThrow(/a provider needs/);
  });

  it('documents them in --help', () => {
    for (const flag of [
      '--provide-vcpus',
      '--provide-memory-mb',
      '--provide-disk-gb',
      '--max-concurrent-leases',
    ])
      expect(HELP).toContain(flag);
  });
});
