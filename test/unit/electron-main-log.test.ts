import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainLogger } from '../../electron/main-log.ts';
import { tempDir } from '../helpers/node.ts';

/** The file once it holds `n` lines (the destination opens and writes asynchronously). */
async function fileLines(file: string, n: number): Promise<string[]> {
  await expect
    .poll(() => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0))
    .toBe(n);
  return readFileSync(file, 'utf8').trim().split('\n');
}

describe("the desktop app's log", () => {
  it('writes JSON to its file and, from a terminal, readable lines to stderr', async () => {
    const file = join(tempDir(), 'logs', 'main.log');
    const lines: string[] = [];
    const log = mainLogger(file, 'info', { isTTY: true, write: (t) => lines.push(t) }, { NO_COLOR: '1' });
    log.info({ url: 'http://127.0.0.1:8080' }, 'node ready');
    log.debug('not at this level');
    log.flush();
    const json = (await fileLines(file, 1)).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.join('')).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}node ready {2}url=http:\/\/127\.0\.0\.1:8080\n$/,
    );
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ level: 30, msg: 'node ready', name: 'ledger-node-desktop' });
  });

  it('writes only the file when not started from a terminal', async () => {
    const file = join(tempDir(), 'main.log');
    const lines: string[] = [];
    const log = mainLogger(file, 'info', { isTTY: false, write: (t) => lines.push(t) });
    log.warn('quiet');
    log.flush();
    const [line] = await fileLines(file, 1);
    expect(lines).toEqual([]);
    expect(JSON.parse(line!)).toMatchObject({ level: 40, msg: 'quiet' });
  });
});
