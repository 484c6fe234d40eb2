import { ed25519 } from './ed25519.ts';
import { ProtocolError } from './errors.ts';
import { bytesToHex, concatBytes, hexToBytes, utf8 } from './hex.ts';
import { u32BE } from './int.ts';

/**
 * OpenSSH forms of an Ed25519 key (RFC 8709 wire form, PROTOCOL.key file format), for the VM
 * drivers: the lease's `access_pub_key` becomes the guest's only `authorized_keys` line, and tests
 * and tools write a private key file that the real `ssh -i` loads. Isomorphic: no Node built-ins.
 */

const KEY_TYPE = 'ssh-ed25519';
const AUTH_MAGIC = utf8('openssh-key-v1\0');

/** An SSH `string`: uint32 length, then the bytes. */
function sshString(bytes: Uint8Array | string): Uint8Array {
  const b = typeof bytes === 'string' ? utf8(bytes) : bytes;
  return concatBytes(u32BE(b.length), b);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding (OpenSSH uses no URL-safe form). */
export function base64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + '=';
  }
  return out;
}

/** The public key blob of the wire form: string "ssh-ed25519", string pub(32). */
export function sshPublicKeyBlob(pubHex: string): Uint8Array {
  return concatBytes(sshString(KEY_TYPE), sshString(hexToBytes(pubHex, 32, 'access_pub_key')));
}

/** A comment stays on its line: no line breaks (they would start a second authorized key). */
function checkComment(comment: string): void {
  if (/[\r\n\0]/.test(comment))
    throw new ProtocolError('ERR_FIELD_TYPE', 'comment has a line break', 'comment');
}

/** `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI... comment`: one line of `authorized_keys`. */
export function authorizedKeyLine(pubHex: string, comment?: string): string {
  const line = `${KEY_TYPE} ${base64(sshPublicKeyBlob(pubHex))}`;
  if (comment === undefined || comment === '') return line;
  checkComment(comment);
  return `${line} ${comment}`;
}

/**
 * The PEM text of an unencrypted `openssh-key-v1` private key file (what `ssh-keygen -t ed25519 -N ''`
 * writes). `pubHex` must be the seed's public key: a mismatched file would load and then fail every
 * login, far from the cause.
 */
export function opensshPrivateKey(seed: Uint8Array, pubHex: string, comment = ''): string {
  if (seed.length !== 32) throw new ProtocolError('ERR_LENGTH', 'seed must be 32 bytes', 'seed');
  const pub = hexToBytes(pubHex, 32, 'access_pub_key');
  if (bytesToHex(ed25519.getPublicKey(seed)) !== pubHex) {
    throw new ProtocolError('ERR_FIELD_RANGE', 'public key does not belong to the seed', 'access_pub_key');
  }
  checkComment(comment);
  const blob = sshPublicKeyBlob(pubHex);
  // The check integer only lets a decrypting reader see a wrong passphrase; unencrypted, any value
  // repeated twice does. Taking it from the key keeps the output deterministic.
  const check = pub.subarray(0, 4);
  const body = concatBytes(
    check,
    check,
    sshString(KEY_TYPE),
    sshString(pub),
    sshString(concatBytes(seed, pub)), // OpenSSH's ed25519 "private key" is seed || public key
    sshString(comment),
  );
  // Padding 1, 2, 3, ... up to the cipher block size (8 for "none").
  const padLen = (8 - (body.length % 8)) % 8;
  const pad = Uint8Array.from({ length: padLen }, (_, i) => i + 1);
  const file = concatBytes(
    AUTH_MAGIC,
    sshString('none'), // cipher
    sshString('none'), // kdf
    sshString(new Uint8Array(0)), // kdf options
    u32BE(1), // number of keys
    sshString(blob),
    sshString(concatBytes(body, pad)),
  );
  const b64 = base64(file);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 70) lines.push(b64.slice(i, i + 70));
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}
