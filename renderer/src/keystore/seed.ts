import { bytesToHex } from '../../../node-core/protocol/hex.ts';
import { randomSeed } from '../../../node-core/protocol/keys.ts';

/**
 * Seeds as people handle them: 32 random bytes shown as 64 hex characters in 16 groups of 4, typed
 * back in any case, with or without spaces or dashes.
 */
export const SEED_GROUP = 4;
export const SEED_GROUPS = 16;

/** A fresh random seed, hex. */
export function newSeedHex(): string {
  const seed = randomSeed();
  const hex = bytesToHex(seed);
  seed.fill(0);
  return hex;
}

/** The 16 groups of 4 hex characters of a seed. */
export function seedGroups(seedHex: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < seedHex.length; i += SEED_GROUP) out.push(seedHex.slice(i, i + SEED_GROUP));
  return out;
}

/**
 * A seed as typed or pasted: whitespace, dashes and a 0x prefix are ignored, upper case is accepted.
 * Returns the canonical 64 lowercase hex characters, or an error sentence.
 */
export function parseSeedInput(text: string): { seedHex: string } | { error: string } {
  let t = text.replace(/[\s-]+/g, '').toLowerCase();
  if (t.startsWith('0x')) t = t.slice(2);
  if (t === '') return { error: 'Paste the 64 hexadecimal characters of the seed.' };
  const bad = /[^0-9a-f]/.exec(t);
  if (bad) return { error: `"${bad[0]}" is not a hexadecimal character (0-9, a-f).` };
  if (t.length !== 64) return { error: `A seed has 64 hexadecimal characters; this has ${t.length}.` };
  if (/^0+$/.test(t)) return { error: 'An all-zero seed is not a secret: use a random one.' };
  return { seedHex: t };
}

/** `count` distinct group indexes (0-based) in increasing order, picked at random. */
export function pickConfirmGroups(count = 3, groups = SEED_GROUPS): number[] {
  const picked = new Set<number>();
  const buf = new Uint32Array(1);
  while (picked.size < count) {
    globalThis.crypto.getRandomValues(buf);
    picked.add(buf[0]! % groups);
  }
  return [...picked].sort((a, b) => a - b);
}

/** True when a typed group matches (case and surrounding spaces ignored). */
export function groupMatches(typed: string, group: string): boolean {
  return typed.trim().toLowerCase() === group;
}
