import { type ChildProcess, spawn } from 'node:child_process';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** The checkout's root: the `ledger-node` command and the pinned Node 22 live under it. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** A development node on `dataDir` that any test can fill fast: API on a free port, easy proof of work, no limits, no network. */
export function quickNodeArgs(dataDir: string): string[] {
  return [
    '--data-dir',
    dataDir,
    '--api-port',
    '0',
    '--pow-difficulty',
    '2',
    '--rate-limit',
    'off',
    '--no-p2p',
  ];
}

export interface CliNode {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface CliNodeOptions {
  /** More environment for the node (the test's own environment is passed on beneath it). */
  env?: NodeJS.ProcessEnv;
  /** Every line the node writes to stderr (its JSON log records, or a crash trace). */
  onStderrLine?: (line: string) => void;
  readyTimeoutMs?: number;
}

/**
 * The `ledger-node` command as a child process, as a user starts it (the pinned Node 22 from
 * node_modules/.bin runs the TypeScript sources); resolves with its API's address once it prints its
 * ready line, or rejects with the last of its stderr if it exits or stays silent first.
 */
export async function spawnCliNode(args: string[], opts: CliNodeOptions = {}): Promise<CliNode> {
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const child = spawn('node', [join(ROOT, 'bin/ledger-node.js'), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...opts.env,
      PATH: `${join(ROOT, 'node_modules/.bin')}${delimiter}${process.env.PATH ?? ''}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 50) stderr.shift();
    opts.onStderrLine?.(line);
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`node not ready after ${timeoutMs} ms:\n${stderr.slice(-20).join('\n')}`)),
      timeoutMs,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^ledger-node ready: API (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(
        new Error(
          `node exited before ready (code ${code}, signal ${signal}):\n${stderr.slice(-20).join('\n')}`,
        ),
      );
    });
  });
  return { child, url, exited };
}

/** SIGKILL, resolved once the process is gone. */
export async function kill9(node: CliNode): Promise<void> {
  node.child.kill('SIGKILL');
  await node.exited;
}
