import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type FormEvent } from 'react';
import type { PendingSend } from '../../../node-core/client/client.ts';
import type { Block } from '../../../node-core/protocol/block.ts';
import { ActivityList } from '../activity/ActivityList.tsx';
import { startAction, useLatestAction, useWatchAction } from '../activity/actions.ts';
import { errorMessage } from '../api.ts';
import {
  Amount,
  CopyButton,
  Empty,
  ErrorText,
  Identicon,
  Loading,
  short,
  timeOf,
  groupedUnits,
} from '../components/common.tsx';
import { keystore, useKeystore, type AccountInfo } from '../keystore/index.ts';
import { href, navigate } from '../router.ts';
import { settings, updateSettings } from '../settings.ts';
import { AddressLabel } from '../wallet/AddressLabel.tsx';
import type { AccountBalances } from '../wallet/balances.ts';
import { accountWriter } from '../wallet/context.ts';
import { TEST_FUNDS } from '../wallet/faucet.ts';
import {
  invalidateAccounts,
  useBalances,
  useBalancesMany,
  useClaimAllowance,
  useFaucet,
  usePending,
  usePendingMany,
} from '../wallet/queries.ts';
import { History } from './History.tsx';
import { ImportSeed, SeedBackupFlow } from './SeedFlows.tsx';
import { SendForm } from './Send.tsx';

const AddressQr = lazy(() => import('./AddressQr.tsx'));

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'send', label: 'Send' },
  { id: 'receive', label: 'Receive' },
  { id: 'history', label: 'History' },
] as const;

/** The wallet: the keystore's accounts on the left, the chosen one's balances, send, receive, history. */
export function WalletPage({ route }: { route: string[] }) {
  const ks = useKeystore();
  const chosen = settings.use().selectedAccount;
  if (route[1] === 'add') return <AddAccount mode={route[2] === 'import' ? 'import' : 'create'} />;
  const account = ks.accounts.find((a) => a.address === chosen) ?? ks.accounts[0];
  if (!account) return <Empty>No accounts yet.</Empty>;
  const tab = TABS.find((t) => t.id === route[1])?.id ?? 'overview';
  return (
    <div className="wallet page" data-testid="wallet-page">
      <AccountList accounts={ks.accounts} selected={account.address} />
      <div style={{ minWidth: 0 }}>
        <AccountHeader account={account} />
        <nav className="tabs" aria-label="Account">
          {TABS.map((t) => (
            <a
              key={t.id}
              href={href('wallet', t.id)}
              className={`tab${tab === t.id ? ' active' : ''}`}
              data-testid={`tab-${t.id}`}
              aria-current={tab === t.id ? 'page' : undefined}
            >
              {t.label}
            </a>
          ))}
        </nav>
        {tab === 'overview' && <Overview account={account} />}
        {tab === 'send' && <SendForm key={account.address} account={account} />}
        {tab === 'receive' && <ReceiveTab account={account} />}
        {tab === 'history' && <History key={account.address} address={account.address} />}
      </div>
    </div>
  );
}

function AccountList({ accounts, selected }: { accounts: readonly AccountInfo[]; selected: string }) {
  const addresses = accounts.map((a) => a.address);
  const balances = useBalancesMany(addresses);
  const pending = usePendingMany(addresses);
  return (
    <aside className="accounts" data-testid="account-list">
      {accounts.map((a, i) => {
        const xe = balances[i]?.data?.balances.XE;
        const incoming = pending[i]?.data?.length ?? 0;
        return (
          <button
            key={a.address}
            type="button"
            className={`account-item${a.address === selected ? ' active' : ''}`}
            onClick={() => updateSettings({ selectedAccount: a.address })}
            data-testid="account-item"
            data-address={a.address}
            aria-pressed={a.address === selected}
          >
            <div className="row" style={{ flexWrap: 'nowrap' }}>
              <Identicon address={a.address} />
              <div style={{ minWidth: 0 }}>
                <div>
                  <b>{a.label}</b>
                </div>
                <div className="mono small muted">{short(a.address, 6)}</div>
                <div className="small">
                  {balances[i]?.isLoading ? (
                    '…'
                  ) : balances[i]?.isError ? (
                    <span className="error" title={errorMessage(balances[i]?.error)}>
                      balance unavailable
                    </span>
                  ) : (
                    <Amount micro={xe ?? 0n} asset="XE" />
                  )}
                  {incoming > 0 && <span className="badge in"> {incoming} incoming</span>}
                </div>
              </div>
            </div>
          </button>
        );
      })}
      <button type="button" onClick={() => navigate('wallet', 'add', 'create')} data-testid="add-account">
        + New account
      </button>
      <button type="button" onClick={() => navigate('wallet', 'add', 'import')} data-testid="import-account">
        Import account
      </button>
    </aside>
  );
}

function AccountHeader({ account }: { account: AccountInfo }) {
  const [editing, setEditing] = useState(false);
  const [label, setLabel] = useState(account.label);
  const [error, setError] = useState<string>();
  const save = (e: FormEvent) => {
    e.preventDefault();
    try {
      keystore().renameAccount(account.address, label);
      setEditing(false);
      setError(undefined);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <div className="card">
      <div className="row" style={{ flexWrap: 'nowrap', alignItems: 'flex-start' }}>
        <Identicon address={account.address} size={40} />
        <div style={{ minWidth: 0, flex: 1 }}>
          {editing ? (
            <form className="row" onSubmit={save}>
              <input
                value={label}
                maxLength={40}
                onChange={(e) => setLabel(e.target.value)}
                autoFocus
                data-testid="rename-input"
              />
              <button type="submit" className="primary" data-testid="rename-save">
                Save
              </button>
              <button type="button" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </form>
          ) : (
            <div className="row">
              <h1 style={{ margin: 0 }} data-testid="account-title">
                {account.label}
              </h1>
              <button
                type="button"
                className="link"
                onClick={() => {
                  setLabel(account.label);
                  setEditing(true);
                }}
                data-testid="rename"
              >
                Rename
              </button>
            </div>
          )}
          {error && <div className="field-error">{error}</div>}
          <div className="row" style={{ marginTop: 6 }}>
            <span className="mono" data-testid="account-address">
              {account.address}
            </span>
            <CopyButton text={account.address} testId="copy-address" />
          </div>
        </div>
      </div>
    </div>
  );
}

function Overview({ account }: { account: AccountInfo }) {
  return (
    <div className="grid2">
      <BalancesCard address={account.address} />
      <TestFundsCard account={account} />
      <div style={{ gridColumn: '1 / -1' }}>
        <PendingCard account={account} />
        <ActivityList account={account.address} />
      </div>
    </div>
  );
}

export function BalancesCard({ address }: { address: string }) {
  const bal = useBalances(address);
  const pending = usePending(address);
  const incoming: Record<string, bigint> = {};
  for (const p of pending.data ?? []) incoming[p.asset] = (incoming[p.asset] ?? 0n) + p.amount;
  const assets = [
    ...new Set(['XE', ...Object.keys(bal.data?.balances ?? {}), ...Object.keys(incoming)]),
  ].sort();
  return (
    <div className="card" data-testid="balances">
      <h2>Balances</h2>
      {bal.isLoading && <Loading what="Loading balances" />}
      <ErrorText error={bal.error} />
      {bal.data &&
        assets.map((asset) => {
          const total = bal.data.balances[asset] ?? 0n;
          const spendable = bal.data.spendable[asset] ?? 0n;
          const confirming = total > spendable ? total - spendable : 0n;
          return (
            <div key={asset} style={{ marginBottom: 10 }} data-testid={`balance-${asset}`}>
              <div className="big">
                <Amount micro={total} asset={asset} testId={`balance-total-${asset}`} />
              </div>
              <div className="balance-line small">
                <span className="muted">available</span>
                <Amount micro={spendable} asset={asset} testId={`balance-spendable-${asset}`} />
                {confirming > 0n && (
                  <>
                    <span className="muted">confirming</span>
                    <span data-testid={`balance-confirming-${asset}`}>
                      <Amount micro={confirming} asset={asset} />
                      <span className="muted"> waiting for confirmation</span>
                    </span>
                  </>
                )}
                <span className="muted">incoming</span>
                <span>
                  <Amount micro={incoming[asset] ?? 0n} asset={asset} testId={`balance-pending-${asset}`} />
                  <span className="muted"> sent to you, not yet received</span>
                </span>
              </div>
            </div>
          );
        })}
      {bal.data && <BalanceStatus data={bal.data} />}
    </div>
  );
}

/** Whether everything is confirmed, in words; the finality height is one click away. */
function BalanceStatus({ data }: { data: AccountBalances }) {
  const waiting = Object.entries(data.balances).filter(([a, v]) => v > (data.spendable[a] ?? 0n));
  return (
    <div className="hint" data-testid="balance-status">
      {waiting.length === 0
        ? 'Everything is confirmed.'
        : `Waiting for confirmation: ${waiting
            .map(([a, v]) => `${groupedUnits(v - (data.spendable[a] ?? 0n))} ${a}`)
            .join(', ')}. It can be sent once the network confirms it, usually within seconds.`}
      <details className="details">
        <summary>Details</summary>
        {data.source === 'node'
          ? 'Available funds are computed here from the chain’s finality flags (this node has no proxy API).'
          : data.finalHeight === 0
            ? 'No block of this account is final yet.'
            : `Final up to block ${data.finalHeight ?? '?'} of this account’s chain: blocks up to there are confirmed by the network’s representatives.`}
      </details>
    </div>
  );
}

function TestFundsCard({ account }: { account: AccountInfo }) {
  const qc = useQueryClient();
  const faucet = useFaucet();
  const allowance = useClaimAllowance(account.address);
  const latest = useLatestAction<bigint, Block>('claim', account.address);
  useWatchAction(latest?.id);
  const busy = latest?.state === 'running';
  const runClaim = () => {
    const left = allowance.data?.left ?? TEST_FUNDS;
    const amount = left < TEST_FUNDS ? left : TEST_FUNDS;
    startAction<bigint, Block>({
      kind: 'claim',
      account: account.address,
      title: `Test funds for ${account.label}`,
      input: amount,
      run: async () => {
        try {
          return await accountWriter().claim(account.address, amount, `test funds for ${account.label}`);
        } finally {
          await invalidateAccounts(qc, account.address);
        }
      },
      describe: (b) => ({
        text: `Claimed ${groupedUnits(amount)} XE of test funds for ${account.label}.`,
        blockHash: b.hash,
      }),
    });
  };
  const usedUp = allowance.data !== undefined && allowance.data.left === 0n;
  return (
    <div className="card" data-testid="test-funds">
      <h2>Test funds</h2>
      {faucet.isLoading && <Loading />}
      <ErrorText error={faucet.error} />
      {faucet.data === null && <Empty>This network has no faucet.</Empty>}
      {faucet.data && (
        <>
          <p className="muted">
            The faucet gives {groupedUnits(faucet.data.amount)} XE per account every{' '}
            {Number(faucet.data.periodNs / 3_600_000_000_000n)} hours.
          </p>
          <button
            type="button"
            className="primary"
            disabled={busy || usedUp}
            onClick={runClaim}
            data-testid="claim-button"
          >
            {busy ? 'Claiming…' : 'Get test funds'}
          </button>
          {usedUp && (
            <p className="hint" data-testid="claim-used-up" style={{ marginTop: 8 }}>
              This account has claimed its test funds for this period
              {allowance.data?.nextAt ? `; more from ${timeOf(allowance.data.nextAt)}` : ''}.
            </p>
          )}
          {busy && (
            <p className="hint" style={{ marginTop: 8 }}>
              Working on it: the proof of work runs on this computer. You can leave this page meanwhile.
            </p>
          )}
          {latest?.state === 'done' && (
            <div className="success box" data-testid="claim-success">
              Claimed {groupedUnits(latest.input)} XE.
            </div>
          )}
          {latest?.state === 'failed' && <ErrorText error={latest.error} testId="claim-error" />}
          {latest?.state === 'cancelled' && <p className="hint">Cancelled.</p>}
        </>
      )}
    </div>
  );
}

export function PendingCard({ account }: { account: AccountInfo }) {
  const qc = useQueryClient();
  const pending = usePending(account.address);
  const auto = settings.use().autoReceive;
  const latest = useLatestAction<PendingSend[], number>('receive', account.address);
  useWatchAction(latest?.id);
  const busy = latest?.state === 'running';
  const receive = (entries: PendingSend[]) => {
    const one = entries.length === 1 ? entries[0] : undefined;
    startAction<PendingSend[], number>({
      kind: 'receive',
      account: account.address,
      title: one
        ? `Receive ${groupedUnits(one.amount)} ${one.asset} into ${account.label}`
        : `Receive ${entries.length} incoming sends into ${account.label}`,
      input: entries,
      run: async () => {
        try {
          for (const p of entries) {
            await accountWriter().receive(
              account.address,
              p,
              `receive ${groupedUnits(p.amount)} ${p.asset} into ${account.label}`,
            );
          }
        } finally {
          await invalidateAccounts(qc, account.address);
        }
        return entries.length;
      },
      describe: (n) => ({ text: `Received ${n} ${n === 1 ? 'send' : 'sends'} into ${account.label}.` }),
    });
  };
  const list = pending.data ?? [];
  return (
    <div className="card" data-testid="pending">
      <div className="row between">
        <h2 style={{ margin: 0 }}>Incoming, not yet received</h2>
        <div className="row">
          <label className="check" style={{ margin: 0 }}>
            <input
              type="checkbox"
              checked={auto}
              onChange={(e) => updateSettings({ autoReceive: e.target.checked })}
              data-testid="auto-receive"
            />
            Receive automatically
          </label>
          <button
            type="button"
            className="primary"
            disabled={busy || list.length === 0}
            onClick={() => receive(list)}
            data-testid="receive-all"
          >
            Receive all
          </button>
        </div>
      </div>
      <div style={{ marginTop: 10 }}>
        {pending.isLoading && <Loading />}
        <ErrorText error={pending.error} />
        {pending.data && list.length === 0 && <Empty>Nothing waiting to be received.</Empty>}
        {list.length > 0 && (
          <table>
            <thead>
              <tr>
                <th>From</th>
                <th className="num">Amount</th>
                <th>Sent</th>
                <th>
                  <span className="visually-hidden">Receive</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.hash} data-testid="pending-row" data-hash={p.hash}>
                  <td>
                    <AddressLabel address={p.from} testId="pending-from" />
                  </td>
                  <td className="num">
                    <Amount micro={p.amount} asset={p.asset} />
                  </td>
                  <td className="small">{timeOf(p.timestamp)}</td>
                  <td className="num">
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => receive([p])}
                      data-testid="receive-one"
                    >
                      Receive
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {busy && <p className="hint">Receiving… (the proof of work runs on this computer)</p>}
        {latest?.state === 'done' && latest.result !== undefined && (
          <div className="success box" data-testid="receive-success">
            Received {latest.result} {latest.result === 1 ? 'send' : 'sends'}.
          </div>
        )}
        {latest?.state === 'failed' && <ErrorText error={latest.error} testId="receive-error" />}
        {latest?.state === 'cancelled' && <p className="hint">Cancelled: nothing was received.</p>}
      </div>
    </div>
  );
}

function ReceiveTab({ account }: { account: AccountInfo }) {
  return (
    <div>
      <div className="card" data-testid="receive-address">
        <h2>Your address</h2>
        <p className="muted">Give this address to whoever sends to you. It is not a secret.</p>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Suspense fallback={<div className="qr" />}>
            <AddressQr text={account.address} />
          </Suspense>
          <div style={{ flex: 1, minWidth: 220 }}>
            <p className="mono">{account.address}</p>
            <CopyButton text={account.address} label="Copy address" />
          </div>
        </div>
      </div>
      <PendingCard account={account} />
    </div>
  );
}

function AddAccount({ mode }: { mode: 'create' | 'import' }) {
  const [seedHex, setSeedHex] = useState<string>();
  const [label, setLabel] = useState('');
  const [error, setError] = useState<string>();
  const ks = useKeystore();
  const back = () => navigate('wallet');
  if (!seedHex) {
    return (
      <div className="centered card" data-testid="add-account-page">
        {mode === 'create' ? (
          <SeedBackupFlow onDone={setSeedHex} onCancel={back} />
        ) : (
          <ImportSeed onDone={setSeedHex} onCancel={back} />
        )}
      </div>
    );
  }
  const save = (e: FormEvent) => {
    e.preventDefault();
    try {
      const a = keystore().addAccount(seedHex, label || `Account ${ks.accounts.length + 1}`);
      updateSettings({ selectedAccount: a.address });
      navigate('wallet');
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <form className="centered card" onSubmit={save} data-testid="add-account-label">
      <h2>Name the account</h2>
      <label className="field">
        <span>Label</span>
        <input
          value={label}
          maxLength={40}
          placeholder={`Account ${ks.accounts.length + 1}`}
          onChange={(e) => setLabel(e.target.value)}
          autoFocus
          data-testid="account-label"
        />
      </label>
      {error && (
        <div className="error box" role="alert" data-testid="error">
          {error}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={back}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid="add-account-save">
          Add account
        </button>
      </div>
    </form>
  );
}
