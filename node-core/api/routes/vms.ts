import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import { LeaseAccessError, type LeaseProof } from '../../leasing/provider/vm-access.ts';
import { ProviderError } from '../../leasing/provider/provider.ts';
import type { VmRecord } from '../../leasing/provider/vm-book.ts';
import type { LedgerNode } from '../../node.ts';
import { bridge } from '../../net/tunnel.ts';
import { VmError } from '../../vm/driver.ts';
import { ApiError, type ApiErrorCode } from '../errors.ts';
import { type ApiRequest, defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { vmExecTellUser } from '../tell-user.ts';
import { errorSchema, hex64 } from './common.ts';

const leaseParam: JsonSchema = {
  type: 'object',
  required: ['lease'],
  properties: { lease: { ...hex64, description: 'lease hash' } },
};

/**
 * VMs and the tunnel (contract "VMs and tunnel"; reference-behavior.md 1.6; decisions D12, D16,
 * D17). `/vms` lists this provider's VMs (`[]` on a node that is not one); exec and the tunnel need
 * the lease signature, in either of D12's forms.
 */

const resources: JsonSchema = {
  type: 'object',
  properties: { vcpus: { type: 'integer' }, memory_mb: { type: 'integer' }, disk_gb: { type: 'integer' } },
};

const vmListSchema: JsonSchema = {
  type: 'object',
  required: ['lease', 'status', 'vcpus', 'memory_mb', 'disk_gb', 'ip', 'created_at'],
  properties: {
    lease: { type: 'string', description: 'lease hash' },
    lease_hash: { type: 'string', description: 'the same, under the lease-oriented name' },
    status: { type: 'string', enum: ['creating', 'running', 'stopped', 'error'] },
    vcpus: { type: 'integer' },
    memory_mb: { type: 'integer' },
    disk_gb: { type: 'integer' },
    ip: { type: 'string', description: 'internal IP of the VM' },
    created_at: { type: 'integer', description: 'Unix nanoseconds' },
    driver: { type: 'string', enum: ['qemu', 'sandbox'] },
    vm_boundary: { type: 'boolean', description: 'false: the sandbox driver, no VM boundary' },
    error: { type: 'string' },
  },
};

const vmLeaseSchema: JsonSchema = {
  type: 'object',
  required: ['lease_hash', 'status', 'resources', 'created_at'],
  properties: {
    lease_hash: { type: 'string' },
    status: { type: 'string', enum: ['creating', 'running', 'stopped', 'error'] },
    resources,
    created_at: { type: 'integer', description: 'Unix nanoseconds' },
    ip: { type: 'string' },
    driver: { type: 'string' },
    vm_boundary: { type: 'boolean' },
    error: { type: 'string' },
  },
};

const ACCESS_STATUS: Record<LeaseAccessError['code'], ApiErrorCode> = {
  invalid_hash: 'bad_request',
  lease_not_found: 'not_found',
  lease_not_active: 'lease_not_active',
  no_access_key: 'signature_failed',
  missing_signature: 'missing_signature',
  signature_failed: 'signature_failed',
  signature_expired: 'signature_failed',
  tunnel_error: 'tunnel_error',
};

function accessError(e: unknown): unknown {
  if (e instanceof LeaseAccessError) return new ApiError(ACCESS_STATUS[e.code], e.message);
  return e;
}

function proofOf(req: ApiRequest): LeaseProof {
  const h = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return { signature: h('x-signature'), timestamp: h('x-timestamp') };
}

export function vmListJson(r: VmRecord, vmBoundary: boolean) {
  return {
    lease: r.lease,
    lease_hash: r.lease,
    status: r.status,
    vcpus: r.vcpus,
    memory_mb: r.memory_mb,
    disk_gb: r.disk_gb,
    ip: r.handle?.ip ?? '',
    created_at: BigInt(r.created_at),
    driver: r.driver,
    vm_boundary: vmBoundary,
    ...(r.error !== undefined && r.status === 'error' ? { error: r.error } : {}),
  };
}

export function vmLeaseJson(r: VmRecord, vmBoundary: boolean) {
  return {
    lease_hash: r.lease,
    status: r.status,
    resources: { vcpus: r.vcpus, memory_mb: r.memory_mb, disk_gb: r.disk_gb },
    created_at: BigInt(r.created_at),
    ip: r.handle?.ip ?? '',
    driver: r.driver,
    vm_boundary: vmBoundary,
    ...(r.error !== undefined && r.status === 'error' ? { error: r.error } : {}),
  };
}

/**
 * Takes the request's socket from the HTTP server: the parser stops reading it and no server
 * time-out applies any more, so raw bytes can flow both ways for as long as the tunnel lives.
 */
function takeSocket(req: ApiRequest, reply: FastifyReply): Socket {
  reply.hijack();
  const socket = req.raw.socket;
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  socket.removeAllListeners('timeout');
  socket.setTimeout(0);
  return socket;
}

export function vmRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/vms',
      description:
        "this provider's VMs, newest first (an empty array on a node that is not a provider); `vm_boundary: false` marks the sandbox driver",
      auth: 'none',
      schema: { response: { 200: { type: 'array', items: vmListSchema } } },
      async handler() {
        const p = node.provider;
        if (!p) return [];
        return p.vms().map((r) => vmListJson(r, p.report.vmBoundary));
      },
    }),
    defineRoute<{ params: { lease: string } }>({
      method: 'GET',
      path: '/vms/:lease',
      description: 'the VM of a lease, here or (relayed) at its provider',
      auth: 'none',
      schema: { params: leaseParam, response: { 200: vmLeaseSchema, 404: errorSchema } },
      async handler(req) {
        const lease = req.params.lease.toLowerCase();
        const p = node.provider;
        const local = p?.vm(lease);
        if (p && local) return vmLeaseJson(local, p.report.vmBoundary);
        const remote = await node.remoteVmStatus(lease);
        if (remote === undefined) throw new ApiError('vm_not_found');
        return remote;
      },
    }),
    defineRoute<{ params: { lease: string } }>({
      method: 'POST',
      path: '/vms/:lease/exec',
      description:
        "runs a command in the lease's VM on this provider and waits for it (lease signature, decisions D17; 408 after 30 s; each output capped at 1 MiB)",
      auth: 'none',
      schema: {
        params: leaseParam,
        body: {
          type: 'object',
          required: ['command'],
          properties: { command: { type: 'string', description: 'run with sh -c as root' } },
        },
        response: {
          200: {
            type: 'object',
            required: ['exit_code', 'stdout', 'stderr'],
            properties: {
              exit_code: { type: 'integer' },
              stdout: { type: 'string' },
              stderr: { type: 'string' },
              truncated: { type: 'boolean', description: 'an output was cut at 1 MiB' },
            },
          },
          400: errorSchema,
          401: errorSchema,
          403: errorSchema,
          404: errorSchema,
          408: errorSchema,
          410: errorSchema,
          500: errorSchema,
        },
      },
      tellUser: vmExecTellUser,
      async handler(req) {
        const b = req.body as Record<string, unknown> | undefined;
        if (typeof b !== 'object' || b === null || Array.isArray(b)) throw ApiError.invalidBody();
        if (typeof b.command !== 'string' || b.command === '') throw ApiError.badRequest('missing command');
        let lease;
        try {
          lease = node.vmAccess.authorize(req.params.lease, proofOf(req));
        } catch (e) {
          throw accessError(e);
        }
        const p = node.provider;
        if (!p || !p.vm(lease.lease_hash)) throw new ApiError('vm_not_found');
        try {
          return await p.exec(lease.lease_hash, b.command);
        } catch (e) {
          if (e instanceof ProviderError) throw new ApiError('vm_not_found', e.message);
          if (e instanceof VmError && e.code === 'exec_timeout') throw new ApiError('exec_timeout');
          if (e instanceof VmError) throw new ApiError('exec_failed', `execution error: ${e.message}`);
          throw e;
        }
      },
    }),
    defineRoute<{ params: { lease: string } }>({
      method: 'POST',
      path: '/tunnel/:lease/tcp',
      noBody: true,
      // A hijacked raw TCP stream: no JSON answer to summarise.
      tellUser: false,
      description:
        "upgrades the connection to a raw TCP stream to the lease's VM SSH server, here or through its provider (lease signature, decisions D12)",
      auth: 'none',
      schema: {
        params: { type: 'object', properties: { lease: { type: 'string' } } },
        response: {
          200: { description: 'raw bytes both ways after `HTTP/1.1 200 OK`' },
          400: errorSchema,
          401: errorSchema,
          403: errorSchema,
          404: errorSchema,
          410: errorSchema,
          502: errorSchema,
        },
      },
      async handler(req, reply) {
        let vm;
        try {
          const lease = node.vmAccess.authorize(req.params.lease, proofOf(req));
          vm = await node.vmAccess.open(lease);
        } catch (e) {
          throw accessError(e);
        }
        const socket = takeSocket(req, reply);
        socket.write(
          'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n',
        );
        bridge(socket, vm);
        return undefined;
      },
    }),
  ];
}
