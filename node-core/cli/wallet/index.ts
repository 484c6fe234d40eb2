import { parseFlags } from './args.ts';
import type { WalletCommand } from './command.ts';
import { WalletContext } from './context.ts';
import { failureOf, WalletUsageError } from './errors.ts';
import { processIo, type WalletIo } from './io.ts';
import { accountCommands } from './account.ts';
import { keysCommands } from './keys.ts';
import { transferCommands } from './transfer.ts';
import { chatCommands } from './chat.ts';
import { leaseCommands } from './lease.ts';
import { multisigCommands } from './multisig.ts';
import { statechainCommands } from './statechain.ts';

/**
 * `ledger-node <wallet command>`: the wallet on the command line, talking to a running node over its
 * HTTP API (`--node URL`, default the local one). Keys stay in the keystore file and in this
 * process. Every command prints a summary, or exact JSON with --json; fails with exit status 1 and
 * the node's error (2 for a command line that cannot run); and has --help with an example.
 */
export const WALLET_COMMANDS: readonly WalletCommand[] = [
  ...keysCommands,
  ...accountCommands,
  ...transferCommands,
  ...multisigCommands,
  ...statechainCommands,
  ...leaseCommands,
  ...chatCommands,
];

/** The first word of every wallet command (`keys`, `send`, ...). */
/** The first word of every wallet command (`keys`, `send`, ...), as the commands name them. */
export const COMMAND_WORDS: ReadonlySet<string> = new Set(WALLET_COMMANDS.map((c) => c.name.split(' ')[0]!));

const COMMON_HELP = `Common options:
  --node URL               the node's API (default $LEDGER_NODE_URL, else http://127.0.0.1:8080)
  --keystore FILE          the keystore (default $LEDGER_KEYSTORE, else keystore.json in the app's data folder)
  --account NAME           the account: its label, address, or #N (default: the first)
  --data-dir DIR           the node's data directory, for its admin-token file (operator commands)
  --admin-token-file FILE  the admin token's file (else $LEDGER_NODE_ADMIN_TOKEN)
  --json                   exact JSON on standard output (amounts and times as digit strings)
  --help                   this help
The keystore's passphrase comes from $LEDGER_KEYSTORE_PASSPHRASE, else a prompt (no echo).
`;

export const WALLET_SUMMARY = `
Wallet commands (a running node; 'ledger-node COMMAND --help' for each):
${WALLET_COMMANDS.map((c) => `  ${c.name.padEnd(18)} ${c.summary}`).join('\n')}
`;

export function commandHelp(c: WalletCommand): string {
  return [
    `Usage: ledger-node ${c.name}${c.usage ? ` ${c.usage}` : ''} [options]`,
    '',
    `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`,
    ...(c.details ? ['', c.details] : []),
    '',
    COMMON_HELP,
    'Example:',
    `  ${c.example}`,
    '',
  ].join('\n');
}

function groupHelp(word: string): string {
  const cmds = WALLET_COMMANDS.filter((c) => c.name.split(' ')[0] === word);
  return [
    `Usage: ledger-node ${word} ${cmds.map((c) => c.name.split(' ')[1]).join('|')} ... [options]`,
    '',
    ...cmds.map((c) => `  ${c.name.padEnd(18)} ${c.summary}`),
    '',
    `'ledger-node ${word} SUBCOMMAND --help' shows each one with an example.`,
    '',
  ].join('\n');
}

/** Finds the command of argv (one word, or a group and its subcommand); the rest are its arguments. */
export function findCommand(argv: readonly string[]): {
  command?: WalletCommand;
  rest: readonly string[];
  group?: string;
} {
  const [first, second] = argv;
  const one = WALLET_COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: argv.slice(1) };
  const two = WALLET_COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, rest: argv.slice(2) };
  return { rest: argv.slice(1), ...(first !== undefined ? { group: first } : {}) };
}

export async function runWallet(argv: readonly string[], io: WalletIo = processIo()): Promise<number> {
  const { command, rest, group } = findCommand(argv);
  if (!command) {
    const wantsHelp = rest.length === 0 || rest.includes('--help') || rest.includes('-h');
    if (wantsHelp) {
      io.stdout.write(groupHelp(group!));
      return rest.length === 0 ? 2 : 0;
    }
    io.stderr.write(
      `ledger-node: ${group} has no subcommand ${rest[0]}; 'ledger-node ${group} --help' lists them\n`,
    );
    return 2;
  }
  let ctx: WalletContext | undefined;
  let json = rest.includes('--json');
  let nodeUrl = '';
  try {
    const args = parseFlags(rest, command.flags);
    if (args.switches.has('--help')) {
      io.stdout.write(commandHelp(command));
      return 0;
    }
    ctx = new WalletContext(io, args);
    json = ctx.json;
    nodeUrl = ctx.nodeUrl;
    await command.run(ctx);
    return 0;
  } catch (e) {
    const f = failureOf(e, nodeUrl || '(the node)');
    if (json) io.stdout.write(`${JSON.stringify(f.json)}\n`);
    io.stderr.write(`ledger-node ${command.name}: ${f.message}\n`);
    if (e instanceof WalletUsageError) io.stderr.write(`'ledger-node ${command.name} --help' shows how\n`);
    return f.exitCode;
  } finally {
    await ctx?.close();
  }
}
