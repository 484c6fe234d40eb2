import type { Rgb } from './icon.ts';
import { ICON_COLORS } from './icon.ts';
import { formatAmount } from '../node-core/api/tell-user.ts';

/**
 * What the tray shows: the node's state in one line (network, blocks, peers) and as the icon's
 * colour. Pure, apart from fetchNodeStatus, which reads `GET /node` of the node's own API: the
 * same figures any client sees, whatever the node's internals become.
 */
export interface NodeStatus {
  network: string;
  blocks: number;
  peers: number;
}

export type TrayState =
  | { kind: 'starting' }
  | { kind: 'running'; status: NodeStatus }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'stopping' };

const count = (n: number, one: string, many: string): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The tray's chat line: "3 unread messages", or nothing when there are none. */
export function unreadLine(count: number): string {
  if (count <= 0) return '';
  return count === 1 ? '1 unread message' : `${count} unread messages`;
}

/** The tray's balance line: "Balance: 1,250.5 XE", or nothing while locked (null). */
export function balanceLine(microXe: bigint | null): string {
  if (microXe === null) return '';
  return `Balance: ${formatAmount(microXe, 'XE')}`;
}

export function statusLine(state: TrayState): string {
  switch (state.kind) {
    case 'starting':
      return 'Node starting…';
    case 'stopping':
      return 'Node stopping…';
    case 'unreachable':
      return `Node not answering: ${state.reason}`;
    case 'running': {
      const s = state.status;
      return `${s.network} · ${count(s.blocks, 'block', 'blocks')} · ${count(s.peers, 'peer', 'peers')}`;
    }
  }
}

export function trayColor(state: TrayState): Rgb {
  switch (state.kind) {
    case 'running':
      return ICON_COLORS.running;
    case 'unreachable':
      return ICON_COLORS.error;
    default:
      return ICON_COLORS.starting;
  }
}

const toCount = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
};

/** The tray's figures from a `GET /node` body, or undefined when it lacks them. */
export function parseNodeStatus(body: unknown): NodeStatus | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const blocks = toCount(b.block_count);
  const peers = toCount(b.peer_count) ?? (Array.isArray(b.peers) ? b.peers.length : undefined);
  if (typeof b.network_id !== 'string' || blocks === undefined || peers === undefined) return undefined;
  return { network: b.network_id, blocks, peers };
}

export async function fetchNodeStatus(
  apiUrl: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 3000,
): Promise<NodeStatus> {
  const res = await fetchImpl(`${apiUrl}/node`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET /node answered ${res.status}`);
  const status = parseNodeStatus(await res.json());
  if (status === undefined) throw new Error('GET /node answered without network, blocks or peers');
  return status;
}
