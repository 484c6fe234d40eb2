import { ProtocolError } from './errors.ts';
import { utf8 } from './hex.ts';

export const MAX_MEMO_BYTES = 64;

/** True when the string has no lone UTF-16 surrogate (which UTF-8 encoding would silently replace). */
export function isWellFormedUtf16(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/**
 * Checks a memo (protocol.md section 3.4): well-formed text, at most 64 UTF-8 bytes (bytes, not
 * characters), and no ASCII control bytes other than tab and newline. Returns its UTF-8 bytes.
 */
export function memoBytes(memo: string, field = 'memo'): Uint8Array {
  if (!isWellFormedUtf16(memo)) throw new ProtocolError('ERR_MEMO', 'memo is not valid UTF-8 text', field);
  const bytes = utf8(memo);
  if (bytes.length > MAX_MEMO_BYTES) {
    throw new ProtocolError(
      'ERR_MEMO',
      `memo is ${bytes.length} bytes; the limit is ${MAX_MEMO_BYTES}`,
      field,
    );
  }
  for (const b of bytes) {
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a) || b === 0x7f) {
      throw new ProtocolError('ERR_MEMO', 'memo contains a control character', field);
    }
  }
  return bytes;
}
