import type { Attestation } from '../protocol/block.ts';
import type { MarketplaceRequest } from '../protocol/marketplace.ts';
import { stringifyJson } from '../protocol/json.ts';
import type { LedgerClient } from './client.ts';
import { apiErrorOf } from './errors.ts';

/**
 * Typed reads and requests of the leasing routes, isomorphic (the GUI and scripts): providers, leases,
 * certificates, offers for a request signed by the user, timekeeper attestations, this node's VMs and
 * its provider status. Amounts and nanosecond times come out as bigint whatever the wire held (digits
 * or a JSON integer); fields a node does not send yet come out undefined, never guessed.
 */

/** A JSON integer or digit string as bigint; undefined for anything else. */
export function bigOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^[0-9]{1,20}$/.test(v)) return BigInt(v);
  return undefined;
}

const big = (v: unknown): bigint => bigOf(v) ?? 0n;
const num = (v: unknown): number => Number(bigOf(v) ?? 0n);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export interface ProviderInfo {
  address: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  active_leases: number;
  available_vcpus: bigint;
  available_memory_mb: bigint;
  available_disk_gb: bigint;
}

export type LeaseState = 'created' | 'accepted' | 'settled' | 'cancelled' | 'force_settled' | string;

export interface LeaseRenewal {
  renew_hash: string;
  duration: bigint;
  cost: bigint;
  start_time: bigint;
}

export interface LeaseInfo {
  lease_hash: string;
  state: LeaseState;
  consumer: string;
  provider: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** Seconds, renewals included. */
  duration: bigint;
  access_pub_key?: string;
  cost: bigint;
  stake: bigint;
  /** Attested start, Unix ns; 0 until accepted. */
  start_time: bigint;
  certificate_hash?: string;
  settled: boolean;
  accept_hash?: string;
  /** Renewals in all. */
  renewal_count: number;
  /** The latest renewals, oldest first (all of them: LeasingClient.renewals). */
  renewals: LeaseRenewal[];
  created_at: bigint;
  /** micro-XE the provider's settle was paid (settled leases only). */
  emission?: bigint;
}

function parseRenewal(raw: unknown): LeaseRenewal {
  const x = obj(raw);
  return {
    renew_hash: str(x.renew_hash),
    duration: big(x.duration),
    cost: big(x.cost),
    start_time: big(x.start_time),
  };
}

export function parseLease(raw: unknown): LeaseInfo {
  const o = obj(raw);
  const renewals = (Array.isArray(o.renewals) ? o.renewals : []).map(parseRenewal);
  return {
    lease_hash: str(o.lease_hash),
    state: str(o.state),
    consumer: str(o.consumer),
    provider: str(o.provider),
    vcpus: big(o.vcpus),
    memory_mb: big(o.memory_mb),
    disk_gb: big(o.disk_gb),
    duration: big(o.duration),
    ...(typeof o.access_pub_key === 'string' ? { access_pub_key: o.access_pub_key } : {}),
    cost: big(o.cost),
    stake: big(o.stake),
    start_time: big(o.start_time),
    ...(typeof o.certificate_hash === 'string' ? { certificate_hash: o.certificate_hash } : {}),
    settled: o.settled === true,
    ...(typeof o.accept_hash === 'string' ? { accept_hash: o.accept_hash } : {}),
    // A node from before the count listed every renewal.
    renewal_count: o.renewal_count !== undefined ? num(o.renewal_count) : renewals.length,
    renewals,
    created_at: big(o.created_at),
    ...(o.emission !== undefined ? { emission: big(o.emission) } : {}),
  };
}

export interface CertificateInfo {
  provider: string;
  hash: string;
  expires_at: bigint;
  price_multiplier_milli: bigint;
}

export interface LeaseOffer {
  provider: string;
  provider_pub_key: string;
  request_id: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  total_cost: bigint;
  certificate_hash: string;
  /** The offer's certificate multiplier, when the node knows that certificate. */
  price_multiplier_milli?: bigint;
  timestamp: bigint;
  signature: string;
}

export interface GatheredAttestations {
  attestations: Attestation[];
  /** Their lower median, Unix ns: the time a block carrying them is attested at. */
  median: bigint;
}

export interface VmInfo {
  lease: string;
  status: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  ip: string;
  created_at: bigint;
  driver?: string;
  /** false: the sandbox driver (no VM boundary). */
  vm_boundary?: boolean;
  error?: string;
}

export interface LeaseTimingInfo {
  min_duration_secs: bigint;
  settle_grace_ns: bigint;
  force_settle_gap_ns: bigint;
  escrow_expiry_ns: bigint;
  max_attestation_skew_ns: bigint;
}

export interface ProviderStatus {
  enabled: boolean;
  driver?: string;
  vm_boundary?: boolean;
  detail?: string;
  capacity?: { vcpus: bigint; memory_mb: bigint; disk_gb: bigint };
}

/** The leasing parts of `GET /node`. */
export interface NodeLeasing {
  account: string;
  lease_timing?: LeaseTimingInfo;
  certificate: { valid: boolean; hash?: string; expires_at?: bigint };
  benchmark: { state: string; progress: number; error?: string };
  /** Undefined when the node says nothing of providing (an older node): not a provider. */
  provider?: ProviderStatus;
}

export function parseNodeLeasing(raw: Record<string, unknown>): NodeLeasing {
  const t = raw.lease_timing === undefined ? undefined : obj(raw.lease_timing);
  const c = obj(raw.certificate);
  const b = obj(raw.benchmark);
  const p = raw.provider === undefined || raw.provider === null ? undefined : obj(raw.provider);
  const cap = p && p.capacity !== undefined ? obj(p.capacity) : undefined;
  return {
    account: str(raw.account) || str(raw.address),
    ...(t
      ? {
          lease_timing: {
            min_duration_secs: big(t.min_duration_secs),
            settle_grace_ns: big(t.settle_grace_ns),
            force_settle_gap_ns: big(t.force_settle_gap_ns),
            escrow_expiry_ns: big(t.escrow_expiry_ns),
            max_attestation_skew_ns: big(t.max_attestation_skew_ns),
          },
        }
      : {}),
    certificate: {
      valid: c.valid === true,
      ...(typeof c.hash === 'string' ? { hash: c.hash } : {}),
      ...(bigOf(c.expires_at) !== undefined ? { expires_at: bigOf(c.expires_at)! } : {}),
    },
    benchmark: {
      state: str(b.state) || 'idle',
      progress: typeof b.progress === 'number' ? b.progress : 0,
      ...(typeof b.error === 'string' ? { error: b.error } : {}),
    },
    ...(p
      ? {
          provider: {
            enabled: p.enabled === true,
            ...(typeof p.driver === 'string' ? { driver: p.driver } : {}),
            ...(typeof p.vm_boundary === 'boolean' ? { vm_boundary: p.vm_boundary } : {}),
            ...(typeof p.detail === 'string' ? { detail: p.detail } : {}),
            ...(cap
              ? {
                  capacity: {
                    vcpus: big(cap.vcpus),
                    memory_mb: big(cap.memory_mb),
                    disk_gb: big(cap.disk_gb),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

/** One `epoch.N` entry of the state chain, as far as lease blocks lock it. */
export interface EpochInfo {
  epoch: bigint;
  start_ns: bigint;
  r_effective: bigint;
  payout_cap: bigint;
  twap_milli_usd: bigint;
}

export interface Reputation {
  address: string;
  [k: string]: unknown;
}

const q = (params: Record<string, string | undefined>): string => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, v);
  const t = s.toString();
  return t ? `?${t}` : '';
};

/** The leasing routes through a LedgerClient. */
export class LeasingClient {
  readonly client: LedgerClient;
  constructor(client: LedgerClient) {
    this.client = client;
  }

  async providers(): Promise<ProviderInfo[]> {
    const list = await this.client.get<unknown[]>('/providers?limit=100');
    return (Array.isArray(list) ? list : []).map((raw) => {
      const o = obj(raw);
      return {
        address: str(o.address),
        vcpus: big(o.vcpus),
        memory_mb: big(o.memory_mb),
        disk_gb: big(o.disk_gb),
        active_leases: num(o.active_leases),
        available_vcpus: big(o.available_vcpus),
        available_memory_mb: big(o.available_memory_mb),
        available_disk_gb: big(o.available_disk_gb),
      };
    });
  }

  async leases(filter: { consumer?: string; provider?: string; state?: string } = {}): Promise<LeaseInfo[]> {
    const list = await this.client.get<unknown[]>(`/leases${q({ ...filter, limit: '100' })}`);
    return (Array.isArray(list) ? list : []).map(parseLease);
  }

  /** A lease; undefined when the node does not know it. */
  async lease(hash: string): Promise<LeaseInfo | undefined> {
    const r = await this.client.request('GET', `/leases/${hash}`);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', `/leases/${hash}`, r.headers);
    return parseLease(r.body);
  }

  /**
   * A page of a lease's renewals, oldest first, and how many it has in all; undefined when the node
   * does not know the lease.
   */
  async renewals(
    hash: string,
    offset: number,
    limit: number,
  ): Promise<{ total: number; renewals: LeaseRenewal[] } | undefined> {
    const path = `/leases/${hash}/renewals${q({ offset: String(offset), limit: String(limit) })}`;
    const r = await this.client.request('GET', path);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', path, r.headers);
    const list = Array.isArray(r.body) ? r.body : [];
    return {
      total: Number(r.headers.get('x-total-count') ?? list.length),
      renewals: list.map(parseRenewal),
    };
  }

  /** A provider's newest certificate; undefined when none is known. */
  async certificate(provider: string): Promise<CertificateInfo | undefined> {
    const r = await this.client.request('GET', `/certificate/${provider}`);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', `/certificate/${provider}`, r.headers);
    const o = obj(r.body);
    return {
      provider: str(o.provider),
      hash: str(o.hash),
      expires_at: big(o.expires_at),
      price_multiplier_milli: big(o.price_multiplier_milli),
    };
  }

  /** An account's reputation counters as the node reports them (shape kept open). */
  async reputation(address: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.client.request('GET', `/accounts/${address}/reputation`);
    if (r.status >= 400) return undefined;
    return obj(r.body);
  }

  /** Offers for a signed marketplace request, cheapest first. */
  async offers(
    request: MarketplaceRequest,
    waitMs?: number,
  ): Promise<{ request_id: string; offers: LeaseOffer[] }> {
    const body = stringifyJson({ request, ...(waitMs !== undefined ? { wait_ms: waitMs } : {}) });
    const r = await this.client.post<Record<string, unknown>>('/lease/offers', body);
    const offers = (Array.isArray(r.offers) ? r.offers : []).map((raw): LeaseOffer => {
      const o = obj(raw);
      const m = bigOf(o.price_multiplier_milli);
      return {
        provider: str(o.provider),
        provider_pub_key: str(o.provider_pub_key),
        request_id: str(o.request_id),
        vcpus: big(o.vcpus),
        memory_mb: big(o.memory_mb),
        disk_gb: big(o.disk_gb),
        duration: big(o.duration),
        total_cost: big(o.total_cost),
        certificate_hash: str(o.certificate_hash),
        ...(m !== undefined ? { price_multiplier_milli: m } : {}),
        timestamp: big(o.timestamp),
        signature: str(o.signature),
      };
    });
    offers.sort((a, b) => (a.total_cost < b.total_cost ? -1 : a.total_cost > b.total_cost ? 1 : 0));
    return { request_id: str(r.request_id), offers };
  }

  /** Timekeeper attestations of a lease now (for lease_renew and lease_force_settle). */
  async attestations(leaseHash: string): Promise<GatheredAttestations> {
    const r = await this.client.post<Record<string, unknown>>('/lease/attestations', {
      lease_hash: leaseHash,
    });
    return {
      attestations: (Array.isArray(r.attestations) ? r.attestations : []).map((raw) => {
        const o = obj(raw);
        return { public_key: str(o.public_key), timestamp: big(o.timestamp), signature: str(o.signature) };
      }),
      median: big(r.median),
    };
  }

  /** This node's VMs as a provider (`[]` when it is none, or the route does not exist yet). */
  async vms(): Promise<VmInfo[]> {
    const r = await this.client.request('GET', '/vms');
    if (r.status >= 400 || !Array.isArray(r.body)) return [];
    return r.body.map((raw) => {
      const o = obj(raw);
      return {
        lease: str(o.lease) || str(o.lease_hash),
        status: str(o.status),
        vcpus: big(o.vcpus),
        memory_mb: big(o.memory_mb),
        disk_gb: big(o.disk_gb),
        ip: str(o.ip),
        created_at: big(o.created_at),
        ...(typeof o.driver === 'string' ? { driver: o.driver } : {}),
        ...(typeof o.vm_boundary === 'boolean' ? { vm_boundary: o.vm_boundary } : {}),
        ...(typeof o.error === 'string' ? { error: o.error } : {}),
      };
    });
  }

  async nodeLeasing(): Promise<NodeLeasing> {
    return parseNodeLeasing(await this.client.get<Record<string, unknown>>('/node'));
  }

  /** The state chain's `epoch.N` entries (what lease_renew locks). */
  async epochs(): Promise<EpochInfo[]> {
    const list = await this.client.get<unknown[]>('/statechain/kv?prefix=epoch.&limit=1000');
    const out: EpochInfo[] = [];
    for (const raw of Array.isArray(list) ? list : []) {
      const o = obj(raw);
      const m = /^epoch\.([0-9]+)$/.exec(str(o.key));
      if (!m) continue;
      let v: Record<string, unknown>;
      try {
        v = obj(o.value);
      } catch {
        continue;
      }
      out.push({
        epoch: BigInt(m[1]!),
        start_ns: big(v.start_ns),
        r_effective: big(v.r_effective),
        payout_cap: big(v.payout_cap),
        twap_milli_usd: big(v.twap_milli_usd),
      });
    }
    return out;
  }
}
