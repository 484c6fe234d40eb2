import type { LedgerNode } from '../../node.ts';
import { isHex } from '../../protocol/hex.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type RouteDef } from '../route-table.ts';
import { errorSchema } from './common.ts';

/**
 * Operator lease requests (contract: Leases and providers, admin auth). The node validates the
 * request; it then needs a provider, and none can exist while this node accepts no lease blocks.
 */
export function leaseRoutes(node: LedgerNode): RouteDef[] {
  void node;
  return [
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
          200: { type: 'object', properties: { lease_hash: { type: 'string' } } },
          400: errorSchema,
        },
      },
      async handler(req) {
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
        throw ApiError.badRequest('no providers: this node does not support leases yet');
      },
    }),
  ];
}
