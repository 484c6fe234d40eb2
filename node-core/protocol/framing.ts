import { concatBytes, utf8 } from './hex.ts';
import { u64BE } from './int.ts';

/**
 * lp8 framing (protocol.md section 1): an 8-byte big-endian length, then the bytes. The payloads
 * designed after the block format (certificates, marketplace messages) frame every variable-length
 * field this way so that no two field lists concatenate to the same bytes (reference-behavior.md
 * 9.3, LS-16).
 */
export function lp8(bytes: Uint8Array): Uint8Array {
  return concatBytes(u64BE(BigInt(bytes.length)), bytes);
}

/** lp8 of a string's UTF-8 bytes: hex fields are framed as their ASCII text, never decoded. */
export function lp8Text(s: string): Uint8Array {
  return lp8(utf8(s));
}

/**
 * A domain tag as the signed payloads start with it: its ASCII bytes and one 0x00 byte, so that no
 * tag is a prefix of another payload's tag.
 */
export function domainTag(tag: string): Uint8Array {
  return utf8(`${tag}\0`);
}
