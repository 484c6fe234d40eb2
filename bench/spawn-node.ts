import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Runs `ledger-node` as a child process (as a user would) and waits for its ready line. */
export interface SpawnedNode {
  proc: ChildProcess;
  url: string;
  readyMs: number;
  stop(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../bin/ledger-node.js', import.meta.url));
/** The V8 flags the command's shebang gives node (`#!/usr/bin/env -S node --flag ...`): run as users run it. */
const SHEBANG = readFileSync(BIN, 'utf8').split('\n')[0]!;
const SHEBANG_FLAGS = (/^#!.*\bnode((?: --[^\s]+)*)\s*$/m.exec(SHEBANG)?.[1] ?? '')
  .split(' ')
  .filter(Boolean);
/** BENCH_NODE_FLAGS replaces the shebang's V8 flags (A/B runs of a flag; V8 refuses them in NODE_OPTIONS). */
const BIN_FLAGS =
  process.env.BENCH_NODE_FLAGS === undefined
    ? SHEBANG_FLAGS
    : process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean);
/** The variables the shebang sets (`env -S NAME=value node ...`); a caller's own setting wins (A/B runs). */
const BIN_ENV = Object.fromEntries(
  [...(/^#!\S*env -S (.*?)\bnode\b/.exec(SHEBANG)?.[1] ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [
    m[1]!,
    m[2]!,
  ]),
);

/** Options of a bench node that is measured, not watched: any API port, no rate limits, warnings only. */
export const QUIET_NODE_ARGS: readonly string[] = [
  '--api-port',
  '0',
  '--rate-limit',
  'off',
  '--log-level',
  'warn',
];
/** Peer-to-peer on any port of the loopback interface. */
export const LOOPBACK_P2P_ARGS: readonly string[] = ['--p2p-port', '0', '--p2p-bind', '127.0.0.1'];

export function spawnNode(
  args: string[],
  opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; bin?: string; flags?: string[] } = {},
): Promise<SpawnedNode> {
  const started = performance.now();
  // `bin`: another checkout's command (bench startup's same-run comparison with an older version);
  // `flags`: V8 flags of this node instead of the shebang's (an A/B of a flag between two nodes).
  const proc = spawn(process.execPath, [...(opts.flags ?? BIN_FLAGS), opts.bin ?? BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...BIN_ENV, ...(opts.env ?? process.env) },
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 20_000) err = err.slice(-10_000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`node did not become ready: ${err.slice(-2000)}`));
    }, opts.timeoutMs ?? 60_000);
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ledger-node ready: API (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          proc,
          url: m[1]!,
          readyMs: performance.now() - started,
          stop: () =>
            new Promise<void>((res) => {
              if (proc.exitCode !== null) return res();
              proc.once('exit', () => res());
              proc.kill('SIGTERM');
            }),
        });
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code}: ${err.slice(-2000)}`));
      // After its ready line nothing awaits that rejection: say why a node a run needs went away.
      if (code !== 0 && signal !== 'SIGTERM')
        console.error(`bench: node ${proc.pid} exited with ${code ?? signal}: ${err.slice(-2000)}`);
    });
  });
}
