import { LeasingError } from '../../leasing/errors.ts';
import { LeaseRequestError } from '../../leasing/marketplace/lease-requests.ts';
import { LedgerError } from '../../ledger/errors.ts';
import type { LedgerNode } from '../../node.ts';
import { isHex } from '../../protocol/hex.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { errorSchema, paged, type Page, pageQuery } from './common.ts';

/**
 * Providers and operator lease requests (contract: Leases and providers; reference-behavior.md
 * 1.5, 4.9). Providers come from unexpired marketplace ads, with availability from the lease
 * records; a lease request negotiates on the marketplace and answers with the hash of the lease
 * block it submitted (decisions D17).
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
        const all = node.marketplace.providers();
        reply.header('x-total-count', String(all.length));
        return paged(all, req.query);
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
  ];
}
