import { describe, expect, it } from 'vitest';
import {
  createDevnet,
  DEV_CERTIFICATE_WORKLOAD,
  GENESIS_SET_FIELDS,
  GenesisError,
} from '../../node-core/genesis/genesis.ts';
import { REFERENCE_WORKLOAD } from '../../node-core/protocol/certificate.ts';
import { parseJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { parseCertificateWorkload, SysValueError, validateValue } from '../../node-core/statechain/sys.ts';

/** `sys.certificate_workload`: a development network pins a small benchmark in its genesis. */
describe('sys.certificate_workload', () => {
  it('parses the four fields, as numbers or digit strings', () => {
    expect(
      parseCertificateWorkload(
        parseJson(
          '{"workload_version": 3, "iterations": "375000000", "table_entries": 8388608, "reads": 1000000}',
        ),
      ),
    ).toEqual(REFERENCE_WORKLOAD);
  });

  it.each([
    ['[]', /expected a JSON object/],
    ['{"workload_version":3,"iterations":1,"table_entries":1}', /reads/],
    ['{"workload_version":0,"iterations":1,"table_entries":1,"reads":0}', /workload_version must be/],
    ['{"workload_version":3,"iterations":0,"table_entries":1,"reads":0}', /iterations must be/],
    ['{"workload_version":3,"iterations":1.5,"table_entries":1,"reads":0}', /iterations/],
    [
      '{"workload_version":3,"iterations":9007199254740992,"table_entries":1,"reads":0}',
      /iterations must be/,
    ],
    ['{"workload_version":3,"iterations":1,"table_entries":0,"reads":0}', /table_entries must be/],
    ['{"workload_version":3,"iterations":1,"table_entries":67108865,"reads":0}', /table_entries must be/],
    ['{"workload_version":3,"iterations":1,"table_entries":1,"reads":-1}', /reads/],
    ['{"workload_version":3,"iterations":1,"table_entries":1,"reads":0,"extra":1}', /unknown field extra/],
  ])('refuses %s', (text, reason) => {
    expect(() => validateValue('sys.certificate_workload', text)).toThrow(SysValueError);
    expect(() => validateValue('sys.certificate_workload', text)).toThrow(reason);
  });
});

describe('a development genesis', () => {
  const workloadOf = (set: Parameters<typeof createDevnet>[0]['genesisSet'] = {}) => {
    const { bundle } = createDevnet({ nodeKey: generateKeyPair(), genesisSet: set });
    const op = bundle.state.ops.find((o) => o.key === 'sys.certificate_workload');
    return parseCertificateWorkload(parseJson(op!.value!));
  };

  it('pins the small development workload by default', () => {
    expect(workloadOf()).toEqual(DEV_CERTIFICATE_WORKLOAD);
    expect(DEV_CERTIFICATE_WORKLOAD).toEqual({
      workload_version: 3n,
      iterations: 2_000_000n,
      table_entries: 65_536,
      reads: 100_000,
    });
  });

  it('takes --genesis-set overrides of the workload and of the lease timing', () => {
    expect(
      workloadOf({ certificate_iterations: 5000n, certificate_table_entries: 64n, certificate_reads: 0n }),
    ).toEqual({ workload_version: 3n, iterations: 5000n, table_entries: 64, reads: 0 });
    expect(workloadOf({ certificate_workload_version: 9n }).workload_version).toBe(9n);
    const { bundle } = createDevnet({
      nodeKey: generateKeyPair(),
      genesisSet: { lease_min_duration_secs: 5n, certificate_iterations: 10n },
    });
    expect(bundle.ledger.lease_min_duration_secs).toBe(5n);
    expect(Object.keys(bundle.ledger)).not.toContain('certificate_iterations');
  });

  it('refuses unknown names and values outside the rules, naming them', () => {
    const make = (set: Record<string, bigint>) =>
      createDevnet({ nodeKey: generateKeyPair(), genesisSet: set as never });
    expect(() => make({ bogus: 1n })).toThrow(/unknown genesis field bogus/);
    expect(() => make({ certificate_iterations: 0n })).toThrow(GenesisError);
    expect(() => make({ certificate_table_entries: 1n << 30n })).toThrow(/table_entries must be/);
    expect(() => make({ lease_force_settle_gap_ns: 1n })).toThrow(/force-settle gap/);
  });

  it('lists every field --genesis-set takes', () => {
    expect(GENESIS_SET_FIELDS).toEqual([
      'lease_min_duration_secs',
      'lease_settle_grace_ns',
      'lease_force_settle_gap_ns',
      'lease_escrow_expiry_ns',
      'lease_archive_gap_ns',
      'max_attestation_skew_ns',
      'certificate_workload_version',
      'certificate_iterations',
      'certificate_table_entries',
      'certificate_reads',
    ]);
  });
});
