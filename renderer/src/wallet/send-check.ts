import { isProtocolError } from '../../../node-core/protocol/errors.ts';
import { memoBytes } from '../../../node-core/protocol/memo.ts';
import { fieldless } from '../api.ts';
import { parseAddressInput } from '../settings.ts';
import {
  browserSeparators,
  formatAmountInput,
  type NumberSeparators,
  parseAmountInput,
} from './amount-input.ts';
import { InsufficientFundsError } from './writer.ts';

/** The send form's checks, made before anything is signed. */
export interface Draft {
  to: string;
  asset: string;
  amount: string;
  memo: string;
}

export interface Checked {
  destination: string;
  amount: bigint;
  asset: string;
  memo: string;
}

export type Errors = Partial<Record<'to' | 'amount' | 'memo', string>>;

/**
 * Checks a send before anything is signed: the address (64 hex, not this account), the amount
 * (exact decimal units as typed in the person's locale, through parseAmountInput; positive, within
 * the spendable funds), the memo (at most 64 UTF-8 bytes, through memoBytes).
 */
export function checkSend(
  d: Draft,
  from: string,
  spendable: Record<string, bigint> | undefined,
  balances: Record<string, bigint> | undefined,
  seps: NumberSeparators = browserSeparators(),
): { ok: Checked } | { errors: Errors } {
  const errors: Errors = {};
  const addr = parseAddressInput(d.to);
  if ('error' in addr) errors.to = addr.error;
  else if (addr.address === from) errors.to = 'This is the sending account itself: choose another recipient.';
  let amount = 0n;
  const parsed = parseAmountInput(d.amount, seps);
  if (!parsed.ok) errors.amount = parsed.message;
  else if (parsed.micro === 0n) errors.amount = 'Enter an amount greater than 0.';
  else amount = parsed.micro;
  if (!errors.amount) {
    if (spendable === undefined) errors.amount = 'Balances are still loading; try again in a moment.';
    else {
      const free = spendable[d.asset] ?? 0n;
      if (amount > free) {
        errors.amount = new InsufficientFundsError(d.asset, amount, free, balances?.[d.asset] ?? 0n, (m) =>
          formatAmountInput(m, seps, true),
        ).message;
      }
    }
  }
  try {
    memoBytes(d.memo);
  } catch (e) {
    errors.memo = isProtocolError(e) ? capital(fieldless(e)) : String(e);
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    ok: { destination: (addr as { address: string }).address, amount, asset: d.asset, memo: d.memo },
  };
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1) + (s.endsWith('.') ? '' : '.');
}
