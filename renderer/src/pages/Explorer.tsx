import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { ChainBlock } from '../../../node-core/client/client.ts';
import { decodeBlock } from '../../../node-core/protocol/block-json.ts';
import type { Block } from '../../../node-core/protocol/block.ts';
import { api } from '../api.ts';
import { Amount, Empty, ErrorText, Loading, short } from '../components/common.tsx';
import { href, navigate } from '../router.ts';
import { AddressLabel } from '../wallet/AddressLabel.tsx';
import { blockTime } from '../wallet/format.ts';
import { useKeystore } from '../keystore/index.ts';
import { contacts } from '../settings.ts';
import { findByName, type NamedAddress, useAddressNames } from '../wallet/names.ts';
import { qk, useBalances, useBlock, useChainWindow, useNodeInfo, usePending } from '../wallet/queries.ts';
import { useAction } from '../wallet/useAction.ts';

/** The explorer: recent blocks, a block by hash, an account by address. */
export default function ExplorerPage({ route }: { route: string[] }) {
  const [kind, id] = [route[1], route[2]];
  return (
    <div className="page" data-testid="explorer-page">
      <div className="row between">
        <h1>
          <a href={href('explorer')} style={{ color: 'inherit', textDecoration: 'none' }}>
            Explorer
          </a>
        </h1>
        <Search />
      </div>
      {kind === 'block' && id ? (
        <BlockView hash={id} />
      ) : kind === 'account' && id ? (
        <AccountView address={id} />
      ) : (
        <Recent />
      )}
    </div>
  );
}

function Search() {
  const [q, setQ] = useState('');
  const [notFound, setNotFound] = useState<string>();
  const [choices, setChoices] = useState<NamedAddress[]>([]);
  const { accounts } = useKeystore();
  const book = contacts.use();
  const find = useAction(async (text: string) => {
    const t = text.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(t)) {
      // Not a hash: a name of one of the person's accounts or contacts.
      const named = findByName(text, accounts, book);
      if (named.length === 1) return navigate('explorer', 'account', named[0]!.address);
      if (named.length > 1) return setChoices(named);
      setNotFound(
        'Enter a block hash or an account address (64 hexadecimal characters), or the name of one of your accounts or contacts.',
      );
      return;
    }
    // Hashes and addresses look alike: try a block first, then an account.
    if (await api().block(t)) return navigate('explorer', 'block', t);
    if (await api().chain(t, 0, 1)) return navigate('explorer', 'account', t);
    setNotFound('No block or account has this hash or address on this node.');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setNotFound(undefined);
    setChoices([]);
    void find.run(q);
  };
  return (
    <form onSubmit={submit} className="row" style={{ marginBottom: 12 }} data-testid="explorer-search">
      <input
        className="mono"
        value={q}
        onChange={(e) => setQ(e.target.value)}
        placeholder="block hash, address or a name"
        aria-label="Find a block hash, an account address, or one of your accounts or contacts by name"
        style={{ width: 420 }}
        spellCheck={false}
        data-testid="explorer-query"
      />
      <button type="submit" disabled={find.busy} data-testid="explorer-go">
        Find
      </button>
      {notFound && (
        <div className="field-error" style={{ width: '100%' }} data-testid="explorer-not-found">
          {notFound}
        </div>
      )}
      {choices.length > 0 && (
        <div style={{ width: '100%' }} data-testid="explorer-name-choices">
          <span className="hint">Several names match: </span>
          {choices.map((c, i) => (
            <span key={c.address}>
              {i > 0 && ', '}
              <a href={href('explorer', 'account', c.address)} onClick={() => setChoices([])}>
                {c.name}
              </a>
            </span>
          ))}
        </div>
      )}
      <ErrorText error={find.error} />
    </form>
  );
}

function Recent() {
  const recent = useQuery({
    queryKey: qk.recent,
    queryFn: async () => {
      const list = await api().get<Record<string, unknown>[]>('/blocks/recent?limit=30');
      return list.map((b) => ({ block: decodeBlock(b), finalized: b.finalized === true }));
    },
    refetchInterval: 4000,
  });
  return (
    <div className="card" data-testid="explorer-recent">
      <h2>Recent blocks</h2>
      {recent.isLoading && <Loading />}
      <ErrorText error={recent.error} />
      {recent.data && recent.data.length === 0 && <Empty>No blocks yet.</Empty>}
      {recent.data && recent.data.length > 0 && <BlockTable entries={recent.data} showAccount />}
    </div>
  );
}

function BlockTable({ entries, showAccount }: { entries: ChainBlock[]; showAccount?: boolean }) {
  const networkStart = useNodeInfo().data?.network_started_at;
  return (
    <table>
      <thead>
        <tr>
          <th>Time</th>
          <th>Type</th>
          {showAccount && <th>Account</th>}
          <th className="num">Amount</th>
          <th className="num">Balance after</th>
          <th>Hash</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(({ block: b, finalized }) => (
          <tr key={b.hash} data-testid="explorer-block-row">
            <td className="small" data-testid="explorer-block-time">
              {blockTime(b.type, b.timestamp, networkStart)}{' '}
              {!finalized && <span className="badge warn">confirming</span>}
            </td>
            <td>
              <span className="badge">{b.type}</span>
            </td>
            {showAccount && (
              <td className="small">
                <AddressLabel address={b.account} link />
              </td>
            )}
            <td className="num" data-testid="explorer-block-amount">
              {b.amount !== undefined ? (
                <Amount micro={b.amount} asset={b.asset} />
              ) : b.type === 'receive' && b.source ? (
                <SourceAmount source={b.source} asset={b.asset} />
              ) : (
                ''
              )}
            </td>
            <td className="num small">
              <Amount micro={b.balance} asset={b.asset} />
            </td>
            <td className="mono small">
              <a href={href('explorer', 'block', b.hash ?? '')}>{short(b.hash, 8)}</a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A receive carries no amount of its own: it takes the amount of the send it received. */
function SourceAmount({ source, asset }: { source: string; asset: string }) {
  const q = useBlock(source);
  if (q.isLoading) return <span className="muted">…</span>;
  return <Amount micro={q.data?.block.amount} asset={asset} />;
}

const HASH_LINKS: Partial<Record<keyof Block, 'block' | 'account'>> = {
  account: 'account',
  previous: 'block',
  destination: 'account',
  source: 'block',
  representative: 'account',
};

function BlockView({ hash }: { hash: string }) {
  const networkStart = useNodeInfo().data?.network_started_at;
  const q = useBlock(hash);
  if (q.isLoading) return <Loading what="Loading block" />;
  if (q.error) return <ErrorText error={q.error} />;
  if (!q.data) return <Empty>No block with hash {hash} on this node.</Empty>;
  const { block, finalized } = q.data;
  const fields = Object.entries(block).filter(([, v]) => v !== undefined) as [keyof Block, unknown][];
  return (
    <div className="card" data-testid="explorer-block">
      <h2>
        {block.type} block{' '}
        {finalized ? (
          <span className="badge in" data-testid="explorer-block-state">
            confirmed
          </span>
        ) : (
          <span className="badge warn" data-testid="explorer-block-state">
            waiting for confirmation
          </span>
        )}
      </h2>
      <p data-testid="explorer-block-summary">
        <BlockSummary block={block} />
      </p>
      <table>
        <tbody>
          {fields.map(([k, v]) => (
            <tr key={k}>
              <th style={{ width: 140 }}>{k}</th>
              <td className={typeof v === 'string' && v.length >= 64 ? 'mono small' : ''}>
                {HASH_LINKS[k] && typeof v === 'string' && !/^0+$/.test(v) ? (
                  <a href={href('explorer', HASH_LINKS[k]!, v)}>{v}</a>
                ) : k === 'timestamp' && typeof v === 'bigint' ? (
                  `${blockTime(block.type, v, networkStart)} (${v} ns)`
                ) : (k === 'balance' || k === 'amount') && typeof v === 'bigint' ? (
                  <>
                    <Amount micro={v} asset={block.asset} />{' '}
                    <span className="muted small">({v.toString()})</span>
                  </>
                ) : typeof v === 'object' ? (
                  <code className="small">
                    {JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))}
                  </code>
                ) : (
                  String(v)
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One sentence for a block: who moved what to whom, with names where there are some. */
function BlockSummary({ block: b }: { block: Block }) {
  const networkStart = useNodeInfo().data?.network_started_at;
  const when = blockTime(b.type, b.timestamp, networkStart);
  const who = <AddressLabel address={b.account} link />;
  if (b.type === 'send') {
    return (
      <>
        {who} sent <Amount micro={b.amount} asset={b.asset} /> to{' '}
        <AddressLabel address={b.destination} link />, {when}.
      </>
    );
  }
  if (b.type === 'receive' && b.source) {
    return (
      <>
        {who} received <SourceAmount source={b.source} asset={b.asset} /> (
        <a href={href('explorer', 'block', b.source)}>the send</a>), {when}.
      </>
    );
  }
  if (b.type === 'claim') {
    return (
      <>
        {who} claimed <Amount micro={b.amount} asset={b.asset} /> of test funds, {when}.
      </>
    );
  }
  if (b.type === 'genesis') {
    return (
      <>
        The first block of this network: it created <Amount micro={b.balance} asset={b.asset} /> for {who}.
      </>
    );
  }
  return (
    <>
      A {b.type} block of {who}, {when}.
    </>
  );
}

function AccountView({ address }: { address: string }) {
  const bal = useBalances(address);
  const pending = usePending(address);
  const chain = useChainWindow(address, 50);
  const name = useAddressNames()(address);
  return (
    <div data-testid="explorer-account">
      <div className="card">
        <h2>
          {name ? (
            <>
              {name.name}{' '}
              <span className="badge own">
                {name.kind === 'own' ? 'your account' : 'in your address book'}
              </span>
            </>
          ) : (
            'Account'
          )}
        </h2>
        <p className="mono">{address}</p>
        {bal.isLoading && <Loading />}
        <ErrorText error={bal.error} />
        {bal.data && Object.keys(bal.data.balances).length === 0 && <Empty>No balance.</Empty>}
        {bal.data &&
          Object.entries(bal.data.balances).map(([asset, v]) => (
            <div key={asset}>
              <span className="big">
                <Amount micro={v} asset={asset} testId={`explorer-balance-${asset}`} />
              </span>{' '}
              <span className="muted small">
                available <Amount micro={bal.data.spendable[asset] ?? 0n} asset={asset} />
              </span>
            </div>
          ))}
        {pending.data && pending.data.length > 0 && (
          <p className="small muted">{pending.data.length} incoming send(s) not yet received.</p>
        )}
      </div>
      <div className="card">
        <h2>Chain {chain.data ? `(${chain.data.total} blocks, newest first)` : ''}</h2>
        {chain.isLoading && <Loading />}
        <ErrorText error={chain.error} />
        {chain.data && chain.data.total === 0 && <Empty>This node knows no block of this account.</Empty>}
        {chain.data && chain.data.total > 0 && <BlockTable entries={chain.data.blocks.map((b) => b.entry)} />}
      </div>
    </div>
  );
}
