import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/node.ts';

const BIN = new URL('../../bin/ledger-node.js', import.meta.url).pathname;

/**
 * The real `ledger-node` process, its stderr a pipe (not a terminal): JSON lines by default, readable
 * lines with --log-format pretty; the ready line on stdout either way. Stopped with SIGINT once ready.
 */
function runUntilReady(extra: string[]): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [BIN, '--data-dir', tempDir(), '--api-port', '0', '--no-p2p', '--no-ui', '--no-provide', ...extra],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '' } },
    );
    let stdout = '';
    let stderr = '';
    let stopped = false;
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // Once: a second SIGINT while stopping would kill the process (the handler is a `once`).
      if (!stopped && stdout.includes('ledger-node ready')) {
        stopped = true;
        p.kill('SIGINT');
      }
    });
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`no ready line in 60 s; stderr: ${stderr}`));
    }, 60_000);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ stdout, stderr, code });
    });
  });
}

describe('ledger-node log format', () => {
  it('writes JSON lines when stderr is not a terminal', async () => {
    const r = await runUntilReady([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ledger-node ready: API http:\/\/127\.0\.0\.1:\d+ /m);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(() => JSON.parse(l) as unknown, l).not.toThrow();
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('ready');
  }, 90_000);

  it('writes readable lines with --log-format pretty, without colour on a pipe', async () => {
    const r = await runUntilReady(['--log-format', 'pretty']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ledger-node ready: API http:\/\/127\.0\.0\.1:\d+ /m);
    const ready = r.stderr.split('\n').find((l) => / INFO {2}ready /.test(l));
    expect(ready).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}ready {2}url=http:\/\/127\.0\.0\.1:\d+ /);
    expect(r.stderr).toMatch(/ INFO {2}stopped$/m);
    expect(r.stderr).not.toMatch(/^\{/m);
    expect(r.stderr).not.toContain('\x1b[');
  }, 90_000);
});
