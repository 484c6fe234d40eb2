import { useId, useRef, useState, type ClipboardEvent, type KeyboardEvent } from 'react';
import { isPhraseWord, phraseWords, wordsStartingWith } from '../../../node-core/protocol/mnemonic.ts';
import './phrase.css';

/**
 * A recovery phrase typed word by word: one numbered box per word, suggestions from the BIP-39 word
 * list for the box being typed in (a shared <datalist>, so the browser's own keyboard-usable list),
 * a box whose text is not a word of the list marked once left, and a whole phrase pasted into any box
 * spread over the boxes from there (numbers, commas and line breaks ignored). Loads with the word list,
 * so only the screens that need it import this.
 */
export interface PhraseInputProps {
  words: string[];
  onChange(words: string[]): void;
  /** Box numbers (1-based) to mark as wrong, e.g. the first wrong word of a backup check. */
  wrong?: readonly number[];
  /** A pasted phrase of another length asks for that many boxes (import, where 12 to 24 are allowed). */
  onPasteLength?(count: number): void;
  testId?: string;
  label?: string;
}

/** Words of the list are unique in their first four letters: a unique prefix completes to its word. */
export function completeWord(typed: string): string {
  const t = typed.trim().toLowerCase();
  if (t.length < 3 || isPhraseWord(t)) return t;
  const m = wordsStartingWith(t, 2);
  return m.length === 1 ? m[0]! : t;
}

export function PhraseInput({
  words,
  onChange,
  wrong = [],
  onPasteLength,
  testId = 'phrase-input',
  label = 'Recovery phrase',
}: PhraseInputProps) {
  const listId = useId();
  const [focused, setFocused] = useState<number>();
  const [left, setLeft] = useState<ReadonlySet<number>>(new Set());
  const boxes = useRef<(HTMLInputElement | null)[]>([]);
  const suggestions = focused === undefined ? [] : wordsStartingWith(words[focused] ?? '', 8);

  const setWord = (i: number, value: string) => onChange(words.map((w, k) => (k === i ? value : w)));

  const paste = (i: number, e: ClipboardEvent<HTMLInputElement>) => {
    const pasted = phraseWords(e.clipboardData.getData('text'));
    if (pasted.length < 2) return;
    e.preventDefault();
    if (i === 0 && pasted.length !== words.length && onPasteLength) {
      onPasteLength(pasted.length);
      onChange(pasted);
      return;
    }
    const next = [...words];
    pasted.forEach((w, k) => {
      if (i + k < next.length) next[i + k] = w;
    });
    onChange(next);
    boxes.current[Math.min(i + pasted.length, words.length - 1)]?.focus();
  };

  const key = (i: number, e: KeyboardEvent<HTMLInputElement>) => {
    // Space or Enter after a word moves on, as when writing the phrase out.
    if ((e.key === ' ' || e.key === 'Enter') && (words[i] ?? '').trim() !== '' && i < words.length - 1) {
      e.preventDefault();
      setWord(i, completeWord(words[i]!));
      boxes.current[i + 1]?.focus();
    }
  };

  return (
    <fieldset className="phrase-input" data-testid={testId}>
      <legend>{label}</legend>
      <datalist id={listId}>
        {suggestions.map((w) => (
          <option key={w} value={w} />
        ))}
      </datalist>
      <div className="phrase-grid">
        {words.map((w, i) => {
          const bad =
            wrong.includes(i + 1) ||
            (left.has(i) && w.trim() !== '' && !isPhraseWord(w.trim().toLowerCase()));
          return (
            <label className="phrase-word" key={i}>
              <span className="n" aria-hidden="true">
                {i + 1}
              </span>
              <input
                ref={(el) => {
                  boxes.current[i] = el;
                }}
                className="mono"
                value={w}
                list={listId}
                aria-label={`Word ${i + 1}`}
                aria-invalid={bad}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
                data-testid={`phrase-word-${i + 1}`}
                onFocus={() => setFocused(i)}
                onBlur={() => {
                  setFocused(undefined);
                  setLeft((s) => new Set(s).add(i));
                  const done = completeWord(w);
                  if (done !== w) setWord(i, done);
                }}
                onChange={(e) => setWord(i, e.target.value)}
                onPaste={(e) => paste(i, e)}
                onKeyDown={(e) => key(i, e)}
              />
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}
