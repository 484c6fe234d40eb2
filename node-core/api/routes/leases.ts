import { ConsumerError } from '../../leasing/consumer/renewals.ts';
import { LeasingError } from '../../leasing/errors.ts';
import { LeaseRequestError } from '../../leasing/marketplace/lease-requests.ts';
import { OFFER_DEADLINE_MS, OfferRequestError } from '../../leasing/marketplace/marketplace.ts';
import { LedgerError } from '../../ledger/errors.ts';
import type { LedgerNode } from '../../node.ts';
import { isHex } from '../../protocol/hex.ts';
import { decodeMarketplaceMessage, type MarketplaceOffer } from '../../protocol/marketplace.ts';
import { ProtocolError } from '../../protocol/errors.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import {
  leaseAttestationsTellUser,
  leaseHoldTellUser,
  leaseOffersTellUser,
  leaseRenewTellUser,
  leaseRequestTellUser,
} from '../tell-user.ts';
import { errorSchema, hex64, lower, page, type Page, pageQuery } from './common.ts';

/**
 * Providers and operator lease requests (contract: Leases and providers; reference-behavior.md
 * 1.5, 4.9). Providers come from unexpired marketplace ads, with availability from the lease
 * records; a lease request negotiates on the marketplace and answers with the hash of the lease
 * block it submitted (decisions D17).
 *
 * Extensions of this node (not in the reference node): offers for a request signed by the user's
 * own account and timekeeper attestations for the user's own lease blocks (the GUI signs, the node
 * signs nothing), and the renewals and holds of the node account's leases (decisions D7,
 * reference-behavior.md 4.10).
 */

const providerSchema: JsonSchema = {
  type: 'object',
  required: [
    'address',
    'vcpus',
    'memory_mb',
    'disk_gb',
    'active_leases',
    'available_vcpus',
    'available_memory_mb',
    'available_disk_gb',
  ],
  properties: {
    address: { type: 'string' },
    vcpus: { type: 'integer' },
    memory_mb: { type: 'integer' },
    disk_gb: { type: 'integer' },
    active_leases: { type: 'integer', description: 'leases not yet terminal (created or accepted)' },
    available_vcpus: { type: 'integer' },
    available_memory_mb: { type: 'integer' },
    available_disk_gb: { type: 'integer' },
  },
};

const MAX_WAIT_MS = 60_000;

/** A JSON integer of the lossless body (number or bigint), else undefined. */
function intOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}

function bodyOf(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw ApiError.invalidBody();
  return raw as Record<string, unknown>;
}

/** An offer as `POST /lease/offers` answers it: total_cost in digits, the certificate's multiplier. */
function offerJson(node: LedgerNode, o: MarketplaceOffer): Record<string, unknown> {
  return {
    provider: o.provider,
    provider_pub_key: o.provider_pub_key,
    request_id: o.request_id,
    vcpus: o.vcpus,
    memory_mb: o.memory_mb,
    disk_gb: o.disk_gb,
    duration: o.duration,
    total_cost: o.total_cost.toString(),
    certificate_hash: o.certificate_hash,
    timestamp: o.timestamp,
    signature: o.signature,
    price_multiplier_milli: node.certificates.get(o.certificate_hash)?.price_multiplier_milli ?? null,
  };
}

/** The consumer side's refusals in the node's error form. */
function consumerFailure(e: unknown): never {
  if (e instanceof ConsumerError) {
    if (e.code === 'lease_not_found') throw ApiError.notFound(e.message);
    if (e.code === 'not_consumer') throw new ApiError('forbidden', e.message);
    if (e.retryable) throw new ApiError('unavailable', e.message, { retryable: true });
    throw ApiError.badRequest(e.message);
  }
  if (e instanceof LeasingError) throw ApiError.badRequest(e.message);
  if (e instanceof LedgerError) throw ApiError.blockRejected(e.reason, e.retryable);
  throw e;
}

/** The `hold` field `GET /leases/{hash}` adds when the node account holds (or held) the lease. */
export function leaseHoldJson(node: LedgerNode, leaseHash: string): Record<string, unknown> {
  const h = node.leaseHolds?.view(leaseHash);
  return h ? { hold: h } : {};
}

const offerSchema: JsonSchema = {
  type: 'object',
  required: [
    'provider',
    'provider_pub_key',
    'request_id',
    'vcpus',
    'memory_mb',
    'disk_gb',
    'duration',
    'total_cost',
    'certificate_hash',
    'timestamp',
    'signature',
    'price_multiplier_milli',
  ],
  properties: {
    provider: { type: 'string' },
    provider_pub_key: { type: 'string' },
    request_id: { type: 'string' },
    vcpus: { type: 'integer' },
    memory_mb: { type: 'integer' },
    disk_gb: { type: 'integer' },
    duration: { type: 'integer' },
    total_cost: { type: 'string', description: 'micro-XUSD, digits' },
    certificate_hash: { type: 'string' },
    timestamp: { type: 'integer', description: 'Unix ns' },
    signature: { type: 'string' },
    price_multiplier_milli: { type: 'integer' },
  },
};

const leaseHashParam: JsonSchema = { type: 'object', properties: { hash: hex64 }, required: ['hash'] };

export function leaseRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/providers',
      description:
        'providers with an advertisement of the last 15 minutes (and this node when it provides), by address, with what their leases leave free; paged',
      auth: 'none',
      schema: {
        querystring: pageQuery,
        response: { 200: { type: 'array', items: providerSchema } },
      },
      async handler(req, reply) {
        const { offset, limit } = page(req.query);
        const { total, providers } = node.marketplace.providerPage(offset, limit);
        reply.header('x-total-count', String(total));
        return providers;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/lease/request',
      description: 'lease compute for the operator: the node finds a provider and signs the lease block',
      auth: 'admin',
      schema: {
        body: {
          type: 'object',
          required: ['duration', 'access_pub_key'],
          properties: {
            vcpus: { type: 'integer', minimum: 0 },
            memory_mb: { type: 'integer', minimum: 0 },
            disk_gb: { type: 'integer', minimum: 0 },
            duration: { type: 'integer', minimum: 60, maximum: 31_536_000 },
            access_pub_key: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          },
        },
        response: {
          201: {
            type: 'object',
            required: ['lease_hash'],
            properties: { lease_hash: { type: 'string', description: 'hash of the lease block created' } },
          },
          400: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: leaseRequestTellUser(node.ledger),
      async handler(req, reply) {
        const b = req.body as Record<string, unknown> | undefined;
        if (typeof b !== 'object' || b === null || Array.isArray(b))
          throw ApiError.badRequest('invalid request body');
        const dim = (k: string) => {
          const v = b[k] ?? 0;
          if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
            throw ApiError.badRequest(`${k} must be a non-negative integer`);
          return v;
        };
        const [vcpus, memory, disk] = [dim('vcpus'), dim('memory_mb'), dim('disk_gb')];
        if (vcpus + memory + disk === 0)
          throw ApiError.badRequest('at least one of vcpus, memory_mb and disk_gb must be non-zero');
        if (b.duration === undefined) throw ApiError.badRequest('duration is required');
        const duration = dim('duration');
        if (duration < 60 || duration > 31_536_000)
          throw ApiError.badRequest('duration must be 60 to 31536000 seconds');
        if (!isHex(b.access_pub_key, 32))
          throw ApiError.badRequest('access_pub_key must be a 64-character hex ed25519 public key');
        const want = {
          vcpus: BigInt(vcpus),
          memory_mb: BigInt(memory),
          disk_gb: BigInt(disk),
          duration: BigInt(duration),
        };
        try {
          const lease = await node.leaseRequests.request(want, b.access_pub_key);
          reply.code(201);
          return { lease_hash: lease.hash };
        } catch (e) {
          if (e instanceof LeaseRequestError || e instanceof LeasingError)
            throw ApiError.badRequest(e.message);
          if (e instanceof LedgerError) throw ApiError.blockRejected(e.reason, e.retryable);
          throw e;
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/lease/offers',
      description:
        "offers for a lease request signed by the user's own account, cheapest first (an extension of this node, not in the reference node: the node publishes the request and signs nothing)",
      auth: 'none',
      schema: {
        body: {
          type: 'object',
          required: ['request'],
          properties: {
            request: {
              type: 'object',
              description:
                'a marketplace request (reference-behavior.md 4.9) signed by the consumer: consumer, consumer_pub_key, request_id, vcpus, memory_mb, disk_gb, duration, timestamp, signature',
            },
            wait_ms: {
              type: 'integer',
              minimum: 1,
              maximum: MAX_WAIT_MS,
              description: `longest wait for offers (default ${OFFER_DEADLINE_MS})`,
            },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['request_id', 'offers'],
            properties: { request_id: { type: 'string' }, offers: { type: 'array', items: offerSchema } },
          },
          400: errorSchema,
        },
      },
      tellUser: leaseOffersTellUser,
      async handler(req) {
        const b = bodyOf(req.body);
        let wait: number | undefined;
        if (b.wait_ms !== undefined) {
          const w = intOf(b.wait_ms);
          if (w === undefined || w < 1n || w > BigInt(MAX_WAIT_MS))
            throw ApiError.badRequest(`wait_ms must be an integer from 1 to ${MAX_WAIT_MS}`);
          wait = Number(w);
        }
        if (b.request === undefined) throw ApiError.badRequest('request is required');
        let request;
        try {
          request = decodeMarketplaceMessage('request', b.request);
        } catch (e) {
          if (e instanceof ProtocolError) throw ApiError.badRequest(`invalid request: ${e.message}`);
          throw e;
        }
        try {
          const offers = await node.marketplace.offersFor(request, {
            deadlineMs: wait ?? node.opts.marketplace?.offerDeadlineMs,
          });
          return { request_id: request.request_id, offers: offers.map((o) => offerJson(node, o)) };
        } catch (e) {
          if (e instanceof OfferRequestError) throw ApiError.badRequest(e.message);
          throw e;
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/lease/attestations',
      description:
        "timekeeper attestations of a lease, enough for the threshold, with their lower median, for the user's own lease_renew and lease_force_settle blocks (an extension of this node, not in the reference node)",
      auth: 'none',
      schema: {
        body: { type: 'object', required: ['lease_hash'], properties: { lease_hash: hex64 } },
        response: {
          200: {
            type: 'object',
            required: ['attestations', 'median'],
            properties: {
              attestations: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['public_key', 'timestamp', 'signature'],
                  properties: {
                    public_key: { type: 'string' },
                    timestamp: { type: 'integer' },
                    signature: { type: 'string' },
                  },
                },
              },
              median: { type: 'integer', description: 'their lower median, Unix ns' },
            },
          },
          400: errorSchema,
          404: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: leaseAttestationsTellUser,
      async handler(req) {
        const b = bodyOf(req.body);
        if (!isHex(b.lease_hash, 32)) throw ApiError.badRequest('lease_hash must be 64 hex characters');
        try {
          return await node.leaseRenewals.attestations(lower(b.lease_hash));
        } catch (e) {
          consumerFailure(e);
        }
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'POST',
      path: '/lease/:hash/renew',
      description:
        "renew a lease of the node's account: the node signs a lease_renew at the provider's current price (lease_renew is an extension of this node, decisions D7)",
      auth: 'admin',
      schema: {
        params: leaseHashParam,
        body: {
          type: 'object',
          required: ['duration'],
          properties: {
            duration: { type: 'integer', minimum: 60, maximum: 31_536_000, description: 'seconds added' },
          },
        },
        response: {
          201: {
            type: 'object',
            required: ['renew_hash', 'cost', 'expires_at'],
            properties: {
              renew_hash: { type: 'string', description: 'hash of the lease_renew block submitted' },
              cost: { type: 'string', description: 'micro-XUSD escrowed, digits' },
              expires_at: { type: 'integer', description: 'the new expiry, Unix ns' },
            },
          },
          400: errorSchema,
          403: errorSchema,
          404: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: leaseRenewTellUser,
      async handler(req, reply) {
        const b = bodyOf(req.body);
        const duration = intOf(b.duration);
        if (duration === undefined || duration < 60n || duration > 31_536_000n)
          throw ApiError.badRequest('duration must be an integer from 60 to 31536000 seconds');
        try {
          const r = await node.leaseRenewals.renew(lower(req.params.hash), duration);
          reply.code(201);
          return { renew_hash: r.renew_hash, cost: r.cost.toString(), expires_at: r.expires_at };
        } catch (e) {
          consumerFailure(e);
        }
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'POST',
      path: '/lease/:hash/hold',
      description:
        "keep a lease of the node's account alive: renew it in segments shortly before expiry while the node runs, or stop (an extension of this node)",
      auth: 'admin',
      schema: {
        params: leaseHashParam,
        body: {
          type: 'object',
          required: ['enabled'],
          properties: {
            enabled: { type: 'boolean' },
            segment_secs: { type: 'integer', minimum: 1, maximum: 31_536_000, description: 'default 60' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['enabled', 'segment_secs', 'next_renewal_at'],
            properties: {
              enabled: { type: 'boolean' },
              segment_secs: { type: 'integer' },
              next_renewal_at: { type: ['integer', 'null'], description: 'Unix ns; null when none is due' },
              warning: { type: 'string', description: 'low funds, or why the hold stopped' },
            },
          },
          400: errorSchema,
          403: errorSchema,
          404: errorSchema,
        },
      },
      tellUser: leaseHoldTellUser,
      async handler(req) {
        const b = bodyOf(req.body);
        if (typeof b.enabled !== 'boolean') throw ApiError.badRequest('enabled must be true or false');
        let segment: bigint | undefined;
        if (b.segment_secs !== undefined) {
          segment = intOf(b.segment_secs);
          if (segment === undefined || segment < 1n || segment > 31_536_000n)
            throw ApiError.badRequest('segment_secs must be an integer from 1 to 31536000');
        }
        const holds = node.leaseHolds;
        if (!holds) throw ApiError.unavailable('lease holds are not running');
        try {
          return await holds.set(lower(req.params.hash), b.enabled, segment);
        } catch (e) {
          consumerFailure(e);
        }
      },
    }),
  ];
}
