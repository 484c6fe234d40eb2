import { BoundedMap } from '../bounded-map.ts';
import { verifyBytesNode } from '../fastpath/ed25519.ts';

/**
 * Most signatures held at once (the last half of them at least); past it the oldest are forgotten
 * (verified again if ever looked up).
 */
const MAX_HELD = 65_536;

/**
 * Signatures a worker thread verified ahead of a synchronous check (issue #18). Consensus checks a
 * vote's signature on the node's thread; a catch-up brings tens of thousands of final votes, whose
 * checks took a fifth of the joining node's thread. Sync verifies them in the verify pool first and
 * records each good (signature, message, key) here; consensus's check then finds the exact triple
 * and skips the work. Anything not recorded, or recorded with other bytes, is verified as before,
 * so a lookup can never make a bad signature pass. An entry is used once.
 */
export class PreverifiedSignatures {
  private readonly held = new BoundedMap<string, { msg: Uint8Array; pub: Uint8Array }>(MAX_HELD);
  hits = 0;

  add(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): void {
    this.held.set(Buffer.from(signature).toString('hex'), { msg: message, pub: publicKey });
  }

  /** The synchronous verifier to give consensus: recorded triples pass at once, others are checked. */
  readonly verify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean => {
    if (this.held.size > 0) {
      const key = Buffer.from(signature).toString('hex');
      const e = this.held.get(key);
      if (e !== undefined) {
        this.held.delete(key);
        if (
          Buffer.from(e.msg).equals(Buffer.from(message)) &&
          Buffer.from(e.pub).equals(Buffer.from(publicKey))
        ) {
          this.hits += 1;
          return true;
        }
      }
    }
    return verifyBytesNode(signature, message, publicKey);
  };
}
