import { describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { AttestationGatherer } from '../../node-core/leasing/attestation-gatherer.ts';
import { AttestationResponder } from '../../node-core/leasing/attestation-responder.ts';
import { AttestationSlots } from '../../node-core/leasing/attestation-slots.ts';
import { attestationSubject, type SubjectView } from '../../node-core/leasing/attestation-subject.ts';
import type { LeasingError } from '../../node-core/leasing/errors.ts';
import type { LeaseRecord, LeaseState } from '../../node-core/leasing/records.ts';
import { NetError } from '../../node-core/net/errors.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';
import { benchmarkEndSubject } from '../../node-core/protocol/certificate.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { type KeyPair, keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { signAttestation } from '../../node-core/protocol/payloads.ts';

/**
 * Timekeeper attestations between peers (reference-behavior.md 1.8, 4.6; LS-10): what may be
 * attested, the 30 s slot per peer and identifier, the responder's order of checks, and how the
 * gatherer keeps only valid answers from listed keys.
 */
const LEASE = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const PROVIDER = 'ef'.repeat(32);
const OWN = '12'.repeat(32);
const NOW = 1_790_000_000_000_000_000n;
const keys = [1, 2, 3].map((i) => keyPairFromSeed(new Uint8Array(32).fill(i)));
const outsider = keyPairFromSeed(new Uint8Array(32).fill(99));

const att = (k: KeyPair, subject = LEASE, t = NOW): Attestation =>
  signAttestation(subject, t, hexToBytes(k.seed_hex), k.pub_key);

function view(states: Record<string, LeaseState> = { [LEASE]: 'created', [OTHER]: 'accepted' }): SubjectView {
  return {
    leases: {
      get: (h) => (states[h] ? ({ lease_hash: h, state: states[h] } as LeaseRecord) : undefined),
    },
    directory: { addressesFrom: (prefix: string) => [PROVIDER].filter((a) => a.startsWith(prefix)) },
    ownAddress: OWN,
  };
}

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as LeasingError | NetError).code;
  }
  return 'none';
}

describe('attestationSubject', () => {
  it('accepts live leases, registered providers, their end subjects and the node itself', () => {
    expect(attestationSubject(LEASE, view())).toBe(LEASE);
    expect(attestationSubject(OTHER, view())).toBe(OTHER);
    expect(attestationSubject(PROVIDER, view())).toBe(PROVIDER);
    expect(attestationSubject(benchmarkEndSubject(PROVIDER), view())).toBe(benchmarkEndSubject(PROVIDER));
    expect(attestationSubject(benchmarkEndSubject(OWN), view())).toBe(benchmarkEndSubject(OWN));
  });

  it('refuses malformed identifiers, terminal leases and unknown subjects, with codes', () => {
    expect(code(() => attestationSubject(undefined, view()))).toBe('subject_invalid');
    expect(code(() => attestationSubject(7, view()))).toBe('subject_invalid');
    expect(() => attestationSubject('ab', view())).toThrow('invalid attestation identifier length: 2');
    expect(code(() => attestationSubject('zz'.repeat(32), view()))).toBe('subject_invalid');
    for (const s of ['settled', 'cancelled', 'unfulfilled', 'expired'] as const)
      expect(() => attestationSubject(LEASE, view({ [LEASE]: s }))).toThrow(
        `lease ${LEASE} is ${s}: no attestation-gated transitions remain`,
      );
    expect(code(() => attestationSubject('34'.repeat(32), view()))).toBe('subject_unknown');
  });
});

describe('AttestationSlots', () => {
  it('one per peer per identifier per window; other peers and identifiers are separate', () => {
    let now = 0;
    const slots = new AttestationSlots({ now: () => now });
    expect(slots.take('p1', LEASE)).toBe(true);
    expect(slots.take('p1', LEASE)).toBe(false);
    expect(slots.take('p1', OTHER)).toBe(true);
    expect(slots.take('p2', LEASE)).toBe(true);
    now = 29_999;
    expect(slots.take('p1', LEASE)).toBe(false);
    now = 30_000;
    expect(slots.take('p1', LEASE)).toBe(true);
  });

  it('bounded: when full, expired slots are swept, else newcomers are refused', () => {
    let now = 0;
    const slots = new AttestationSlots({ now: () => now, maxSlots: 2 });
    expect(slots.take('p1', LEASE)).toBe(true);
    expect(slots.take('p2', LEASE)).toBe(true);
    expect(slots.take('p3', LEASE)).toBe(false);
    now = 30_000;
    expect(slots.take('p3', LEASE)).toBe(true);
    expect(slots.size).toBe(1);
  });
});

describe('AttestationResponder', () => {
  const responder = (timekeeper = true) =>
    new AttestationResponder({
      subjects: view(),
      isTimekeeper: () => timekeeper,
      attest: (id) => att(keys[0]!, id),
      slots: new AttestationSlots(),
    });

  it('answers attest_timestamp once per peer and lease within 30 s; leaves other types alone', () => {
    const r = responder();
    expect(r.answer('vote_request', {}, 'p1')).toBeUndefined();
    expect(r.answer('attest_timestamp', { lease_hash: LEASE }, 'p1')).toEqual(att(keys[0]!));
    expect(code(() => r.answer('attest_timestamp', { lease_hash: LEASE }, 'p1'))).toBe('ERR_RATE_LIMITED');
    expect(r.answer('attest_timestamp', { lease_hash: OTHER }, 'p1')).toEqual(att(keys[0]!, OTHER));
    expect(r.answer('attest_timestamp', { lease_hash: LEASE }, 'p2')).toEqual(att(keys[0]!));
    expect(r.stats).toEqual({ served: 3, rate_limited: 1 });
  });

  it('an invalid request takes no slot (LS-10)', () => {
    const states: Record<string, LeaseState> = {};
    const r2 = new AttestationResponder({
      subjects: view(states),
      isTimekeeper: () => true,
      attest: (id) => att(keys[0]!, id),
      slots: new AttestationSlots(),
    });
    expect(code(() => r2.answer('attest_timestamp', { lease_hash: LEASE }, 'p1'))).toBe('ERR_BAD_REQUEST');
    expect(code(() => r2.answer('attest_timestamp', { lease_hash: 'x' }, 'p1'))).toBe('ERR_BAD_REQUEST');
    expect(code(() => r2.answer('attest_timestamp', null, 'p1'))).toBe('ERR_BAD_REQUEST');
    states[LEASE] = 'created'; // the lease arrives: the first valid request is answered
    expect(r2.answer('attest_timestamp', { lease_hash: LEASE }, 'p1')).toEqual(att(keys[0]!));
  });

  it('a node whose key is not a timekeeper refuses', () => {
    const r = responder(false);
    expect(code(() => r.answer('attest_timestamp', { lease_hash: LEASE }, 'p1'))).toBe('ERR_REFUSED');
  });
});

describe('AttestationGatherer', () => {
  type Answer = unknown | Error | 'never';
  function gatherer(answers: Record<string, Answer>, self?: KeyPair, listed = keys) {
    const asked: string[] = [];
    const g = new AttestationGatherer(
      {
        host: {
          peers: () => Object.keys(answers).map((id) => ({ id })),
          request: async <T>(peer: string, type: string, payload: unknown) => {
            asked.push(`${peer} ${type} ${(payload as { lease_hash: string }).lease_hash}`);
            const a = answers[peer];
            if (a === 'never') return new Promise<T>(() => {});
            if (a instanceof Error) throw a;
            return a as T;
          },
        },
        timekeepers: () => ({ keys: listed.map((k) => k.pub_key), threshold: 1 }),
        self: (s) => (self ? att(self, s) : undefined),
        verify: verifyBytesNode,
      },
      { perPeerMs: 50, overallMs: 150 },
    );
    return { g, asked };
  }

  it('asks every peer and keeps valid answers from listed keys, its own first, one per key', async () => {
    const { g, asked } = gatherer(
      {
        good: att(keys[1]!),
        dup: att(keys[1]!, LEASE, NOW + 1n),
        outsider: att(outsider),
        forged: { ...att(keys[2]!), signature: att(keys[2]!, OTHER).signature },
        wrongLease: att(keys[2]!, OTHER),
        refused: new NetError('ERR_PEER_ANSWER', 'no'),
        garbage: { public_key: 'xyz' },
        digits: { ...att(keys[2]!), timestamp: String(NOW) }, // a 64-bit field as digits (D3)
      },
      keys[0],
    );
    const got = await g.gatherAttestations(LEASE);
    expect(asked).toHaveLength(8);
    expect(asked[0]).toBe(`good attest_timestamp ${LEASE}`);
    expect(got.map((a) => a.public_key)).toEqual([keys[0]!.pub_key, keys[1]!.pub_key, keys[2]!.pub_key]);
    expect(got[1]).toEqual(att(keys[1]!));
  });

  it('a silent peer costs at most the per-peer time; the whole at most the overall time', async () => {
    const { g } = gatherer({ silent: 'never', good: att(keys[1]!) });
    const t0 = Date.now();
    expect((await g.gatherAttestations(LEASE)).map((a) => a.public_key)).toEqual([keys[1]!.pub_key]);
    expect(Date.now() - t0).toBeLessThan(140);
  });

  it('at most 20, and nothing without sys.timekeepers', async () => {
    const many = Array.from({ length: 25 }, (_, i) => keyPairFromSeed(new Uint8Array(32).fill(i + 10)));
    const { g } = gatherer(Object.fromEntries(many.map((k, i) => [`p${i}`, att(k)])), undefined, many);
    expect(await g.gatherAttestations(LEASE)).toHaveLength(20);
    const none = new AttestationGatherer({
      host: { peers: () => [{ id: 'p' }], request: async () => att(keys[0]!) as never },
      timekeepers: () => undefined,
      self: () => undefined,
      verify: verifyBytesNode,
    });
    expect(await none.gatherAttestations(LEASE)).toEqual([]);
  });
});
