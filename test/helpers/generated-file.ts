import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * Fails unless the committed generated file at `path` is exactly `fresh`, naming the first line
 * that differs and the command that writes it again.
 */
export function expectCurrent(path: string, fresh: string, command: string): void {
  const committed = readFileSync(path, 'utf8');
  if (fresh !== committed) {
    const a = fresh.split('\n');
    const b = committed.split('\n');
    const i = a.findIndex((line, n) => line !== b[n]);
    throw new Error(
      `${path} is stale from line ${i + 1}: generated ${JSON.stringify(a[i]?.slice(0, 160))}, ` +
        `committed ${JSON.stringify(b[i]?.slice(0, 160))}. Run \`${command}\`.`,
    );
  }
  expect(fresh).toBe(committed);
}
