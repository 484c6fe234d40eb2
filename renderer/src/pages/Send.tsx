import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { Block } from '../../../node-core/protocol/block.ts';
import { utf8 } from '../../../node-core/protocol/hex.ts';
import { MAX_MEMO_BYTES } from '../../../node-core/protocol/memo.ts';
import { isPowAbortedError } from '../../../node-core/protocol/pow.ts';
import { ASSETS, formatUnits } from '../../../node-core/protocol/units.ts';
import { Amount, ErrorText, groupedUnits, short } from '../components/common.tsx';
import { keystore, type AccountInfo } from '../keystore/index.ts';
import { contacts } from '../settings.ts';
import { accountWriter } from '../wallet/context.ts';
import { invalidateAccounts, useBalances } from '../wallet/queries.ts';
import { useAction } from '../wallet/useAction.ts';
import { type Checked, checkSend, type Draft } from '../wallet/send-check.ts';

export function SendForm({ account }: { account: AccountInfo }) {
  const qc = useQueryClient();
  const bal = useBalances(account.address);
  const book = contacts.use();
  const [draft, setDraft] = useState<Draft>({ to: '', asset: 'XE', amount: '', memo: '' });
  const [tried, setTried] = useState(false);
  const [review, setReview] = useState<Checked>();
  const send = useAction(async (c: Checked): Promise<Block> => {
    try {
      return await accountWriter().send(
        account.address,
        { destination: c.destination, amount: c.amount, asset: c.asset, memo: c.memo || undefined },
        `send ${groupedUnits(c.amount)} ${c.asset} from ${account.label}`,
      );
    } finally {
      const own = keystore().has(c.destination) ? [c.destination] : [];
      await invalidateAccounts(qc, account.address, ...own);
    }
  });

  const check = checkSend(draft, account.address, bal.data?.spendable, bal.data?.balances);
  const errors = tried && 'errors' in check ? check.errors : {};
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    send.reset();
  };
  const memoLen = utf8(draft.memo).length;
  const free = bal.data?.spendable[draft.asset] ?? 0n;
  const contactName = (a: string) => book.find((c) => c.address === a)?.name;

  const submitReview = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if ('ok' in check) setReview(check.ok);
  };

  if (send.result) {
    return (
      <div className="card" data-testid="send-done">
        <div className="success box" data-testid="send-success">
          Sent <Amount micro={send.result.amount} asset={send.result.asset} /> to{' '}
          <span className="mono">{short(send.result.destination)}</span>.
        </div>
        <p className="small muted">
          Block <span className="mono">{send.result.hash}</span>
        </p>
        <button
          type="button"
          onClick={() => {
            send.reset();
            setReview(undefined);
            setTried(false);
            setDraft({ to: '', asset: draft.asset, amount: '', memo: '' });
          }}
          data-testid="send-another"
        >
          Send another
        </button>
      </div>
    );
  }

  if (review) {
    return (
      <div className="card" data-testid="send-review-card">
        <h2>Check and confirm</h2>
        <table>
          <tbody>
            <tr>
              <th>From</th>
              <td>
                {account.label} <span className="mono small">{short(account.address)}</span>
              </td>
            </tr>
            <tr>
              <th>To</th>
              <td>
                {contactName(review.destination) && <b>{contactName(review.destination)} </b>}
                <span className="mono small" data-testid="review-to">
                  {review.destination}
                </span>
              </td>
            </tr>
            <tr>
              <th>Amount</th>
              <td>
                <Amount micro={review.amount} asset={review.asset} testId="review-amount" />{' '}
                <span className="muted small">({review.amount.toString()} micro-units)</span>
              </td>
            </tr>
            <tr>
              <th>Memo</th>
              <td data-testid="review-memo">{review.memo || <span className="muted">none</span>}</td>
            </tr>
          </tbody>
        </table>
        <p className="hint" style={{ marginTop: 10 }}>
          Sends cannot be undone. The block is signed here and its proof of work is computed on this computer.
        </p>
        {send.error !== undefined && !isPowAbortedError(send.error) && (
          <ErrorText error={send.error} testId="send-error" />
        )}
        {isPowAbortedError(send.error) && <p className="hint">Cancelled: nothing was sent.</p>}
        <div className="row">
          <button
            type="button"
            onClick={() => setReview(undefined)}
            disabled={send.busy}
            data-testid="send-edit"
          >
            Edit
          </button>
          <button
            type="button"
            className="primary"
            onClick={() => void send.run(review)}
            disabled={send.busy}
            data-testid="send-confirm"
          >
            {send.busy ? 'Sending…' : 'Confirm and send'}
          </button>
        </div>
      </div>
    );
  }

  return (
    <form className="card" onSubmit={submitReview} noValidate data-testid="send-form">
      <h2>Send</h2>
      {book.length > 0 && (
        <label className="field">
          <span>Pick a contact</span>
          <select
            value={book.some((c) => c.address === draft.to) ? draft.to : ''}
            onChange={(e) => set({ to: e.target.value })}
            data-testid="send-contact"
          >
            <option value="">—</option>
            {book.map((c) => (
              <option key={c.address} value={c.address}>
                {c.name} ({short(c.address, 6)})
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="field">
        <span>Recipient address</span>
        <input
          className="mono"
          value={draft.to}
          onChange={(e) => set({ to: e.target.value })}
          placeholder="64 hexadecimal characters"
          spellCheck={false}
          autoComplete="off"
          aria-invalid={errors.to !== undefined}
          data-testid="send-to"
        />
        {errors.to && (
          <span className="field-error" data-testid="send-to-error">
            {errors.to}
          </span>
        )}
      </label>
      <div className="row" style={{ alignItems: 'flex-start' }}>
        <label className="field" style={{ flex: 1 }}>
          <span>Amount</span>
          <input
            value={draft.amount}
            inputMode="decimal"
            onChange={(e) => set({ amount: e.target.value })}
            placeholder="0.00"
            autoComplete="off"
            aria-invalid={errors.amount !== undefined}
            data-testid="send-amount"
          />
          {errors.amount && (
            <span className="field-error" data-testid="send-amount-error">
              {errors.amount}
            </span>
          )}
          <span className="hint">
            Spendable:{' '}
            {bal.data ? (
              <button
                type="button"
                className="link"
                onClick={() => set({ amount: formatUnits(free) })}
                data-testid="send-max"
              >
                {groupedUnits(free)} {draft.asset}
              </button>
            ) : (
              '…'
            )}
          </span>
        </label>
        <label className="field">
          <span>Asset</span>
          <select
            value={draft.asset}
            onChange={(e) => set({ asset: e.target.value })}
            data-testid="send-asset"
          >
            {ASSETS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="field">
        <span>Memo (optional, public)</span>
        <input
          value={draft.memo}
          onChange={(e) => set({ memo: e.target.value })}
          aria-invalid={errors.memo !== undefined}
          data-testid="send-memo"
        />
        <span className={memoLen > MAX_MEMO_BYTES ? 'field-error' : 'hint'}>
          {memoLen} / {MAX_MEMO_BYTES} bytes
        </span>
        {errors.memo && (
          <span className="field-error" data-testid="send-memo-error">
            {errors.memo}
          </span>
        )}
      </label>
      <ErrorText error={bal.error} />
      <button type="submit" className="primary" data-testid="send-review">
        Review
      </button>
    </form>
  );
}
