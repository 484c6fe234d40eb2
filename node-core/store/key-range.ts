/**
 * The range of a table's string keys that start with `prefix`, for lmdb-js's getRange/getKeys:
 * from the prefix itself to just past its last key (the prefix with its last character raised by
 * one, which every key under it sorts before). `reverse` walks it from the end.
 */
export function prefixRange(
  prefix: string,
  reverse = false,
): { start: string; end: string; reverse?: boolean } {
  const past = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return reverse ? { start: past, end: prefix, reverse } : { start: prefix, end: past };
}
