import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { formatUnits } from '../../protocol/units.ts';
import type { PowProgressInfo } from '../../client/pow-types.ts';
import { WalletError } from './errors.ts';

/**
 * What a wallet command reads and writes: standard streams and the environment, injectable so the
 * commands' own tests need no terminal. Output is a summary for people, or exact JSON (`--json`:
 * amounts and nanosecond times as digit strings, never JSON numbers).
 */
export interface WalletIo {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (on: boolean) => void };
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export const processIo = (): WalletIo => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});

/** JSON with every bigint as its exact decimal digits (a string). */
export function exactJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x), 2);
}

/** `1.5 XE` from micro-units. */
export function amount(micro: bigint, asset: string): string {
  return `${formatUnits(micro)} ${asset}`;
}

/** A Unix-nanosecond time as an ISO date (UTC, to the millisecond). */
export function isoOfNs(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/**
 * The keystore's passphrase: LEDGER_KEYSTORE_PASSPHRASE, else asked on the terminal without echo.
 * Without either there is no way to ask: a clear error rather than a hang.
 */
export async function passphrase(
  io: WalletIo,
  prompt = 'Keystore passphrase: ',
  confirm = false,
): Promise<string> {
  const env = io.env.LEDGER_KEYSTORE_PASSPHRASE;
  if (env !== undefined) return env;
  if (!io.stdin.isTTY || !io.stdin.setRawMode)
    throw new WalletError(
      'no_passphrase',
      'no passphrase: set LEDGER_KEYSTORE_PASSPHRASE or run in a terminal',
    );
  const first = await readHidden(io, prompt);
  if (confirm) {
    const again = await readHidden(io, 'Repeat the passphrase: ');
    if (again !== first) throw new WalletError('no_passphrase', 'the two passphrases differ');
  }
  if (first === '') throw new WalletError('no_passphrase', 'an empty passphrase is not allowed');
  return first;
}

/** One line from the terminal with echo off (raw mode), Ctrl-C aborts. */
function readHidden(io: WalletIo, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    io.stderr.write(prompt);
    const stdin = io.stdin;
    stdin.setRawMode!(true);
    stdin.resume();
    let text = '';
    const done = (err?: Error) => {
      stdin.setRawMode!(false);
      stdin.pause();
      stdin.off('data', onData);
      io.stderr.write('\n');
      if (err) reject(err);
      else resolve(text);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new WalletError('no_passphrase', 'cancelled'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** A secret given as `-`: read from standard input (first line), so it stays out of the process list. */
export async function secretArg(io: WalletIo, value: string): Promise<string> {
  if (value !== '-') return value;
  const rl = createInterface({ input: io.stdin });
  for await (const line of rl) {
    rl.close();
    return line.trim();
  }
  return '';
}

/**
 * The progress line of a proof-of-work search on stderr: rewritten in place on a terminal, one line
 * at the start and one at the end otherwise (logs stay readable).
 */
export function powProgress(
  io: WalletIo,
  what: string,
): {
  onProgress: (p: PowProgressInfo) => void;
  done: () => void;
} {
  const tty = io.stderr.isTTY === true;
  const started = Date.now();
  let last = 0;
  let attempts = 0n;
  let shown = false;
  return {
    onProgress(p) {
      attempts = p.attempts;
      if (!shown) {
        shown = true;
        if (!tty)
          io.stderr.write(`proof of work for ${what}: solving (about ${Math.round(p.expected)} tries)\n`);
      }
      const now = Date.now();
      if (tty && now - last > 100) {
        last = now;
        const pct = Math.min(99, Math.floor((Number(p.attempts) / p.expected) * 100));
        io.stderr.write(`\rproof of work for ${what}: ${p.attempts} tries (~${pct}% of expected)  `);
      }
    },
    done() {
      if (!shown) return;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      io.stderr.write(
        `${tty ? '\r' : ''}proof of work for ${what}: done, ${attempts} tries in ${secs} s${tty ? '          ' : ''}\n`,
      );
      shown = false;
    },
  };
}
