import { describe, expect, it } from 'vitest';
import {
  COMMAND_WORDS,
  commandHelp,
  findCommand,
  WALLET_COMMANDS,
} from '../../node-core/cli/wallet/index.ts';
import { WALLET_WORDS } from '../../node-core/cli/wallet/words.ts';
import { parseFlags } from '../../node-core/cli/wallet/args.ts';
import { WalletUsageError } from '../../node-core/cli/wallet/errors.ts';

describe('the wallet command line table', () => {
  it('main.ts dispatches exactly the words the commands have', () => {
    expect([...WALLET_WORDS].sort()).toEqual([...COMMAND_WORDS].sort());
  });

  it('every command has a summary and an example that runs ledger-node', () => {
    for (const c of WALLET_COMMANDS) {
      expect(c.summary, c.name).not.toBe('');
      expect(c.example, c.name).toMatch(/ledger-node /);
      expect(commandHelp(c)).toContain(`Usage: ledger-node ${c.name}`);
    }
  });

  it('finds one-word and group commands, and parses flags strictly', () => {
    expect(findCommand(['keys', 'new', '--label', 'x']).command?.name).toBe('keys new');
    expect(findCommand(['send', 'a', '1']).rest).toEqual(['a', '1']);
    expect(findCommand(['keys', 'nope']).command).toBeUndefined();
    const a = parseFlags(['x', '--memo=hi', '--json', '--node', 'http://n'], { values: ['--memo'] });
    expect(a.positionals).toEqual(['x']);
    expect(a.values.get('--memo')).toBe('hi');
    expect(a.values.get('--node')).toBe('http://n');
    expect(a.switches.has('--json')).toBe(true);
    expect(() => parseFlags(['--memo'], { values: ['--memo'] })).toThrow(WalletUsageError);
    expect(() => parseFlags(['--json=1'])).toThrow(/unknown option --json/);
  });
});
