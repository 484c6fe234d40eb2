import { bytesToHex } from '../../../node-core/protocol/hex.ts';
import { randomSeed } from '../../../node-core/protocol/keys.ts';

/**
 * Secrets as people handle them: hex account seeds (32 bytes, 64 hex characters in 16 groups of 4,
 * typed back in any case, with or without spaces or dashes), and the backup check of a recovery
 * phrase. Nothing here needs the word list, so the first screen can load it.
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

/** The hex form of a recovery phrase's entropy (16 to 32 bytes), as typed; or an error sentence. */
export function parsePhraseHex(text: string): { entropyHex: string } | { error: string } {
  let t = text.replace(/[\s-]+/g, '').toLowerCase();
  if (t.startsWith('0x')) t = t.slice(2);
  if (t === '') return { error: 'Paste the hexadecimal form of the recovery phrase.' };
  const bad = /[^0-9a-f]/.exec(t);
  if (bad) return { error: `"${bad[0]}" is not a hexadecimal character (0-9, a-f).` };
  if (![32, 40, 48, 56, 64].includes(t.length)) {
    return { error: `A recovery phrase in hex has 32 to 64 characters in steps of 8; this has ${t.length}.` };
  }
  return { entropyHex: t };
}

/**
 * The backup check of a phrase: the 1-based position of the first box that does not hold the word
 * shown (case and surrounding spaces ignored), or undefined when every word matches.
 */
export function firstWrongWord(typed: readonly string[], phrase: readonly string[]): number | undefined {
  for (let i = 0; i < phrase.length; i++) {
    if ((typed[i] ?? '').trim().toLowerCase() !== phrase[i]) return i + 1;
  }
  return undefined;
}

/** What the backup check says about a wrong phrase: the first wrong word, and how many are wrong. */
export function phraseCheckMessage(typed: readonly string[], phrase: readonly string[]): string | undefined {
  const first = firstWrongWord(typed, phrase);
  if (first === undefined) return undefined;
  const empty = typed.filter((w) => w.trim() === '').length;
  if (empty === phrase.length) return `Type the ${phrase.length} words you wrote down, in order.`;
  const wrong = phrase.filter((w, i) => (typed[i] ?? '').trim().toLowerCase() !== w).length;
  const word = (typed[first - 1] ?? '').trim();
  const what = word === '' ? `Word ${first} is missing` : `Word ${first}, "${word}", is not the word shown`;
  return wrong === 1
    ? `${what}: check it against what you wrote down.`
    : `${what}, and ${wrong - 1} more ${wrong === 2 ? 'word is' : 'words are'} wrong: check them against what you wrote down.`;
}
