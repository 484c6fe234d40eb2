import { groupedUnits } from '../wallet/format.ts';

/**
 * Incoming funds, as notices: which pending (receivable) sends are new since the last look, and the
 * words that tell of them. Pure: IncomingFundsRunner feeds it the accounts' pending lists as they
 * refresh; tests feed it plain lists.
 *
 * The first list seen for an account is its baseline: what was already waiting when the wallet was
 * unlocked is shown on the wallet page, not announced as news. After that, each send hash is told
 * once, however often the list is read again.
 */
export interface PendingEntry {
  hash: string;
  from: string;
  amount: bigint;
  asset: string;
}

export interface Arrival extends PendingEntry {
  /** The receiving account. */
  account: string;
}

export class ArrivalTracker {
  readonly #seen = new Map<string, Set<string>>();

  /** The sends in `pending` not seen before for this account (none on the first look). */
  update(account: string, pending: readonly PendingEntry[]): Arrival[] {
    const seen = this.#seen.get(account);
    if (seen === undefined) {
      this.#seen.set(account, new Set(pending.map((p) => p.hash)));
      return [];
    }
    const fresh = pending.filter((p) => !seen.has(p.hash));
    for (const p of fresh) seen.add(p.hash);
    return fresh.map((p) => ({ ...p, account }));
  }

  /** Forgets an account (removed, or the wallet locked): its next list is a baseline again. */
  forget(account: string): void {
    this.#seen.delete(account);
  }

  accounts(): string[] {
    return [...this.#seen.keys()];
  }
}

export interface NoticeText {
  title: string;
  body: string;
}

const shortAddress = (a: string) => (a.length > 17 ? `${a.slice(0, 8)}…${a.slice(-8)}` : a);

/** Sum per asset, in a stable order (XE first). */
function totals(arrivals: readonly Arrival[]): string {
  const sums = new Map<string, bigint>();
  for (const a of arrivals) sums.set(a.asset, (sums.get(a.asset) ?? 0n) + a.amount);
  return [...sums.entries()]
    .sort(([x], [y]) => (x === 'XE' ? -1 : y === 'XE' ? 1 : x.localeCompare(y)))
    .map(([asset, micro]) => `${groupedUnits(micro)} ${asset}`)
    .join(' and ');
}

/**
 * The notice for a batch of arrivals: "Incoming: 250.5 XE" / "to Savings, from Ana (2ca26366…)".
 * `accountLabel` names the wallet's accounts; `senderName` an address book entry, if any.
 */
export function arrivalNotice(
  arrivals: readonly Arrival[],
  accountLabel: (address: string) => string,
  senderName: (address: string) => string | undefined = () => undefined,
): NoticeText | undefined {
  if (arrivals.length === 0) return undefined;
  const title = `Incoming: ${totals(arrivals)}`;
  const accounts = [...new Set(arrivals.map((a) => a.account))];
  if (arrivals.length === 1) {
    const a = arrivals[0]!;
    const name = senderName(a.from);
    const from = name === undefined ? shortAddress(a.from) : `${name} (${a.from.slice(0, 8)}…)`;
    return { title, body: `To ${accountLabel(a.account)}, from ${from}. Receive it in the wallet.` };
  }
  const where =
    accounts.length === 1 ? `to ${accountLabel(accounts[0]!)}` : `to ${accounts.length} of your accounts`;
  return { title, body: `${arrivals.length} sends ${where}. Receive them in the wallet.` };
}
