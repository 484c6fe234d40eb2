import { type KeystoreContents } from '../../client/keystore-file.ts';
import { hexToBytes } from '../../protocol/hex.ts';
import { keyPairFromSeed } from '../../protocol/keys.ts';
import { entropyToPhrase, newPhraseEntropy, phraseToEntropy } from '../../protocol/mnemonic.ts';
import { bytesToHex } from '../../protocol/hex.ts';
import { positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import { passphrase, secretArg } from './io.ts';
import {
  accountsOf,
  newKeystore,
  openKeystore,
  type OpenKeystore,
  readKeystoreFile,
  saveKeystore,
} from './keystore.ts';
import { existsSync } from 'node:fs';

/**
 * `keys new|import|list`: the keystore's accounts. `keys new` makes the keystore (a fresh 24-word
 * recovery phrase, shown once) or adds the phrase's next account; `keys import` restores a wallet
 * from its phrase or adds an account from a raw seed; `keys list` shows them (no secrets).
 */

async function openOrCreate(
  ctx: WalletContext,
  contents: () => KeystoreContents,
): Promise<{ ks: OpenKeystore; created: boolean }> {
  if (existsSync(ctx.keystorePath)) {
    readKeystoreFile(ctx.keystorePath); // a clear error for a file that is not a keystore, before the prompt
    return { ks: await openKeystore(ctx.keystorePath, await passphrase(ctx.io)), created: false };
  }
  const pw = await passphrase(ctx.io, 'New keystore passphrase: ', true);
  return { ks: await newKeystore(ctx.keystorePath, pw, contents()), created: true };
}

function nextLabel(contents: KeystoreContents, given: string | undefined): string {
  if (given !== undefined) {
    if (given.trim() === '') throw new WalletUsageError('--label must not be empty');
    if (contents.accounts.some((a) => a.label === given))
      throw new WalletUsageError(`an account is already labelled "${given}"`);
    return given;
  }
  for (let n = contents.accounts.length + 1; ; n++) {
    const l = `Account ${n}`;
    if (!contents.accounts.some((a) => a.label === l)) return l;
  }
}

const keysNew: WalletCommand = {
  name: 'keys new',
  summary: 'make the keystore (a new recovery phrase) or add its next account',
  usage: '[--label NAME]',
  details:
    'The first run creates the keystore with a new 24-word recovery phrase, printed once: write it down.\n' +
    "Later runs add the phrase's next account (m/44'/22597'/N').",
  example: 'LEDGER_KEYSTORE_PASSPHRASE=... ledger-node keys new --label savings',
  flags: { values: ['--label'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const entropy = newPhraseEntropy();
    const { ks, created } = await openOrCreate(ctx, () => ({
      phrase: { entropy: bytesToHex(entropy), nextIndex: 0 },
      accounts: [],
    }));
    const c = ks.contents;
    if (!c.phrase)
      throw new WalletError(
        'usage',
        'this keystore has no recovery phrase (an old wallet): use keys import --seed',
      );
    const index = c.phrase.nextIndex;
    const label = nextLabel(c, ctx.args.values.get('--label'));
    c.accounts.push({ kind: 'derived', index, label, created: Date.now() });
    c.phrase.nextIndex = index + 1;
    saveKeystore(ks);
    const acct = accountsOf(c).find((a) => a.kind === 'derived' && a.index === index)!;
    const phrase = created ? entropyToPhrase(hexToBytes(c.phrase.entropy)).join(' ') : undefined;
    ctx.print(
      {
        label,
        address: acct.address,
        pub_key: acct.pub_key,
        index,
        keystore: ks.path,
        ...(phrase ? { phrase } : {}),
      },
      (phrase
        ? `Created keystore ${ks.path}\nRecovery phrase (write it down, it is shown only now):\n  ${phrase}\n`
        : '') + `Account "${label}": ${acct.address}`,
    );
  },
};

const keysImport: WalletCommand = {
  name: 'keys import',
  summary: 'restore a wallet from its recovery phrase, or add an account from a 32-byte seed',
  usage: '(--phrase WORDS | --seed HEX) [--label NAME]',
  details:
    '--phrase WORDS   the 12 to 24 words of a recovery phrase: makes a new keystore with its first account\n' +
    '--seed HEX       a 32-byte Ed25519 seed (64 hex digits): adds an imported account\n' +
    'Give - as the value to read it from standard input (keeps it out of the process list).',
  example: 'echo "$SEED" | ledger-node keys import --seed - --label treasury',
  flags: { values: ['--label', '--phrase', '--seed'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const phraseArg = ctx.args.values.get('--phrase');
    const seedArg = ctx.args.values.get('--seed');
    if ((phraseArg === undefined) === (seedArg === undefined))
      throw new WalletUsageError('give one of --phrase or --seed');
    if (phraseArg !== undefined) {
      const entropy = phraseToEntropy(await secretArg(ctx.io, phraseArg));
      if (existsSync(ctx.keystorePath))
        throw new WalletError(
          'keystore_exists',
          `a keystore already exists at ${ctx.keystorePath}: restore into another file with --keystore FILE`,
        );
      const label = ctx.args.values.get('--label') ?? 'Account 1';
      const pw = await passphrase(ctx.io, 'New keystore passphrase: ', true);
      const ks = await newKeystore(ctx.keystorePath, pw, {
        phrase: { entropy: bytesToHex(entropy), nextIndex: 1 },
        accounts: [{ kind: 'derived', index: 0, label, created: Date.now() }],
      });
      saveKeystore(ks);
      const acct = accountsOf(ks.contents)[0]!;
      ctx.print(
        { label, address: acct.address, pub_key: acct.pub_key, index: 0, keystore: ks.path },
        `Restored keystore ${ks.path}\nAccount "${label}": ${acct.address}`,
      );
      return;
    }
    const seedHex = (await secretArg(ctx.io, seedArg!)).toLowerCase();
    const seed = hexToBytes(seedHex, 32, 'seed');
    const { ks } = await openOrCreate(ctx, () => ({ accounts: [] }));
    const kp = keyPairFromSeed(seed);
    if (accountsOf(ks.contents).some((a) => a.address === kp.address))
      throw new WalletUsageError(`account ${kp.address} is already in the keystore`);
    const label = nextLabel(ks.contents, ctx.args.values.get('--label'));
    ks.contents.accounts.push({ kind: 'imported', seed: seedHex, label, created: Date.now() });
    saveKeystore(ks);
    ctx.print(
      { label, address: kp.address, pub_key: kp.pub_key, keystore: ks.path },
      `Imported account "${label}": ${kp.address}`,
    );
  },
};

const keysList: WalletCommand = {
  name: 'keys list',
  summary: "the keystore's accounts: label, address, public key",
  usage: '',
  example: 'ledger-node keys list --json',
  async run(ctx) {
    positionals(ctx.args, []);
    const accounts = await ctx.accounts();
    ctx.print(
      accounts.map((a) => ({
        label: a.label,
        address: a.address,
        pub_key: a.pub_key,
        kind: a.kind,
        ...(a.index !== undefined ? { index: a.index } : {}),
      })),
      accounts.length === 0
        ? 'No accounts.'
        : accounts
            .map(
              (a, i) =>
                `#${i + 1}  ${a.label.padEnd(16)} ${a.address}${a.kind === 'imported' ? '  (imported)' : ''}`,
            )
            .join('\n'),
    );
  },
};

export const keysCommands: WalletCommand[] = [keysNew, keysImport, keysList];
