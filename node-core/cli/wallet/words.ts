/**
 * The first words of the wallet commands, so `ledger-node` can tell one from the node's own flags
 * without loading the wallet's modules (test/unit/client-cli-words.test.ts holds it equal to the
 * commands' names).
 */
export const WALLET_WORDS: ReadonlySet<string> = new Set([
  'keys',
  'balance',
  'history',
  'send',
  'receive',
  'claim',
  'burn',
  'mint',
  'multisig',
  'statechain',
  'lease',
  'chat',
]);

export const WALLET_HELP_LINE =
  '\nWallet commands talk to a running node: ledger-node keys|balance|history|send|receive|claim|burn|mint|multisig|statechain|lease|chat ... --help\n';
