/**
 * Proof of work of the XE protocol: the pure-JS reference.
 *
 * digest = BLAKE2b(nonce as u64 LE || target (32 bytes)) with the digest-length parameter set to 8
 * (a real 8-byte BLAKE2b, not a truncated BLAKE2b-512). The 8 digest bytes are read as a big-endian
 * u64 and the work is valid iff that value >= difficulty (higher difficulty = harder; 0 accepts all).
 *
 * This module is isomorphic (no Node built-ins). It is the reference the WebAssembly kernel
 * (pow-wasm.ts) is tested against, and it is deliberately built on an independent BLAKE2b
 * implementation (@noble/hashes) so a bug in the generated kernel cannot hide behind a shared one.
 * All 64-bit quantities are bigint: a JS number cannot hold them exactly.
 */
import { U64_MAX } from './int.ts';
import { blake2b } from '@noble/hashes/blake2.js';
import { ProtocolError } from './errors.ts';

/** Network default difficulty for blocks: about 2^21 expected attempts. */
export const BLOCK_POW_DIFFICULTY = 0xfffff80000000000n;
/** Difficulty for chat messages: about 2^18 expected attempts. */
export const CHAT_POW_DIFFICULTY = 0xffffc00000000000n;

const TWO_64 = 0x10000000000000000n;

/** Length of the PoW target (a block or message hash). */
export const POW_TARGET_BYTES = 32;

function checkTarget(target: Uint8Array): void {
  if (!(target instanceof Uint8Array) || target.length !== POW_TARGET_BYTES) {
    throw new ProtocolError('ERR_LENGTH', `pow target must be ${POW_TARGET_BYTES} bytes`, 'target');
  }
}

/** Throws unless `x` is a bigint in [0, 2^64). */
export function checkU64(x: bigint, field: string): void {
  if (typeof x !== 'bigint' || x < 0n || x > U64_MAX) {
    throw new ProtocolError('ERR_FIELD_RANGE', 'expected a u64 bigint', field);
  }
}

/** The 40-byte hashed message: nonce (u64 LE) followed by the target. */
export function powInput(target: Uint8Array, nonce: bigint): Uint8Array {
  checkTarget(target);
  checkU64(nonce, 'nonce');
  const input = new Uint8Array(8 + POW_TARGET_BYTES);
  new DataView(input.buffer).setBigUint64(0, nonce, true);
  input.set(target, 8);
  return input;
}

/** The PoW value of `nonce` for `target`: the 8-byte digest read as a big-endian u64. */
export function powHash(target: Uint8Array, nonce: bigint): bigint {
  const digest = blake2b(powInput(target, nonce), { dkLen: 8 });
  return new DataView(digest.buffer, digest.byteOffset, 8).getBigUint64(0, false);
}

/** True iff `nonce` is valid proof of work for `target` at `difficulty`. */
export function powValid(target: Uint8Array, nonce: bigint, difficulty: bigint): boolean {
  checkU64(difficulty, 'difficulty');
  return powHash(target, nonce) >= difficulty;
}

/**
 * Parses a difficulty as it travels on the wire: 1..16 hex digits, optional `0x` prefix. Upper-case
 * digits are accepted here (hand-edited configs) even though `formatDifficulty` always emits lowercase.
 */
export function parseDifficulty(hex: string, field = 'difficulty'): bigint {
  if (typeof hex !== 'string')
    throw new ProtocolError('ERR_FIELD_TYPE', 'difficulty must be a hex string', field);
  const digits = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (digits.length === 0 || digits.length > 16) {
    throw new ProtocolError('ERR_HEX', 'difficulty must have 1 to 16 hex digits', field);
  }
  if (!/^[0-9a-fA-F]+$/.test(digits)) throw new ProtocolError('ERR_HEX', 'difficulty is not hex', field);
  return BigInt('0x' + digits);
}

/** The wire form of a difficulty: 16 lowercase hex digits, no prefix. */
export function formatDifficulty(difficulty: bigint): string {
  checkU64(difficulty, 'difficulty');
  return difficulty.toString(16).padStart(16, '0');
}

/**
 * Expected number of attempts to find a valid nonce: 2^64 / (2^64 - difficulty), since each
 * attempt succeeds with probability (2^64 - difficulty) / 2^64.
 */
export function expectedAttempts(difficulty: bigint): number {
  checkU64(difficulty, 'difficulty');
  return Number(TWO_64) / Number(TWO_64 - difficulty);
}

/**
 * A proof-of-work search was cancelled. Named 'AbortError' like the DOM's, so generic abort handling
 * recognises it; callers branch on `code`.
 */
export class PowAbortedError extends Error {
  readonly code = 'ERR_POW_ABORTED' as const;
  constructor(message = 'proof-of-work search aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

export function isPowAbortedError(e: unknown): e is PowAbortedError {
  return e instanceof PowAbortedError;
}

/** Throws a PowAbortedError (carrying the signal's reason as `cause`) if `signal` is aborted. */
export function throwIfPowAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PowAbortedError(undefined, { cause: signal.reason });
}

/** A uniformly random u64 (Web Crypto is available in browsers, workers and Node >= 19). */
export function randomNonce(): bigint {
  const b = new Uint8Array(8);
  globalThis.crypto.getRandomValues(b);
  return new DataView(b.buffer).getBigUint64(0, true);
}

/**
 * Slow pure-JS solver, for tiny difficulties (tests, fallbacks). Tries `maxAttempts` nonces from
 * `startNonce` (random by default), wrapping at 2^64. Returns null when none qualifies.
 */
export function solvePowJs(
  target: Uint8Array,
  difficulty: bigint,
  startNonce: bigint = randomNonce(),
  maxAttempts = 1_000_000,
): { nonce: bigint; attempts: number } | null {
  checkTarget(target);
  checkU64(difficulty, 'difficulty');
  checkU64(startNonce, 'startNonce');
  let nonce = startNonce;
  for (let attempts = 1; attempts <= maxAttempts; attempts++) {
    if (powHash(target, nonce) >= difficulty) return { nonce, attempts };
    nonce = (nonce + 1n) & U64_MAX;
  }
  return null;
}
