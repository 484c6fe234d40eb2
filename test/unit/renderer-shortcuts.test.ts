import { describe, expect, it } from 'vitest';
import {
  chordOf,
  isTypingTarget,
  Keymap,
  SEQUENCE_MS,
  SHORTCUTS,
  type KeyPress,
} from '../../renderer/src/shortcuts/keymap.ts';

const key = (k: string, mods: Partial<KeyPress> = {}): KeyPress => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('the keymap', () => {
  it('runs sequences typed within the window, one key after the other', () => {
    const m = new Keymap();
    expect(m.feed(key('g'), 0)).toBeUndefined();
    expect(m.pending(10)).toBe(true);
    expect(m.feed(key('w'), 100)).toBe('go-wallet');
    expect(m.feed(key('g'), 200)).toBeUndefined();
    expect(m.feed(key('s'), 300)).toBe('go-send');
    expect(m.feed(key('g'), 400)).toBeUndefined();
    expect(m.feed(key('h'), 500)).toBe('go-history');
    expect(m.feed(key('g'), 600)).toBeUndefined();
    expect(m.feed(key('c'), 700)).toBe('go-chat');
  });

  it('forgets the first key after the window, and a second key alone does nothing', () => {
    const m = new Keymap();
    m.feed(key('g'), 0);
    expect(m.feed(key('w'), SEQUENCE_MS + 1)).toBeUndefined();
    expect(m.feed(key('w'), SEQUENCE_MS + 2)).toBeUndefined();
    m.feed(key('g'), 5000);
    expect(m.feed(key('x'), 5001)).toBeUndefined(); // not a sequence: both keys dropped
    expect(m.feed(key('w'), 5002)).toBeUndefined();
  });

  it('reads chords with Ctrl or ⌘, and ? and / alone', () => {
    const m = new Keymap();
    expect(m.feed(key('?', { key: '?' }), 0)).toBe('help');
    expect(m.feed(key('/'), 0)).toBe('search');
    expect(m.feed(key('l', { ctrlKey: true }), 0)).toBe('lock');
    expect(m.feed(key('l', { metaKey: true }), 0)).toBe('lock');
    expect(m.feed(key(',', { ctrlKey: true }), 0)).toBe('go-settings');
    expect(m.feed(key('l'), 0)).toBeUndefined();
    expect(chordOf(key('l', { ctrlKey: true }))).toBe('Ctrl+L');
  });

  it('ignores modifier keys pressed on their own, and Alt chords', () => {
    const m = new Keymap();
    m.feed(key('g'), 0);
    expect(m.feed(key('Shift'), 1)).toBeUndefined();
    expect(m.feed(key('w'), 2)).toBe('go-wallet'); // Shift between the keys does not break it
    expect(m.feed(key('l', { altKey: true, ctrlKey: true }), 3)).toBeUndefined();
  });

  it('while locked, only help works', () => {
    const m = new Keymap();
    expect(m.feed(key('?'), 0, true)).toBe('help');
    expect(m.feed(key('l', { ctrlKey: true }), 0, true)).toBeUndefined();
    expect(m.feed(key('g'), 0, true)).toBeUndefined();
    expect(m.feed(key('w'), 1, true)).toBeUndefined();
    expect(m.feed(key('/'), 2, true)).toBeUndefined();
  });

  it('has one action per key combination, each described', () => {
    const keys = SHORTCUTS.map((s) => s.keys.join(' '));
    expect(new Set(keys).size).toBe(keys.length);
    for (const s of SHORTCUTS) expect(s.description.length).toBeGreaterThan(3);
  });
});

describe('typing targets', () => {
  it('are text fields, selects, text areas and editable elements, not buttons or checkboxes', () => {
    expect(isTypingTarget({ tagName: 'INPUT', type: 'text' })).toBe(true);
    expect(isTypingTarget({ tagName: 'input', type: 'password' })).toBe(true);
    expect(isTypingTarget({ tagName: 'INPUT' })).toBe(true);
    expect(isTypingTarget({ tagName: 'TEXTAREA' })).toBe(true);
    expect(isTypingTarget({ tagName: 'SELECT' })).toBe(true);
    expect(isTypingTarget({ tagName: 'DIV', isContentEditable: true })).toBe(true);
    expect(isTypingTarget({ tagName: 'INPUT', type: 'checkbox' })).toBe(false);
    expect(isTypingTarget({ tagName: 'BUTTON' })).toBe(false);
    expect(isTypingTarget({ tagName: 'BODY' })).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
  });
});
