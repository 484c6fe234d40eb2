/**
 * Keyboard shortcuts: which keys do what (SHORTCUTS, also the help overlay's table) and the pure
 * state machine that turns key presses into actions (Keymap). Sequences like `g w` are typed one key
 * after the other within SEQUENCE_MS; combinations like Ctrl+L are pressed together (⌘ on macOS
 * counts as Ctrl). Nothing fires while a person types in a field (isTypingTarget), but Escape.
 */
export type ShortcutAction =
  | 'help'
  | 'go-wallet'
  | 'go-send'
  | 'go-receive'
  | 'go-history'
  | 'go-chat'
  | 'go-contacts'
  | 'go-leasing'
  | 'go-explorer'
  | 'go-settings'
  | 'search'
  | 'lock';

export interface Shortcut {
  action: ShortcutAction;
  /** Keys as shown and matched: one chord ('?', 'Ctrl+L') or a sequence ('g', 'w'). */
  keys: readonly string[];
  description: string;
  /** Whether it works while the wallet is locked (only help does). */
  whileLocked?: boolean;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { action: 'help', keys: ['?'], description: 'Show or hide this list of shortcuts', whileLocked: true },
  { action: 'go-wallet', keys: ['g', 'w'], description: 'Go to the wallet' },
  { action: 'go-send', keys: ['g', 's'], description: 'Send funds' },
  { action: 'go-receive', keys: ['g', 'r'], description: 'Receive: your address and its QR code' },
  { action: 'go-history', keys: ['g', 'h'], description: 'Account history' },
  { action: 'go-chat', keys: ['g', 'c'], description: 'Chat' },
  { action: 'go-contacts', keys: ['g', 'a'], description: 'Address book' },
  { action: 'go-leasing', keys: ['g', 'l'], description: 'Leasing' },
  { action: 'go-explorer', keys: ['g', 'e'], description: 'Explorer' },
  { action: 'go-settings', keys: ['Ctrl+,'], description: 'Settings' },
  { action: 'search', keys: ['/'], description: 'Search the explorer for a block or an account' },
  { action: 'lock', keys: ['Ctrl+L'], description: 'Lock the wallet now' },
];

/** How long the second key of a sequence may wait for. */
export const SEQUENCE_MS = 1500;

/** The parts of a KeyboardEvent the keymap reads (tests pass plain objects). */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

/** The name of a press as SHORTCUTS write it: 'g', '?', 'Ctrl+L', 'Ctrl+,'. */
export function chordOf(p: KeyPress): string {
  if (p.ctrlKey || p.metaKey) return `Ctrl+${p.key.length === 1 ? p.key.toUpperCase() : p.key}`;
  return p.key;
}

const SEQUENCE_STARTS = new Set(SHORTCUTS.filter((s) => s.keys.length > 1).map((s) => s.keys[0]!));

/** Key presses in, actions out; remembers the first key of a sequence for SEQUENCE_MS. */
export class Keymap {
  #prefix: { key: string; at: number } | undefined;

  /** The action of this press, if any; `locked` limits it to the shortcuts that work while locked. */
  feed(p: KeyPress, now: number, locked = false): ShortcutAction | undefined {
    // Alt (and AltGr, which some layouts need for '/' or '?') chords are the system's or the layout's.
    if (p.altKey && !(p.key === '?' || p.key === '/')) {
      this.#prefix = undefined;
      return undefined;
    }
    if (['Shift', 'Control', 'Alt', 'Meta', 'CapsLock'].includes(p.key)) return undefined;
    const chord = chordOf(p);
    const allowed = (s: Shortcut) => !locked || s.whileLocked === true;
    const prefix =
      this.#prefix !== undefined && now - this.#prefix.at <= SEQUENCE_MS ? this.#prefix : undefined;
    this.#prefix = undefined;
    if (prefix !== undefined) {
      const hit = SHORTCUTS.find(
        (s) => s.keys.length === 2 && s.keys[0] === prefix.key && s.keys[1] === chord,
      );
      if (hit !== undefined && allowed(hit)) return hit.action;
    }
    const single = SHORTCUTS.find((s) => s.keys.length === 1 && s.keys[0] === chord);
    if (single !== undefined) return allowed(single) ? single.action : undefined;
    if (SEQUENCE_STARTS.has(chord) && !locked) this.#prefix = { key: chord, at: now };
    return undefined;
  }

  /** Whether a sequence is waiting for its second key. */
  pending(now: number): boolean {
    return this.#prefix !== undefined && now - this.#prefix.at <= SEQUENCE_MS;
  }
}

/** The element a key press went to, as far as typing is concerned. */
export interface TargetLike {
  tagName?: string;
  isContentEditable?: boolean;
  type?: string;
}

const NON_TEXT_INPUTS = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file']);

/** True when keys typed there are text (a field, a select, an editable element): no shortcut fires. */
export function isTypingTarget(t: TargetLike | null | undefined): boolean {
  if (t === null || t === undefined) return false;
  if (t.isContentEditable === true) return true;
  const tag = (t.tagName ?? '').toUpperCase();
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !NON_TEXT_INPUTS.has((t.type ?? 'text').toLowerCase());
  return false;
}
