import { stringifyJson, type JsonValue } from '../../../node-core/protocol/json.ts';

/**
 * Three-way merges of a document that two windows (or a window and an agent's rollback) changed at
 * once: `base` is the node's copy this window's change was built on, `ours` this window's unsaved
 * value, `theirs` what the node holds now. Whatever only one side changed survives; where both
 * changed the same entry, this window's change wins (it is the newer write). A merger answers
 * undefined when it cannot merge: this window's change then gives way to the node's copy.
 */
export type Merger = (
  base: JsonValue | undefined,
  ours: JsonValue | null,
  theirs: JsonValue | undefined,
) => JsonValue | null | undefined;

export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return stringifyJson(a as JsonValue) === stringifyJson(b as JsonValue);
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One entry: the side that changed it from the base; both changed, ours (or `both`). */
export function mergeEntry<T>(
  base: T | undefined,
  ours: T | undefined,
  theirs: T | undefined,
  both?: (base: T | undefined, ours: T, theirs: T) => T,
): T | undefined {
  if (sameJson(ours, base)) return theirs;
  if (sameJson(theirs, base) || ours === undefined || theirs === undefined) return ours;
  return both ? both(base, ours, theirs) : ours;
}

/** An object of independent entries (settings, labels, lease holds, read marks), key by key. */
export function mergeObjects(
  base: Record<string, JsonValue> | undefined,
  ours: Record<string, JsonValue>,
  theirs: Record<string, JsonValue> | undefined,
): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  // Theirs' order first, then what only this window added.
  for (const k of new Set([...Object.keys(theirs ?? {}), ...Object.keys(ours)])) {
    const v = mergeEntry(base?.[k], ours[k], theirs?.[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A list whose items each have an identity (contacts by address, accounts by key), item by item. */
export function mergeKeyedList<T>(
  base: readonly T[] | undefined,
  ours: readonly T[],
  theirs: readonly T[] | undefined,
  keyOf: (item: T) => string,
  both?: (base: T | undefined, ours: T, theirs: T) => T,
): T[] {
  const index = (list: readonly T[] | undefined): Map<string, T> =>
    new Map((list ?? []).map((item) => [keyOf(item), item]));
  const b = index(base);
  const o = index(ours);
  const t = index(theirs);
  const out: T[] = [];
  for (const k of new Set([...t.keys(), ...o.keys()])) {
    const v = mergeEntry(b.get(k), o.get(k), t.get(k), both);
    if (v !== undefined) out.push(v);
  }
  return out;
}

/** Object documents merge key by key. */
export const mergeObjectDoc: Merger = (base, ours, theirs) => {
  if (ours === null) return null;
  if (!isObject(ours)) return ours;
  return mergeObjects(isObject(base) ? base : undefined, ours, isObject(theirs) ? theirs : undefined);
};

/** The address book merges contact by contact (one per address). */
export const mergeAddressBook: Merger = (base, ours, theirs) => {
  if (ours === null) return null;
  if (!Array.isArray(ours)) return ours;
  const keyOf = (c: JsonValue): string => (isObject(c) && typeof c.address === 'string' ? c.address : '');
  return mergeKeyedList(
    Array.isArray(base) ? base : undefined,
    ours,
    Array.isArray(theirs) ? theirs : undefined,
    keyOf,
  );
};
