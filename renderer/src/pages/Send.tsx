import { useQueryClient } from '@tanstack/react-query';
import { useId, useMemo, useRef, useState, type FormEvent } from 'react';
import type { Block } from '../../../node-core/protocol/block.ts';
import { utf8 } from '../../../node-core/protocol/hex.ts';
import { MAX_MEMO_BYTES } from '../../../node-core/protocol/memo.ts';
import { ASSETS } from '../../../node-core/protocol/units.ts';
import { dismissAction, startAction, useLatestAction, useWatchAction } from '../activity/actions.ts';
import { ErrorText, short } from '../components/common.tsx';
import { keystore, useKeystore, type AccountInfo } from '../keystore/index.ts';
import { href } from '../router.ts';
import { contacts } from '../settings.ts';
import { AddressLabel } from '../wallet/AddressLabel.tsx';
import {
  amountExample,
  browserSeparators,
  formatAmountInput,
  parseAmountInput,
} from '../wallet/amount-input.ts';
import { accountWriter } from '../wallet/context.ts';
import { useAddressNames } from '../wallet/names.ts';
import { invalidateAccounts, useBalances } from '../wallet/queries.ts';
import { useRecipientSeen } from '../wallet/recipient-seen.ts';
import { type Checked, checkSend, type Draft } from '../wallet/send-check.ts';
import { PaymentLinkNotice } from '../deeplink/PaymentLinkNotice.tsx';
import { usePaymentPrefill } from '../deeplink/payment-link.ts';

/**
 * Send: a form, a review that asks before sending to an address nobody has used, then the send runs
 * in the activity store (activity/actions.ts) so it goes on when the person leaves this page; coming
 * back shows it still running, or how it ended, never an empty form that hides it.
 */
export function SendForm({ account }: { account: AccountInfo }) {
  const qc = useQueryClient();
  const bal = useBalances(account.address);
  const ks = useKeystore();
  const book = contacts.use();
  const nameOf = useAddressNames();
  const seps = useMemo(() => browserSeparators(), []);
  // The send form writes amounts as the person types them (their locale), so "1.000,5" reads back.
  const fmt = (m: bigint) => formatAmountInput(m, seps, true);
  const [draft, setDraft] = useState<Draft>({ to: '', asset: 'XE', amount: '', memo: '' });
  const [tried, setTried] = useState(false);
  const [review, setReview] = useState<Checked>();
  const latest = useLatestAction<Checked, Block>('send', account.address);
  useWatchAction(latest?.id);
  // A payment link (xe:…) fills the form; the person still reviews and confirms.
  const link = usePaymentPrefill((r) => {
    if (latest && latest.state !== 'running') dismissAction(latest.id);
    setReview(undefined);
    setTried(false);
    setDraft({
      to: r.address,
      asset: r.asset,
      amount: r.amount === undefined ? '' : formatAmountInput(r.amount, seps),
      memo: r.memo ?? '',
    });
  });

  const start = (c: Checked) => {
    const to = nameOf(c.destination)?.name ?? short(c.destination, 6);
    const what = `${fmt(c.amount)} ${c.asset}`;
    startAction<Checked, Block>({
      kind: 'send',
      account: account.address,
      title: `Send ${what} to ${to}`,
      input: c,
      cancelled: 'cancelled, nothing was sent.',
      run: async () => {
        try {
          return await accountWriter().send(
            account.address,
            { destination: c.destination, amount: c.amount, asset: c.asset, memo: c.memo || undefined },
            `send ${what} from ${account.label}`,
          );
        } finally {
          const own = keystore().has(c.destination) ? [c.destination] : [];
          await invalidateAccounts(qc, account.address, ...own);
        }
      },
      describe: (b) => ({ text: `Sent ${what} to ${to}.`, blockHash: b.hash }),
    });
    setReview(undefined);
  };

  const check = checkSend(draft, account.address, bal.data?.spendable, bal.data?.balances, seps);
  const errors = tried && 'errors' in check ? check.errors : {};
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const memoLen = utf8(draft.memo).length;
  const free = bal.data?.spendable[draft.asset] ?? 0n;
  const ownChoices = ks.accounts.filter((a) => a.address !== account.address);
  const bookChoices = book.filter((c) => !ks.accounts.some((a) => a.address === c.address));
  const picked = [...ownChoices.map((a) => a.address), ...bookChoices.map((c) => c.address)].includes(
    draft.to,
  )
    ? draft.to
    : '';

  const uid = useId();
  const toRef = useRef<HTMLInputElement>(null);
  const amountRef = useRef<HTMLInputElement>(null);
  const memoRef = useRef<HTMLInputElement>(null);
  // "1,5" typed under English separators: the exact fix, one click away.
  const parsedAmount = errors.amount ? parseAmountInput(draft.amount, seps) : undefined;
  const amountFix = parsedAmount && !parsedAmount.ok ? parsedAmount.suggestion : undefined;

  const submitReview = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if ('ok' in check) {
      setReview(check.ok);
      return;
    }
    // Keyboard users land on the first field to fix.
    const first = check.errors.to ? toRef : check.errors.amount ? amountRef : memoRef;
    first.current?.focus();
  };

  const editAgain = (c: Checked) => {
    setDraft({ to: c.destination, asset: c.asset, amount: formatAmountInput(c.amount, seps), memo: c.memo });
    setReview(undefined);
  };

  if (latest?.state === 'running') {
    return (
      <div className="card" data-testid="send-running" aria-busy="true">
        <h2>Sending…</h2>
        <p>
          <LocalAmount micro={latest.input.amount} asset={latest.input.asset} fmt={fmt} /> to{' '}
          <AddressLabel address={latest.input.destination} />
        </p>
        <p className="hint">
          This computer is doing the proof of work the network asks for (progress in the panel below). You can
          leave this page: the send goes on, and a notice tells you when it is done.
        </p>
      </div>
    );
  }

  if (latest?.state === 'done' && latest.result) {
    const b = latest.result;
    return (
      <div className="card" data-testid="send-done">
        <div className="success box" data-testid="send-success">
          Sent <LocalAmount micro={b.amount ?? 0n} asset={b.asset} fmt={fmt} /> to{' '}
          <AddressLabel address={b.destination} />.
        </div>
        <details className="details">
          <summary>Details</summary>
          <p className="small">
            Block{' '}
            <a className="mono" href={href('explorer', 'block', b.hash ?? '')} data-testid="send-block-link">
              {b.hash}
            </a>
          </p>
        </details>
        <button
          type="button"
          onClick={() => {
            dismissAction(latest.id);
            setTried(false);
            setDraft({ to: '', asset: b.asset, amount: '', memo: '' });
          }}
          data-testid="send-another"
        >
          Send another
        </button>
      </div>
    );
  }

  // A send that failed or was cancelled comes back as its review, with what happened.
  const failed = latest && (latest.state === 'failed' || latest.state === 'cancelled') ? latest : undefined;
  const shown = review ?? failed?.input;
  if (shown) {
    return (
      <ReviewCard
        fmt={fmt}
        from={account}
        c={shown}
        error={failed?.state === 'failed' ? failed.error : undefined}
        cancelled={failed?.state === 'cancelled'}
        onEdit={() => {
          if (failed) dismissAction(failed.id);
          editAgain(shown);
        }}
        onConfirm={() => {
          if (failed) dismissAction(failed.id);
          start(shown);
        }}
      />
    );
  }

  return (
    <form className="card" onSubmit={submitReview} noValidate data-testid="send-form">
      <h2>Send</h2>
      <PaymentLinkNotice link={link} />
      {(ownChoices.length > 0 || bookChoices.length > 0) && (
        <label className="field">
          <span>Pick a recipient</span>
          <select value={picked} onChange={(e) => set({ to: e.target.value })} data-testid="send-contact">
            <option value="">—</option>
            {ownChoices.length > 0 && (
              <optgroup label="My accounts">
                {ownChoices.map((a) => (
                  <option key={a.address} value={a.address}>
                    {a.label} ({short(a.address, 6)})
                  </option>
                ))}
              </optgroup>
            )}
            {bookChoices.length > 0 && (
              <optgroup label="Address book">
                {bookChoices.map((c) => (
                  <option key={c.address} value={c.address}>
                    {c.name} ({short(c.address, 6)})
                  </option>
                ))}
              </optgroup>
            )}
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
          aria-describedby={errors.to ? `${uid}-to-error` : undefined}
          ref={toRef}
          data-testid="send-to"
        />
        {errors.to && (
          <span className="field-error" id={`${uid}-to-error`} data-testid="send-to-error">
            {errors.to}
          </span>
        )}
        {!errors.to && nameOf(draft.to.trim().toLowerCase()) && (
          <span className="hint" data-testid="send-to-name">
            <AddressLabel address={draft.to.trim().toLowerCase()} />
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
            placeholder={`for example ${amountExample(seps)}`}
            autoComplete="off"
            aria-invalid={errors.amount !== undefined}
            aria-describedby={`${errors.amount ? `${uid}-amount-error ` : ''}${uid}-amount-hint`}
            ref={amountRef}
            data-testid="send-amount"
          />
          {errors.amount && (
            <span className="field-error" id={`${uid}-amount-error`} data-testid="send-amount-error">
              {errors.amount}
            </span>
          )}
          {amountFix && (
            <span>
              <button
                type="button"
                className="link"
                onClick={() => {
                  set({ amount: amountFix });
                  amountRef.current?.focus();
                }}
                data-testid="send-amount-fix"
              >
                Use {amountFix}
              </button>
            </span>
          )}
          <span className="hint" id={`${uid}-amount-hint`}>
            Available to send:{' '}
            {bal.data ? (
              <button
                type="button"
                className="link"
                onClick={() => set({ amount: formatAmountInput(free, seps) })}
                data-testid="send-max"
              >
                {fmt(free)} {draft.asset}
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
        <span>Memo (optional, anyone can read it)</span>
        <input
          value={draft.memo}
          onChange={(e) => set({ memo: e.target.value })}
          aria-invalid={errors.memo !== undefined}
          aria-describedby={`${uid}-memo-count${errors.memo ? ` ${uid}-memo-error` : ''}`}
          ref={memoRef}
          data-testid="send-memo"
        />
        <span className={memoLen > MAX_MEMO_BYTES ? 'field-error' : 'hint'} id={`${uid}-memo-count`}>
          {memoLen} / {MAX_MEMO_BYTES} bytes
        </span>
        {errors.memo && (
          <span className="field-error" id={`${uid}-memo-error`} data-testid="send-memo-error">
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

/** The last look before signing; an address nobody has used needs an explicit "yes, send". */
function ReviewCard({
  fmt,
  from,
  c,
  error,
  cancelled,
  onEdit,
  onConfirm,
}: {
  fmt(micro: bigint): string;
  from: AccountInfo;
  c: Checked;
  error: unknown;
  cancelled: boolean;
  onEdit(): void;
  onConfirm(): void;
}) {
  const name = useAddressNames()(c.destination);
  const known = name !== undefined;
  const seen = useRecipientSeen(c.destination, !known);
  const [ack, setAck] = useState(false);
  // Only a fresh answer counts: a cached "never" from before a send must not ask again.
  const checking = !known && seen.isFetching;
  const needsAck = !known && !checking && (seen.data === 'never' || seen.isError);
  const blocked = checking;
  return (
    <div className="card" data-testid="send-review-card">
      <h2>Check and confirm</h2>
      <table>
        <tbody>
          <tr>
            <th>From</th>
            <td>
              {from.label} <span className="mono small">{short(from.address)}</span>
            </td>
          </tr>
          <tr>
            <th>To</th>
            <td>
              {/* The whole address: the one place it must be checked character by character. */}
              {name && (
                <span data-testid="review-to-label">
                  <b>{name.name}</b>
                  {name.kind === 'own' && <span className="badge own">yours</span>}
                </span>
              )}
              <div className="mono small" style={{ overflowWrap: 'anywhere' }} data-testid="review-to">
                {c.destination}
              </div>
            </td>
          </tr>
          <tr>
            <th>Amount</th>
            <td>
              <LocalAmount micro={c.amount} asset={c.asset} fmt={fmt} testId="review-amount" />
            </td>
          </tr>
          <tr>
            <th>Memo</th>
            <td data-testid="review-memo">{c.memo || <span className="muted">none</span>}</td>
          </tr>
        </tbody>
      </table>
      <details className="details">
        <summary>Details</summary>
        <p className="small">
          Amount in micro-units: <span className="mono">{c.amount.toString()}</span>
        </p>
        <p className="small">
          The block is signed in this window and its proof of work is computed on this computer before it goes
          to the node.
        </p>
      </details>
      {checking && (
        <p className="hint" data-testid="send-checking-recipient">
          Checking whether this address has been used…
        </p>
      )}
      {needsAck && (
        <div className="warn box" role="alert" data-testid="send-unknown-recipient">
          {seen.isError ? (
            <p>Could not check this address with the node ({String((seen.error as Error).message)}).</p>
          ) : (
            <p>
              <b>This address has never been used.</b> No account has it and nothing has been sent to it yet.
              Check it character by character: a send to a mistyped address cannot be taken back.
            </p>
          )}
          <label className="check" style={{ margin: 0 }}>
            <input
              type="checkbox"
              checked={ack}
              onChange={(e) => setAck(e.target.checked)}
              data-testid="send-unknown-ack"
            />
            I have checked the address: send to it anyway
          </label>
        </div>
      )}
      <p className="hint" style={{ marginTop: 10 }}>
        A send cannot be undone.
      </p>
      {error !== undefined && <ErrorText error={error} testId="send-error" />}
      {cancelled && <p className="hint">Cancelled: nothing was sent.</p>}
      <div className="row">
        <button type="button" onClick={onEdit} data-testid="send-edit">
          Edit
        </button>
        <button
          type="button"
          className="primary"
          onClick={onConfirm}
          disabled={blocked || (needsAck && !ack)}
          data-testid="send-confirm"
        >
          {error !== undefined || cancelled ? 'Try again' : 'Confirm and send'}
        </button>
      </div>
    </div>
  );
}

/** An amount in the person's own separators (the Amount component writes "1,000.5" everywhere). */
function LocalAmount({
  micro,
  asset,
  fmt,
  testId,
}: {
  micro: bigint;
  asset: string;
  fmt(micro: bigint): string;
  testId?: string;
}) {
  return (
    <span className="amount" data-testid={testId} data-micro={micro.toString()}>
      {fmt(micro)} {asset}
    </span>
  );
}
