import type { LedgerNode } from '../../node.ts';
import { certificateToJson } from '../../protocol/certificate.ts';
import { hexToBytes } from '../../protocol/hex.ts';
import { attestationSubject } from '../../leasing/attestation-subject.ts';
import { LeasingError } from '../../leasing/errors.ts';
import { localAttestation } from '../../leasing/local-attestation.ts';
import { LEASE_STATES, type LeaseRecord, type LeaseRenewal, type LeaseState } from '../../leasing/records.ts';
import { leaseTotalEmission } from '../../leasing/rules/settle.ts';
import { ApiError } from '../errors.ts';
import { leaseHoldJson } from './leases.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { attestationRequestTellUser } from '../tell-user.ts';
import { errorSchema, hex64, lower, page, type Page, pageQuery } from './common.ts';

/**
 * The contract's Leases and Performance certificates tables, and the timekeeper's attestation
 * (reference-behavior.md 1.5, 1.8). Leases are read from the ledger's lease records; the node
 * signs attestations only as a listed timekeeper, so its signature always counts.
 */

/**
 * Renewals a lease's answer carries, the latest: a lease held by a renewal a minute has 10,080 after a
 * week, and its answer listed them all (2 MB, and a page of `GET /leases` one such answer per
 * lease). The rest are paged by `GET /leases/{hash}/renewals`.
 */
export const INLINE_RENEWALS = 20;

/** A lease's latest INLINE_RENEWALS renewals, oldest first. */
function latestRenewals(node: LedgerNode, r: LeaseRecord): LeaseRenewal[] {
  return node.ledger.leases.renewalsOf(
    r.lease_hash,
    Math.max(0, r.renewal_count - INLINE_RENEWALS),
    INLINE_RENEWALS,
  );
}

function renewalJson(x: LeaseRenewal): Record<string, unknown> {
  return { ...x, cost: x.cost.toString() };
}

/**
 * A lease in the contract's Lease shape, plus `state`, `renewal_count` and `renewals` (the latest
 * renewals, oldest first); amounts as strings (D3).
 */
export function leaseJson(r: LeaseRecord, renewals: LeaseRenewal[]): Record<string, unknown> {
  return {
    lease_hash: r.lease_hash,
    state: r.state,
    consumer: r.consumer,
    provider: r.provider,
    vcpus: r.vcpus,
    memory_mb: r.memory_mb,
    disk_gb: r.disk_gb,
    duration: r.duration,
    ...(r.access_pub_key ? { access_pub_key: r.access_pub_key } : {}),
    cost: r.cost.toString(),
    stake: r.stake.toString(),
    start_time: r.start_time,
    ...(r.certificate_hash ? { certificate_hash: r.certificate_hash } : {}),
    settled: r.settled,
    ...(r.locked_r !== undefined
      ? {
          locked_r: r.locked_r,
          locked_payout_cap: r.locked_payout_cap,
          locked_twap_milli: r.locked_twap_milli,
        }
      : {}),
    ...(r.accept_hash ? { accept_hash: r.accept_hash } : {}),
    renewal_count: r.renewal_count,
    renewals: renewals.map(renewalJson),
    created_at: r.created_at,
    // What the provider's settle was paid (an extension): the XE emission at the locked parameters.
    ...(r.state === 'settled' ? { emission: leaseTotalEmission(r).toString() } : {}),
  };
}

const leaseSchema: JsonSchema = {
  type: 'object',
  required: ['lease_hash', 'state', 'consumer', 'provider', 'cost', 'stake', 'settled'],
  properties: {
    lease_hash: { type: 'string' },
    state: { type: 'string', enum: [...LEASE_STATES] },
    consumer: { type: 'string' },
    provider: { type: 'string' },
    vcpus: { type: 'integer' },
    memory_mb: { type: 'integer' },
    disk_gb: { type: 'integer' },
    duration: { type: 'integer', description: 'seconds, renewals included' },
    access_pub_key: { type: 'string' },
    cost: { type: 'string', description: 'XUSD micro-units escrowed by the consumer' },
    stake: { type: 'string', description: 'XUSD micro-units staked by the provider' },
    start_time: { type: 'integer', description: 'attested start, Unix ns (0 until accepted)' },
    certificate_hash: { type: 'string' },
    settled: { type: 'boolean' },
    renewal_count: {
      type: 'integer',
      description: 'lease_renew extensions in all (an extension of this node)',
    },
    renewals: {
      type: 'array',
      description: `the latest ${INLINE_RENEWALS} lease_renew extensions, oldest first (an extension of this node; all: GET /leases/{hash}/renewals)`,
    },
    emission: {
      type: 'string',
      description: 'micro-XE the settle paid the provider (settled leases; an extension of this node)',
    },
  },
};

const renewalSchema: JsonSchema = {
  type: 'object',
  required: ['renew_hash', 'duration', 'cost', 'start_time'],
  properties: {
    renew_hash: { type: 'string', description: 'hash of the lease_renew block' },
    duration: { type: 'integer', description: 'seconds added' },
    cost: { type: 'string', description: 'XUSD micro-units it escrowed' },
    start_time: { type: 'integer', description: 'its attested time, Unix ns' },
    locked_r: { type: 'integer' },
    locked_payout_cap: { type: 'integer' },
    locked_twap_milli: { type: 'integer' },
  },
};

const certificateSchema: JsonSchema = {
  type: 'object',
  description: 'performance certificate (protocol.md 8.6)',
  required: ['provider', 'hash', 'expires_at', 'price_multiplier_milli', 'signature'],
};

function hashParam(name: string): JsonSchema {
  return { type: 'object', properties: { [name]: hex64 }, required: [name] };
}

export function leasingRoutes(node: LedgerNode): RouteDef[] {
  const certificate = (hash: string) => {
    const c = node.certificates.get(lower(hash));
    if (!c) throw ApiError.notFound('no certificate with that hash');
    return c;
  };
  return [
    defineRoute<{
      query: Page & { consumer?: string; provider?: string; state?: string };
    }>({
      method: 'GET',
      path: '/leases',
      description: 'leases, by lease hash; filter by consumer, provider and state; paged',
      auth: 'none',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            ...(pageQuery.properties as Record<string, JsonSchema>),
            consumer: hex64,
            provider: hex64,
            state: { type: 'string' },
          },
        },
        response: { 200: { type: 'array', items: leaseSchema } },
      },
      async handler(req, reply) {
        const q = req.query;
        if (q.state !== undefined && !(LEASE_STATES as readonly string[]).includes(q.state))
          throw ApiError.badRequest(`invalid state: must be one of ${LEASE_STATES.join(', ')}`);
        const { offset, limit } = page(q);
        const { total, leases } = node.ledger.leases.list(
          {
            consumer: q.consumer && lower(q.consumer),
            provider: q.provider && lower(q.provider),
            state: q.state as LeaseState | undefined,
          },
          offset,
          limit,
        );
        reply.header('x-total-count', String(total));
        return leases.map((r) => leaseJson(r, latestRenewals(node, r)));
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'GET',
      path: '/leases/:hash',
      description: 'a lease by the hash of its lease block',
      auth: 'none',
      schema: { params: hashParam('hash'), response: { 200: leaseSchema, 404: errorSchema } },
      async handler(req) {
        const r = node.ledger.leases.get(lower(req.params.hash));
        if (!r) throw ApiError.notFound('lease not found');
        // `hold` only when the node account holds (or held) it: POST /lease/{hash}/hold.
        return {
          ...leaseJson(r, latestRenewals(node, r)),
          ...leaseHoldJson(node, r.lease_hash),
        };
      },
    }),
    defineRoute<{ params: { hash: string }; query: Page }>({
      method: 'GET',
      path: '/leases/:hash/renewals',
      description: "a lease's renewals (lease_renew extensions), oldest first; paged, X-Total-Count",
      auth: 'none',
      schema: {
        params: hashParam('hash'),
        querystring: pageQuery,
        response: { 200: { type: 'array', items: renewalSchema }, 404: errorSchema },
      },
      async handler(req, reply) {
        const r = node.ledger.leases.get(lower(req.params.hash));
        if (!r) throw ApiError.notFound('lease not found');
        const { offset, limit } = page(req.query);
        reply.header('x-total-count', String(r.renewal_count));
        return node.ledger.leases.renewalsOf(r.lease_hash, offset, limit).map(renewalJson);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/attestation/request',
      description: 'a timekeeper attestation of now for a live lease or a registered provider',
      auth: 'none',
      schema: {
        body: {
          type: 'object',
          required: ['lease_hash'],
          properties: { lease_hash: { type: 'string', description: 'lease hash, or a provider address' } },
        },
        response: {
          200: {
            type: 'object',
            required: ['public_key', 'timestamp', 'signature'],
            properties: {
              public_key: { type: 'string' },
              timestamp: { type: 'integer' },
              signature: { type: 'string' },
            },
          },
          400: errorSchema,
          404: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: attestationRequestTellUser,
      async handler(req) {
        const b = req.body as Record<string, unknown>;
        if (typeof b !== 'object' || b === null || Array.isArray(b)) throw ApiError.invalidBody();
        const id = subjectOf(node, b.lease_hash);
        // Only a listed timekeeper's signature counts: any other would be a promise it cannot keep.
        if (!node.statechain.timekeepers?.keys.includes(node.nodeKey.pub_key))
          throw ApiError.unavailable('timekeeper unavailable: this node is not a listed timekeeper');
        return localAttestation(id, node.now(), {
          seed: hexToBytes(node.nodeKey.seed_hex),
          pubKey: node.nodeKey.pub_key,
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/certificate',
      description: "this node's own performance certificate",
      auth: 'none',
      schema: { response: { 200: certificateSchema, 404: errorSchema } },
      async handler() {
        const own = node.certificates.newestValid(node.nodeKey.address, node.now());
        if (!own) throw ApiError.notFound('no performance certificate');
        return certificateToJson(own);
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'GET',
      path: '/certificate/hash/:hash',
      description: 'a retained performance certificate by hash, expired ones included',
      auth: 'none',
      schema: { params: hashParam('hash'), response: { 200: certificateSchema, 404: errorSchema } },
      async handler(req) {
        return certificateToJson(certificate(req.params.hash));
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'GET',
      path: '/certificate/nonces/:hash',
      description: "a certificate's CPU witness: its seed, workload and work proof",
      auth: 'none',
      schema: { params: hashParam('hash'), response: { 404: errorSchema } },
      async handler(req) {
        const c = certificate(req.params.hash);
        return {
          hash: c.hash,
          seed: c.seed,
          workload_version: c.workload_version,
          iterations: c.iterations,
          work_proof: c.work_proof,
        };
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'GET',
      path: '/certificate/attestations/:hash',
      description: "a certificate's start and end attestations: Merkle roots and median times",
      auth: 'none',
      schema: { params: hashParam('hash'), response: { 404: errorSchema } },
      async handler(req) {
        const c = certificate(req.params.hash);
        return {
          hash: c.hash,
          start_attestation_root: c.start_attestation_root,
          end_attestation_root: c.end_attestation_root,
          start_median: c.start_median,
          end_median: c.end_median,
        };
      },
    }),
    defineRoute<{ params: { provider: string } }>({
      method: 'GET',
      path: '/certificate/:provider',
      description: "a provider's newest unexpired performance certificate",
      auth: 'none',
      schema: { params: hashParam('provider'), response: { 200: certificateSchema, 404: errorSchema } },
      async handler(req) {
        const c = node.certificates.newestValid(lower(req.params.provider), node.now());
        if (!c) throw ApiError.notFound('no certificate for provider');
        return certificateToJson(c);
      },
    }),
  ];
}

/** The identifier a request asks to attest (leasing/attestation-subject.ts), refusals as API errors. */
function subjectOf(node: LedgerNode, raw: unknown): string {
  try {
    return attestationSubject(raw, node.attestationSubjects);
  } catch (e) {
    if (!(e instanceof LeasingError)) throw e;
    if (e.code === 'subject_unknown') throw ApiError.notFound(e.message);
    throw ApiError.badRequest(e.message);
  }
}
