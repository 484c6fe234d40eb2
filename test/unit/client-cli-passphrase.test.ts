import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WalletError } from '../../node-core/cli/wallet/errors.ts';
import { passphrase, type WalletIo } from '../../node-core/cli/wallet/io.ts';

/**
 * The keystore passphrase prompt. A pseudo-terminal cannot be driven from here, so standard input is
 * a stream standing in for one (isTTY and setRawMode recorded): the test's name says so.
 */
function fakeTerminalIo(env: NodeJS.ProcessEnv = {}) {
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (on: boolean) => void };
  const raw: boolean[] = [];
  stdin.isTTY = true;
  stdin.setRawMode = (on) => void raw.push(on);
  const stderr = new PassThrough();
  let shown = '';
  stderr.on('data', (d: Buffer) => (shown += d.toString()));
  const io: WalletIo = { stdin, stdout: new PassThrough(), stderr, env };
  return { io, stdin, raw, shown: () => shown };
}

describe('passphrase prompt (a stream standing in for the terminal)', () => {
  it('reads a line with echo off and turns echo back on; backspace edits', async () => {
    const t = fakeTerminalIo();
    const p = passphrase(t.io);
    t.stdin.write('corrext');
    t.stdin.write('\u007f\u007fct horse\r');
    expect(await p).toBe('correct horse');
    expect(t.raw).toEqual([true, false]);
    expect(t.shown()).toBe('Keystore passphrase: \n');
  });

  it('asks twice for a new keystore and refuses two different answers', async () => {
    const t = fakeTerminalIo();
    const p = passphrase(t.io, 'New keystore passphrase: ', true);
    t.stdin.write('one\r');
    await new Promise((r) => setTimeout(r, 10));
    t.stdin.write('two\r');
    await expect(p).rejects.toThrow('the two passphrases differ');
  });

  it('takes LEDGER_KEYSTORE_PASSPHRASE without asking; without a terminal it says how', async () => {
    const t = fakeTerminalIo({ LEDGER_KEYSTORE_PASSPHRASE: 'from env' });
    expect(await passphrase(t.io)).toBe('from env');
    expect(t.shown()).toBe('');
    const noTty = fakeTerminalIo();
    noTty.stdin.isTTY = false;
    const e = await passphrase(noTty.io).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WalletError);
    expect((e as WalletError).message).toBe(
      'no passphrase: set LEDGER_KEYSTORE_PASSPHRASE or run in a terminal',
    );
  });

  it('Ctrl-C cancels', async () => {
    const t = fakeTerminalIo();
    const p = passphrase(t.io);
    t.stdin.write('abc\u0003');
    await expect(p).rejects.toThrow('cancelled');
    expect(t.raw).toEqual([true, false]);
  });
});
