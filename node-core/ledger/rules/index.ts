import { LEASE_RULES } from '../../leasing/rules/index.ts';
import { LedgerError } from '../errors.ts';
import { burnRule } from './burn.ts';
import { claimRule } from './claim.ts';
import { mintRule } from './mint.ts';
import { multisigOpenRule, multisigUpdateRule } from './multisig.ts';
import { receiveRule } from './receive.ts';
import { sendRule } from './send.ts';
import type { Effects, RuleInput, TypeRule } from './types.ts';

export type { Effects, RuleInput, RuleView, SignedBlock, TypeRule } from './types.ts';

/** The type rules this ledger applies, by block type (reference-behavior.md section 3.2). */
const RULES: Readonly<Record<string, TypeRule>> = {
  claim: claimRule,
  send: sendRule,
  receive: receiveRule,
  burn: burnRule,
  mint: mintRule,
  multisig_open: multisigOpenRule,
  multisig_update: multisigUpdateRule,
  ...LEASE_RULES,
};

/** The rule of the block's type: its expected post-block balance and its effects. */
export function applyTypeRule(input: RuleInput): Effects {
  const rule = RULES[input.block.type];
  if (rule === undefined) {
    throw new LedgerError(
      'unsupported_type',
      `${input.block.type} blocks are not supported by this node yet`,
    );
  }
  return rule(input);
}
