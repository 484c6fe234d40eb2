import {
  entropyToMnemonic,
  mnemonicToEntropy,
  mnemonicToSeed,
  mnemonicToSeedSync,
  mnemonicToSeedWebcrypto,
} from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { type Slip10Node, walletNode } from './hd-derivation.ts';

/**
 * Recovery phrases: BIP-39 (https://github.com/bitcoin/bips/blob/master/bip-0039.mediawiki) with the
 * English word list, through @scure/bip39 (the noble family's). The wallet keeps the phrase's entropy;
 * the phrase is the entropy plus a checksum written as words, and the 64-byte seed that SLIP-0010
 * derives from is PBKDF2-HMAC-SHA512 over the phrase ("mnemonic" + passphrase as the salt, 2048
 * rounds). New wallets take 24 words (256 bits); phrases of 12 to 24 words from elsewhere import.
 *
 * The word list is 2048 words: the renderer loads this module on demand, never on its first screen.
 */
export const WORDLIST: readonly string[] = wordlist;
export const NEW_PHRASE_WORDS = 24;
export const PHRASE_LENGTHS: readonly number[] = [12, 15, 18, 21, 24];

export type MnemonicErrorCode = 'empty' | 'word_count' | 'unknown_word' | 'checksum';

export class MnemonicError extends Error {
  readonly code: MnemonicErrorCode;
  /** 1-based position of the word at fault (unknown_word). */
  readonly position: number | undefined;

  constructor(code: MnemonicErrorCode, message: string, position?: number) {
    super(message);
    this.name = 'MnemonicError';
    this.code = code;
    this.position = position;
  }
}

const WORD_INDEX = new Map(wordlist.map((w, i) => [w, i]));

export function isPhraseWord(word: string): boolean {
  return WORD_INDEX.has(word);
}

/** Up to `limit` words of the list that start with `prefix` (lower case), in list order. */
export function wordsStartingWith(prefix: string, limit = 8): string[] {
  const p = prefix.trim().toLowerCase();
  if (p === '') return [];
  const out: string[] = [];
  for (const w of wordlist) {
    if (w.startsWith(p)) {
      out.push(w);
      if (out.length >= limit) break;
    }
  }
  return out;
}

/**
 * The words of a phrase as typed or pasted: any case, any spacing or line breaks, commas, and the
 * numbers of a numbered list ("1. abandon 2. ability ...") are ignored.
 */
export function phraseWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .toLowerCase()
    .split(/[\s,;]+/)
    .map((w) => w.replace(/^\d+[.):]?/, ''))
    .filter((w) => w !== '');
}

/** Checks a phrase (every word in the list, a valid length, the checksum) and returns its entropy. */
export function phraseToEntropy(text: string | readonly string[]): Uint8Array {
  const words = typeof text === 'string' ? phraseWords(text) : [...text];
  if (words.length === 0) throw new MnemonicError('empty', 'Enter the words of the recovery phrase.');
  const unknown = words.findIndex((w) => !WORD_INDEX.has(w));
  if (unknown >= 0) {
    throw new MnemonicError(
      'unknown_word',
      `Word ${unknown + 1}, "${words[unknown]}", is not in the BIP-39 English word list.`,
      unknown + 1,
    );
  }
  if (!PHRASE_LENGTHS.includes(words.length)) {
    throw new MnemonicError(
      'word_count',
      `A recovery phrase has 12, 15, 18, 21 or 24 words; this one has ${words.length}.`,
    );
  }
  try {
    return mnemonicToEntropy(words.join(' '), wordlist);
  } catch {
    throw new MnemonicError(
      'checksum',
      'Every word is in the list, but the checksum does not match: a word is wrong, missing or out of order.',
    );
  }
}

/** The phrase of an entropy (16 to 32 bytes, in steps of 4), as words. */
export function entropyToPhrase(entropy: Uint8Array): string[] {
  return entropyToMnemonic(entropy, wordlist).split(' ');
}

/** Fresh random entropy for a new wallet (256 bits: 24 words). */
export function newPhraseEntropy(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array((NEW_PHRASE_WORDS / 3) * 4));
}

/** The 64-byte BIP-39 seed of an entropy's phrase (synchronous; a few milliseconds of PBKDF2). */
export function entropyToBip39Seed(entropy: Uint8Array, passphrase = ''): Uint8Array {
  return mnemonicToSeedSync(entropyToMnemonic(entropy, wordlist), passphrase);
}

/**
 * The same without blocking: the platform's PBKDF2 (WebCrypto, native and off the page's thread: a
 * few milliseconds where the JavaScript one takes a hundred cold), else noble's, which yields.
 */
export async function entropyToBip39SeedAsync(entropy: Uint8Array, passphrase = ''): Promise<Uint8Array> {
  const phrase = entropyToMnemonic(entropy, wordlist);
  if (globalThis.crypto?.subtle) {
    try {
      return await mnemonicToSeedWebcrypto(phrase, passphrase);
    } catch {
      // Some contexts expose subtle without PBKDF2 (insecure origins in older engines): the fallback.
    }
  }
  return mnemonicToSeed(phrase, passphrase);
}

/** The wallet node of an entropy's phrase, without blocking (entropyToBip39SeedAsync). */
export async function walletNodeOfEntropyAsync(entropy: Uint8Array, passphrase = ''): Promise<Slip10Node> {
  const seed = await entropyToBip39SeedAsync(entropy, passphrase);
  try {
    return walletNode(seed);
  } finally {
    seed.fill(0);
  }
}

/** The wallet node (m/44'/22597') of an entropy's phrase, the parent of every account. */
export function walletNodeOfEntropy(entropy: Uint8Array, passphrase = ''): Slip10Node {
  const seed = entropyToBip39Seed(entropy, passphrase);
  try {
    return walletNode(seed);
  } finally {
    seed.fill(0);
  }
}
