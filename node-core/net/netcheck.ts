/**
 * The handshake every connection passes before anything else is trusted from it (protocol
 * `/xe/netcheck/1`, reference-behavior.md section 5.2): both sides state their network id,
 * software version, features and ledger genesis hash; a peer on another network is refused.
 */
export const NETCHECK_PROTOCOL = '/xe/netcheck/1';
export const NETCHECK_VERSION = '1.0.0';
export const MAX_NETCHECK_BYTES = 4096;
/** Features this binary knows, announced in netcheck and counted by /network/readiness. */
export const NODE_FEATURES: readonly string[] = ['noop'];

export interface NetcheckHello {
  network_id: string;
  version: string;
  features: string[];
  genesis_hash: string;
}

export function encodeHello(h: NetcheckHello): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(h));
}

/** Parses a hello; undefined when it is not one (wrong shape, too large). */
export function decodeHello(bytes: Uint8Array): NetcheckHello | undefined {
  if (bytes.length > MAX_NETCHECK_BYTES) return undefined;
  try {
    const o = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>;
    if (
      typeof o.network_id !== 'string' ||
      typeof o.version !== 'string' ||
      typeof o.genesis_hash !== 'string'
    )
      return undefined;
    const features = Array.isArray(o.features)
      ? o.features.filter((f): f is string => typeof f === 'string')
      : [];
    return { network_id: o.network_id, version: o.version, features, genesis_hash: o.genesis_hash };
  } catch {
    return undefined;
  }
}

/** Why a remote hello is incompatible with ours, or undefined when it is compatible. */
export function incompatibility(local: NetcheckHello, remote: NetcheckHello): string | undefined {
  // An empty network id never bans anyone (reference-behavior.md section 9, N-04): ours is always set.
  if (remote.network_id === '') return 'peer sent an empty network id';
  if (remote.network_id !== local.network_id)
    return `peer is on network ${remote.network_id}, not ${local.network_id}`;
  if (remote.genesis_hash !== local.genesis_hash)
    return `peer has genesis ${remote.genesis_hash.slice(0, 16)}…, not ours`;
  return undefined;
}
