import type { Duplex } from 'node:stream';
import type { Verifier } from '../../protocol/keys.ts';
import { LEASE_SIGNATURE_WINDOW_NS, verifyLeaseAccess } from '../../protocol/payloads.ts';
import type { LeaseRecord } from '../records.ts';

/**
 * Who may reach a lease's VM, and how the node gets there. The holder of the lease's access key
 * proves it with a lease signature (decisions D12: the reference's replayable form over the lease
 * hash, or our replay-proof form over hash and timestamp, valid 60 s). The node then connects to
 * the VM's SSH server itself when it is the provider, or over `/xe/tunnel/2.0.0` through the
 * provider it finds in the directory.
 */

export type LeaseAccessErrorCode =
  | 'invalid_hash' // 400
  | 'lease_not_found' // 404
  | 'lease_not_active' // 410
  | 'no_access_key' // 403
  | 'missing_signature' // 401
  | 'signature_failed' // 403
  | 'signature_expired' // 403
  | 'tunnel_error'; // 502

export class LeaseAccessError extends Error {
  readonly code: LeaseAccessErrorCode;
  constructor(code: LeaseAccessErrorCode, message: string) {
    super(message);
    this.name = 'LeaseAccessError';
    this.code = code;
  }
}

export interface LeaseProof {
  /** Hex Ed25519 signature (`X-Signature`). */
  signature?: string;
  /** Unix nanoseconds as digits (`X-Timestamp`): present for the replay-proof form. */
  timestamp?: string;
}

export interface VmAccessDeps {
  /** This node's account. */
  address: string;
  lease(hash: string): LeaseRecord | undefined;
  now(): bigint;
  verify: Verifier;
  /** A connection to the VM's SSH server when this node is the lease's provider. */
  connectLocal(lease: string): Promise<Duplex>;
  /** The provider's libp2p peer id from the directory, if it registered. */
  providerPeer(provider: string): string | undefined;
  /** The tunnel to `lease` over peer-to-peer streams (undefined without peer-to-peer networking). */
  dialTunnel?: (peer: string, lease: string) => Promise<Duplex>;
}

export class VmAccess {
  private readonly d: VmAccessDeps;

  constructor(deps: VmAccessDeps) {
    this.d = deps;
  }

  /**
   * The lease, if `proof` shows the caller holds its access key. Checks in the reference's order
   * (reference-behavior.md 1.6), with the hash's shape checked first: unknown, not accepted, no
   * key, no signature, bad signature; a timestamped signature must be within 60 s of now.
   */
  authorize(leaseHash: string, proof: LeaseProof): LeaseRecord {
    if (!/^[0-9a-fA-F]{64}$/.test(leaseHash))
      throw new LeaseAccessError('invalid_hash', 'invalid lease hash');
    const hash = leaseHash.toLowerCase();
    const lease = this.d.lease(hash);
    if (!lease) throw new LeaseAccessError('lease_not_found', 'lease not found');
    if (lease.state !== 'accepted') throw new LeaseAccessError('lease_not_active', 'lease not active');
    if (!lease.access_pub_key) throw new LeaseAccessError('no_access_key', 'lease has no access key');
    if (proof.signature === undefined || proof.signature === '')
      throw new LeaseAccessError('missing_signature', 'missing X-Signature header');
    let ts: bigint | undefined;
    if (proof.timestamp !== undefined) {
      if (!/^[0-9]{1,19}$/.test(proof.timestamp))
        throw new LeaseAccessError('signature_failed', 'X-Timestamp must be Unix nanoseconds in digits');
      ts = BigInt(proof.timestamp);
      const skew = ts > this.d.now() ? ts - this.d.now() : this.d.now() - ts;
      if (skew > LEASE_SIGNATURE_WINDOW_NS)
        throw new LeaseAccessError(
          'signature_expired',
          'signature expired: X-Timestamp is more than 60 s from now',
        );
    }
    if (!verifyLeaseAccess(hash, lease.access_pub_key, proof.signature, ts, this.d.verify))
      throw new LeaseAccessError('signature_failed', 'signature verification failed');
    return lease;
  }

  /** A byte stream to the SSH server of an accepted lease's VM, wherever it runs. */
  async open(lease: LeaseRecord): Promise<Duplex> {
    try {
      if (lease.provider === this.d.address) return await this.d.connectLocal(lease.lease_hash);
      if (!this.d.dialTunnel)
        throw new Error('the VM runs on another node and peer-to-peer networking is off');
      const peer = this.d.providerPeer(lease.provider);
      if (!peer) throw new Error('the provider is not in the directory');
      return await this.d.dialTunnel(peer, lease.lease_hash);
    } catch (e) {
      if (e instanceof LeaseAccessError) throw e;
      throw new LeaseAccessError('tunnel_error', `tunnel error: ${(e as Error).message}`);
    }
  }

  /**
   * The provider's answer to a peer's tunnel request: only for a lease this node provides, that is
   * accepted; the peer proved nothing (the protocol carries no signature), so the VM's SSH server,
   * which admits only the access key, is what guards it.
   */
  async answer(leaseHash: string): Promise<Duplex> {
    const lease = this.d.lease(leaseHash);
    if (!lease) throw new Error('lease not found');
    if (lease.provider !== this.d.address) throw new Error('not the provider of this lease');
    if (lease.state !== 'accepted') throw new Error('lease not active');
    return this.d.connectLocal(leaseHash);
  }
}
