import type { Attestation } from '../protocol/block.ts';
import { MAX_ATTESTATIONS } from '../protocol/block-json.ts';
import { hexField, intField, jsonObject } from '../protocol/fields.ts';
import type { Verifier } from '../protocol/keys.ts';
import { verifyAttestation } from '../protocol/payloads.ts';
import { ATTEST_REQUEST } from './attestation-responder.ts';
import type { TimekeeperConfig } from './attestations.ts';

/**
 * How a provider collects the attestations of a lease block (reference-behavior.md 4.6): it asks
 * every connected peer `attest_timestamp {lease_hash}` (10 s per peer, 15 s in all), signs itself
 * when its own key is a timekeeper, and keeps the valid answers from listed keys, one per key, at
 * most 20 (the per-block maximum). Peers that refuse, fail or stay silent simply count for nothing.
 */
export interface AttestationGathererDeps {
  host: {
    peers(): readonly { id: string }[];
    request<T>(peer: string, type: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T>;
  };
  /** `sys.timekeepers` as the state chain has it now. */
  timekeepers(): TimekeeperConfig | undefined;
  /** This node's own attestation of `subject`, or undefined when it is not a listed timekeeper. */
  self(subject: string): Attestation | undefined;
  verify: Verifier;
}

export interface AttestationGathererOptions {
  perPeerMs?: number;
  overallMs?: number;
}

export const PER_PEER_MS = 10_000;
export const OVERALL_MS = 15_000;

/** An answer in the attestation JSON shape, or undefined for anything else. */
function attestationOf(v: unknown): Attestation | undefined {
  try {
    const o = jsonObject(v);
    return {
      public_key: hexField(o, 'public_key', 32),
      timestamp: intField(o, 'timestamp', 'i64'),
      signature: hexField(o, 'signature', 64),
    };
  } catch {
    return undefined;
  }
}

export class AttestationGatherer {
  private readonly d: AttestationGathererDeps;
  private readonly perPeerMs: number;
  private readonly overallMs: number;

  constructor(deps: AttestationGathererDeps, opts: AttestationGathererOptions = {}) {
    this.d = deps;
    this.perPeerMs = opts.perPeerMs ?? PER_PEER_MS;
    this.overallMs = opts.overallMs ?? OVERALL_MS;
  }

  /** The attestations of `leaseHash` (64 hex) gathered now: each valid, by a listed key, at most 20. */
  async gatherAttestations(leaseHash: string): Promise<Attestation[]> {
    const tk = this.d.timekeepers();
    if (tk === undefined) return []; // nobody's signature would count
    const trusted = new Set(tk.keys);
    const kept = new Map<string, Attestation>();
    const keep = (a: Attestation | undefined) => {
      if (a === undefined || kept.size >= MAX_ATTESTATIONS) return;
      if (!trusted.has(a.public_key) || kept.has(a.public_key)) return;
      if (verifyAttestation(leaseHash, a, this.d.verify)) kept.set(a.public_key, a);
    };
    keep(this.d.self(leaseHash));
    const asks = this.d.host.peers().map(async ({ id }) => {
      const answer = await within(
        this.d.host.request(id, ATTEST_REQUEST, { lease_hash: leaseHash }, { timeoutMs: this.perPeerMs }),
        this.perPeerMs,
      ).catch(() => undefined);
      keep(attestationOf(answer));
    });
    await within(Promise.all(asks), this.overallMs).catch(() => {});
    return [...kept.values()];
  }
}

/** `p`, or a rejection once `ms` have passed (the timer never holds the process open). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
