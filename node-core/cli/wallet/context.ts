import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { adminTokenFromEnv, readAdminTokenFile } from '../../admin-token.ts';
import { LedgerClient } from '../../client/client.ts';
import { createPowEngine, type PowEngine } from '../../client/pow-node.ts';
import { Wallet } from '../../client/wallet.ts';
import { defaultDataDir } from '../paths.ts';
import type { ParsedArgs } from './args.ts';
import { exactJson, passphrase, powProgress, type WalletIo } from './io.ts';
import {
  type Account,
  accountsOf,
  defaultKeystorePath,
  openKeystore,
  type OpenKeystore,
  selectAccount,
} from './keystore.ts';

/**
 * What a wallet command works with: the node's client (admin token from LEDGER_NODE_ADMIN_TOKEN, or
 * the data directory's admin-token file when there is one), the keystore (opened on first use, with
 * the passphrase from the environment or a prompt), the account, and the proof-of-work engine
 * (the multi-core solver) with its progress line. Everything opened is closed by close().
 */
export const DEFAULT_NODE_URL = 'http://127.0.0.1:8080';
export const NODE_URL_ENV = 'LEDGER_NODE_URL';

export class WalletContext {
  readonly io: WalletIo;
  readonly args: ParsedArgs;
  readonly nodeUrl: string;
  readonly json: boolean;
  readonly keystorePath: string;
  #client: LedgerClient | undefined;
  #keystore: OpenKeystore | undefined;
  #pow: PowEngine | undefined;
  #progress: ReturnType<typeof powProgress> | undefined;

  constructor(io: WalletIo, args: ParsedArgs) {
    this.io = io;
    this.args = args;
    this.nodeUrl = (args.values.get('--node') ?? io.env[NODE_URL_ENV] ?? DEFAULT_NODE_URL).replace(
      /\/+$/,
      '',
    );
    this.json = args.switches.has('--json');
    this.keystorePath = args.values.get('--keystore') ?? defaultKeystorePath(io.env);
  }

  get client(): LedgerClient {
    this.#client ??= new LedgerClient(this.nodeUrl, { adminToken: this.adminToken() });
    return this.#client;
  }

  private adminToken(): string | undefined {
    const file = this.args.values.get('--admin-token-file');
    if (file !== undefined) return readAdminTokenFile(file);
    const env = adminTokenFromEnv(this.io.env);
    if (env !== undefined) return env;
    const fromDir = join(this.args.values.get('--data-dir') ?? defaultDataDir(), 'admin-token');
    if (this.args.values.has('--data-dir')) return readAdminTokenFile(fromDir);
    // The local node's token, when this user can read it: only operator routes need it, so a file that
    // is absent or refused (open to other users) must not stop a balance or a send.
    try {
      return existsSync(fromDir) ? readAdminTokenFile(fromDir) : undefined;
    } catch {
      return undefined;
    }
  }

  async keystore(): Promise<OpenKeystore> {
    this.#keystore ??= await openKeystore(this.keystorePath, await passphrase(this.io));
    return this.#keystore;
  }

  async accounts(): Promise<Account[]> {
    return accountsOf((await this.keystore()).contents);
  }

  async account(): Promise<Account> {
    return selectAccount(await this.accounts(), this.args.values.get('--account'));
  }

  /** The multi-core solver, its progress on stderr. */
  pow(what: string): PowEngine {
    this.#progress = powProgress(this.io, what);
    this.#pow ??= createPowEngine({ onProgress: (p) => this.#progress?.onProgress(p) });
    return this.#pow;
  }

  /** Every occurrence of the given flags, in order (`--set a=1 --set b=2`). */
  rawFlags(names: readonly string[]): [string, string][] {
    return this.args.all.filter(([n]) => names.includes(n));
  }

  /** Ends the progress line of the last solve. */
  powDone(): void {
    this.#progress?.done();
  }

  /** A wallet for the account on the node: blocks built from its chain, solved by the solver. */
  async wallet(account: Account, what: string): Promise<Wallet> {
    const pow = this.pow(what);
    return Wallet.open(this.client, account.seed, async (target, difficulty) => {
      try {
        return await pow.solve(target, difficulty);
      } finally {
        this.#progress?.done();
      }
    });
  }

  /** Prints the command's result: `text` for people, `value` as exact JSON with --json. */
  print(value: unknown, text: string): void {
    this.io.stdout.write(this.json ? `${exactJson(value)}\n` : text.endsWith('\n') ? text : `${text}\n`);
  }

  async close(): Promise<void> {
    this.#keystore?.key.fill(0);
    await this.#pow?.close();
  }
}
