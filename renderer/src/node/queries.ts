import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { JsonValue } from '../../../node-core/protocol/json.ts';
import { api } from '../api.ts';
import { desktopBridge } from '../bridge.ts';

/**
 * The Node page's reads, each from the node's HTTP API, polled at a pace that fits how fast it
 * changes. Keys start with 'node' so locking the wallet keeps them (they hold no account data).
 */

/** A lossless JSON integer (number when small, bigint when not) or digit string, as a bigint. */
export function big(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  return 0n;
}

export type P2PState = 'off' | 'running' | 'stopping' | 'stopped' | 'starting';

export interface PeerRow {
  id: string;
  address: string;
  version: string;
  features: string[];
  connected_at: bigint;
  latency_ms: number | null;
}

export interface PeersAnswer {
  p2p: { state: P2PState; since: number; listen_addrs: string[] };
  peer_count: number;
  peers: PeerRow[];
}

export interface Sample {
  at: bigint;
  blocks: number;
  new_blocks: number;
  peers: number;
}

export interface Series {
  interval_ms: number;
  capacity: number;
  samples: Sample[];
}

export interface Activity {
  now: bigint;
  fine: Series;
  minutes: Series;
}

export interface SyncInfo {
  state: 'idle' | 'syncing';
  blocks_known: number;
  blocks_left: number;
  estimate_seconds: number | null;
  last_round_ok: boolean;
  last_ok_at: bigint;
  rounds: number;
}

export interface ReadyCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  ready: boolean;
  checks: ReadyCheck[];
  conflicts_open: number;
  unfinalized_positions: number;
}

export interface Delegation {
  weights: Record<string, string>;
  total_weight: string;
}

export interface ConflictCandidate {
  hash: string;
  votes: number;
  weight: string;
}

export interface Conflict {
  account: string;
  previous: string;
  blocks: ConflictCandidate[];
  detected_at: bigint;
  status: 'voting' | 'resolved';
  winner?: string | null;
  resolved_at?: bigint;
}

export interface StateOp {
  type?: string;
  key: string;
  value?: JsonValue;
}

export interface StateBlockRow {
  index: bigint;
  hash: string;
  timestamp: bigint;
  ops: StateOp[];
  signatures: number;
}

export interface KvEntry {
  key: string;
  value: JsonValue;
}

export interface Keyset {
  keys: string[];
  threshold: number;
}

type Raw = Record<string, unknown>;

export function useNodeRaw() {
  return useQuery({
    queryKey: ['node', 'raw'],
    queryFn: () => api().get<Raw>('/node'),
    refetchInterval: 3000,
    retry: false,
  });
}

export function syncOf(raw: Raw | undefined): SyncInfo | undefined {
  const s = raw?.sync as Raw | undefined;
  if (!s) return undefined;
  return {
    state: s.state === 'syncing' ? 'syncing' : 'idle',
    blocks_known: Number(s.blocks_known ?? 0),
    blocks_left: Number(s.blocks_left ?? 0),
    estimate_seconds: typeof s.estimate_seconds === 'number' ? s.estimate_seconds : null,
    last_round_ok: s.last_round_ok === true,
    last_ok_at: big(s.last_ok_at),
    rounds: Number(s.rounds ?? 0),
  };
}

export function usePeers() {
  return useQuery({
    queryKey: ['node', 'peers'],
    queryFn: async (): Promise<PeersAnswer> => {
      const r = await api().get<Raw>('/node/peers');
      const p2p = r.p2p as Raw;
      return {
        p2p: {
          state: p2p.state as P2PState,
          since: Number(p2p.since),
          listen_addrs: p2p.listen_addrs as string[],
        },
        peer_count: Number(r.peer_count),
        peers: (r.peers as Raw[]).map((p) => ({
          id: String(p.id),
          address: String(p.address),
          version: String(p.version),
          features: (p.features as string[]) ?? [],
          connected_at: big(p.connected_at),
          latency_ms: typeof p.latency_ms === 'number' ? p.latency_ms : null,
        })),
      };
    },
    refetchInterval: 3000,
  });
}

/** `/ready` answers 503 with the same body when a check fails: both are an answer here. */
export function useReadiness() {
  return useQuery({
    queryKey: ['node', 'ready'],
    queryFn: async (): Promise<Readiness> => {
      const r = await api().request('GET', '/ready');
      const b = r.body as Raw | undefined;
      if (!b || !Array.isArray(b.checks)) throw new Error(`the node answered /ready with HTTP ${r.status}`);
      return {
        ready: b.ready === true,
        checks: (b.checks as Raw[]).map((c) => ({
          name: String(c.name),
          ok: c.ok === true,
          detail: typeof c.detail === 'string' ? c.detail : undefined,
        })),
        conflicts_open: Number(b.conflicts_open ?? 0),
        unfinalized_positions: Number(b.unfinalized_positions ?? 0),
      };
    },
    refetchInterval: 5000,
  });
}

export function useActivity() {
  return useQuery({
    queryKey: ['node', 'activity'],
    queryFn: async (): Promise<Activity> => {
      const r = await api().get<Raw>('/node/activity');
      const series = (s: Raw): Series => ({
        interval_ms: Number(s.interval_ms),
        capacity: Number(s.capacity),
        samples: (s.samples as Raw[]).map((x) => ({
          at: big(x.at),
          blocks: Number(x.blocks),
          new_blocks: Number(x.new_blocks),
          peers: Number(x.peers),
        })),
      });
      return { now: big(r.now), fine: series(r.fine as Raw), minutes: series(r.minutes as Raw) };
    },
    refetchInterval: 5000,
  });
}

export function useDelegation() {
  return useQuery({
    queryKey: ['node', 'delegation'],
    queryFn: () => api().get<Delegation>('/delegation'),
    refetchInterval: 10_000,
  });
}

export function useConflicts() {
  return useQuery({
    queryKey: ['node', 'conflicts'],
    queryFn: async (): Promise<Conflict[]> => {
      const list = await api().get<Raw[]>('/conflicts?limit=100');
      return list.map((c) => ({
        account: String(c.account),
        previous: String(c.previous),
        blocks: (c.blocks as Raw[]).map((b) => ({
          hash: String(b.hash),
          votes: Number(b.votes),
          weight: String(b.weight),
        })),
        detected_at: big(c.detected_at),
        status: c.status === 'resolved' ? 'resolved' : 'voting',
        winner: c.winner === undefined ? undefined : (c.winner as string | null),
        resolved_at: c.resolved_at === undefined ? undefined : big(c.resolved_at),
      }));
    },
    refetchInterval: 4000,
  });
}

function stateBlockOf(b: Raw): StateBlockRow {
  return {
    index: big(b.index),
    hash: String(b.hash ?? ''),
    timestamp: big(b.timestamp),
    ops: ((b.ops as Raw[]) ?? []).map((o) => ({
      type: typeof o.type === 'string' ? o.type : undefined,
      key: String(o.key),
      value: o.value as JsonValue,
    })),
    signatures: Array.isArray(b.signatures) ? b.signatures.length : 0,
  };
}

/** The newest `count` state-chain blocks, newest first. */
export function useRecentStateBlocks(count = 8) {
  return useQuery({
    queryKey: ['node', 'statechain', 'recent', count],
    queryFn: async (): Promise<StateBlockRow[]> => {
      const tip = stateBlockOf(await api().get<Raw>('/statechain/tip'));
      const start = tip.index >= BigInt(count - 1) ? tip.index - BigInt(count - 1) : 0n;
      const list = await api().get<Raw[]>(`/statechain/blocks?start=${start}&limit=${count}`);
      return list.map(stateBlockOf).reverse();
    },
    refetchInterval: 10_000,
  });
}

export const KV_PAGE = 50;

export function useKv(prefix: string) {
  return useQuery({
    queryKey: ['node', 'statechain', 'kv', prefix],
    queryFn: () =>
      api().get<KvEntry[]>(`/statechain/kv?limit=${KV_PAGE + 1}&prefix=${encodeURIComponent(prefix)}`),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
}

export function useKeyset() {
  return useQuery({
    queryKey: ['node', 'statechain', 'keyset'],
    queryFn: () => api().get<Keyset>('/statechain/keyset'),
    refetchInterval: 30_000,
  });
}

/** Where the admin token is kept: the desktop app says, else the node (GET /app/session). */
export function useTokenFile() {
  return useQuery({
    queryKey: ['node', 'token-file'],
    queryFn: async (): Promise<{ file: string | null; signedIn: boolean | undefined }> => {
      const bridge = desktopBridge();
      const r = await api().request('GET', '/app/session');
      const b = (r.status === 200 ? r.body : undefined) as Raw | undefined;
      const fromNode = typeof b?.admin_token_file === 'string' ? b.admin_token_file : null;
      const file = bridge ? ((await bridge.app.info()).adminTokenFile ?? fromNode) : fromNode;
      return { file, signedIn: typeof b?.authenticated === 'boolean' ? b.authenticated : undefined };
    },
    staleTime: 60_000,
  });
}
