import { describe, expect, it } from 'vitest';
import { completeWord } from '../../renderer/src/components/PhraseInput.tsx';
import { scanAccounts, ScanCancelledError, type ScanProgress } from '../../renderer/src/keystore/scan.ts';
import { firstWrongWord, parsePhraseHex, phraseCheckMessage } from '../../renderer/src/keystore/seed.ts';

/** The backup check of a phrase, the hex form of a phrase, and the gap-limited account search (pure). */
const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow'.split(' ');

describe('phrase backup check', () => {
  it('accepts every word typed back, in any case and with spaces around', () => {
    expect(
      firstWrongWord(
        PHRASE.map((w) => ` ${w.toUpperCase()} `),
        PHRASE,
      ),
    ).toBeUndefined();
    expect(phraseCheckMessage(PHRASE, PHRASE)).toBeUndefined();
  });

  it('names the first wrong word and counts the others', () => {
    const typed = [...PHRASE];
    typed[3] = 'yeah';
    expect(firstWrongWord(typed, PHRASE)).toBe(4);
    expect(phraseCheckMessage(typed, PHRASE)).toBe(
      'Word 4, "yeah", is not the word shown: check it against what you wrote down.',
    );
    typed[9] = '';
    typed[10] = 'thank ';
    expect(phraseCheckMessage(typed, PHRASE)).toBe(
      'Word 4, "yeah", is not the word shown, and 1 more word is wrong: check them against what you wrote down.',
    );
    typed[10] = 'x';
    expect(phraseCheckMessage(typed, PHRASE)).toMatch(/and 2 more words are wrong/);
    const missing = [...PHRASE];
    missing[0] = ' ';
    expect(phraseCheckMessage(missing, PHRASE)).toBe(
      'Word 1 is missing: check it against what you wrote down.',
    );
    expect(
      phraseCheckMessage(
        PHRASE.map(() => ''),
        PHRASE,
      ),
    ).toBe('Type the 12 words you wrote down, in order.');
  });

  it('the whole phrase is checked: the last word counts too', () => {
    const typed = [...PHRASE];
    typed[11] = 'year';
    expect(firstWrongWord(typed, PHRASE)).toBe(12);
  });
});

describe('phrase in hex', () => {
  it('takes 16 to 32 bytes of hex in any case, spaces and dashes ignored', () => {
    expect(parsePhraseHex(`7F7F 7f7f-7f7f7f7f ${'7f'.repeat(8)}`)).toEqual({
      entropyHex: '7f'.repeat(16),
    });
    expect(parsePhraseHex(`0x${'ab'.repeat(32)}`)).toEqual({ entropyHex: 'ab'.repeat(32) });
    expect(parsePhraseHex('')).toEqual({ error: 'Paste the hexadecimal form of the recovery phrase.' });
    expect(parsePhraseHex('abcg')).toEqual({ error: '"g" is not a hexadecimal character (0-9, a-f).' });
    expect(parsePhraseHex('ab'.repeat(17))).toEqual({
      error: 'A recovery phrase in hex has 32 to 64 characters in steps of 8; this has 34.',
    });
  });
});

describe('account search with a gap limit (a fixed set of used indexes stands in for the node)', () => {
  const search = (used: number[], extra: { gap?: number; max?: number; signal?: AbortSignal } = {}) => {
    const asked: string[] = [];
    const progress: ScanProgress[] = [];
    const result = scanAccounts({
      addressOf: (i) => `address-${i}`,
      isUsed: async (a) => {
        asked.push(a);
        return used.includes(Number(a.slice('address-'.length)));
      },
      onProgress: (p) => progress.push({ ...p, used: [...p.used] }),
      ...extra,
    });
    return { result, asked, progress };
  };

  it('stops after 5 unused in a row; keeps every used one and always index 0', async () => {
    const { result, asked } = search([1, 3, 8]);
    expect(await result).toEqual({ indexes: [0, 1, 3, 8], used: [1, 3, 8], checked: 14, stoppedBy: 'gap' });
    expect(asked).toHaveLength(14);
    expect(asked.at(-1)).toBe('address-13');
  });

  it('a gap of exactly 5 ends the search: an account after it is not found', async () => {
    const { result } = search([0, 6]);
    expect(await result).toMatchObject({ indexes: [0], used: [0], checked: 6 });
  });

  it('a fresh phrase: nothing used, account 0 kept, 5 checked', async () => {
    const { result, progress } = search([]);
    expect(await result).toEqual({ indexes: [0], used: [], checked: 5, stoppedBy: 'gap' });
    expect(progress.map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    expect(progress.map((p) => p.gap)).toEqual([0, 1, 2, 3, 4]);
  });

  it('stops at the maximum when everything is used', async () => {
    const { result } = search(
      Array.from({ length: 50 }, (_, i) => i),
      { max: 20 },
    );
    expect(await result).toMatchObject({ checked: 20, stoppedBy: 'max' });
  });

  it('a cancelled search rejects and asks nothing more', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const { result, asked } = search([0, 1], { signal: ctl.signal });
    await expect(result).rejects.toBeInstanceOf(ScanCancelledError);
    expect(asked).toEqual([]);
  });

  it('a node error stops the search with that error', async () => {
    await expect(
      scanAccounts({
        addressOf: (i) => `a${i}`,
        isUsed: async (a) => {
          if (a === 'a2') throw new Error('cannot reach the node');
          return false;
        },
      }),
    ).rejects.toThrow('cannot reach the node');
  });
});

describe('phrase box completion (the word list is unique in its first four letters)', () => {
  it('completes a unique prefix of three or more letters, and leaves anything else as typed', () => {
    expect(completeWord('aban')).toBe('abandon');
    expect(completeWord(' ZOO ')).toBe('zoo');
    expect(completeWord('act')).toBe('act'); // a word itself, and the start of others
    expect(completeWord('acti')).toBe('action');
    expect(completeWord('ab')).toBe('ab'); // too short to be sure
    expect(completeWord('abc')).toBe('abc'); // no word starts so
    expect(completeWord('zzzz')).toBe('zzzz');
  });
});
