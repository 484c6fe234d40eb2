import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Runs the ES module `source` in a fresh Node process (written to `dir` as child.mjs) with `args`,
 * and parses the last line it prints as JSON: for checks of what a process loads, which the test
 * runner's own process (with its modules already loaded) cannot make.
 */
export async function runChildScript<T>(dir: string, source: string, args: string[]): Promise<T> {
  const script = join(dir, 'child.mjs');
  writeFileSync(script, source);
  const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as T;
}
