import { useState } from 'react';
import { api } from '../api.ts';
import { Amount, Empty, ErrorText, Loading, short, timeOf } from '../components/common.tsx';
import { href } from '../router.ts';
import { AddressLabel } from '../wallet/AddressLabel.tsx';
import {
  downloadText,
  fetchFullHistory,
  filterRows,
  historyCsv,
  type HistoryFilter,
} from '../wallet/history.ts';
import { useHistoryRows } from '../wallet/queries.ts';
import { useAction } from '../wallet/useAction.ts';

const PAGE = 100;
const TYPES = ['all', 'claim', 'send', 'receive', 'burn', 'mint'] as const;
// What each block did, in the words of the person whose history it is.
const TYPE_WORDS: Record<string, string> = {
  all: 'all',
  claim: 'test funds',
  send: 'sent',
  receive: 'received',
  burn: 'burned',
  mint: 'minted',
};

/** The account's chain, newest first, with filters and a CSV export of the whole of it. */
export function History({ address }: { address: string }) {
  const [count, setCount] = useState(PAGE);
  const [filter, setFilter] = useState<HistoryFilter>({ type: 'all', direction: 'all' });
  const { chain, rows, total } = useHistoryRows(address, count);
  const exportCsv = useAction(async () => {
    const all = await fetchFullHistory(api(), address);
    downloadText(`history-${address}.csv`, historyCsv(all));
    return all.length;
  });
  const shown = rows ? filterRows(rows, filter) : [];

  return (
    <div className="card" data-testid="history">
      <div className="row between" style={{ marginBottom: 10 }}>
        <h2 style={{ margin: 0 }}>History</h2>
        <div className="row">
          <label className="row small">
            Type
            <select
              value={filter.type}
              onChange={(e) => setFilter((f) => ({ ...f, type: e.target.value as HistoryFilter['type'] }))}
              data-testid="history-type"
            >
              {TYPES.map((t) => (
                <option key={t} value={t}>
                  {TYPE_WORDS[t]}
                </option>
              ))}
            </select>
          </label>
          <label className="row small">
            Direction
            <select
              value={filter.direction}
              onChange={(e) =>
                setFilter((f) => ({ ...f, direction: e.target.value as HistoryFilter['direction'] }))
              }
              data-testid="history-direction"
            >
              <option value="all">all</option>
              <option value="in">incoming</option>
              <option value="out">outgoing</option>
            </select>
          </label>
          <button
            type="button"
            onClick={() => void exportCsv.run()}
            disabled={exportCsv.busy || total === 0}
            data-testid="history-export"
          >
            {exportCsv.busy ? 'Exporting…' : 'Export CSV'}
          </button>
        </div>
      </div>
      <ErrorText error={exportCsv.error} testId="history-export-error" />
      {chain.isLoading && <Loading what="Loading history" />}
      <ErrorText error={chain.error} />
      {rows && rows.length === 0 && (
        <Empty>No blocks yet: claim test funds or receive a send to start.</Empty>
      )}
      {rows && rows.length > 0 && shown.length === 0 && <Empty>No block matches these filters.</Empty>}
      {shown.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>#</th>
              <th>Time</th>
              <th>Type</th>
              <th className="num">Amount</th>
              <th>Counterparty</th>
              <th>Memo</th>
              <th className="num">Balance</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr
                key={r.hash}
                data-testid="history-row"
                data-type={r.type}
                data-direction={r.direction}
                data-hash={r.hash}
              >
                <td className="small muted">
                  <a
                    href={href('explorer', 'block', r.hash)}
                    title={`Block ${r.hash}`}
                    aria-label={`Block ${r.height} in the explorer`}
                    data-testid="history-block-link"
                  >
                    {r.height}
                  </a>
                </td>
                <td className="small">
                  {timeOf(r.timestamp)}
                  {!r.finalized && (
                    <>
                      {' '}
                      <span className="badge warn" title="Not yet confirmed by the network">
                        confirming
                      </span>
                    </>
                  )}
                </td>
                <td>
                  <span className={`badge ${r.direction}`}>{TYPE_WORDS[r.type] ?? r.type}</span>
                </td>
                <td className="num" data-testid="history-amount">
                  {r.amount === undefined ? (
                    <span className="muted">…</span>
                  ) : (
                    <>
                      {r.direction === 'out' ? '−' : r.direction === 'in' ? '+' : ''}
                      <Amount micro={r.amount} asset={r.asset} />
                    </>
                  )}
                </td>
                <td className="small">
                  {r.type === 'claim' ? (
                    <span className="muted">faucet</span>
                  ) : (
                    <AddressLabel address={r.counterparty} link testId="history-counterparty" />
                  )}
                </td>
                <td data-testid="history-memo">{r.memo ?? ''}</td>
                <td className="num small">
                  <Amount micro={r.balance} asset={r.asset} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {total > count && (
        <button
          type="button"
          style={{ marginTop: 10 }}
          onClick={() => setCount((c) => c + PAGE)}
          data-testid="history-more"
        >
          Load older ({total - count} more)
        </button>
      )}
      {exportCsv.result !== undefined && (
        <p className="hint" data-testid="history-exported">
          Exported {exportCsv.result} blocks to history-{short(address, 6)}.csv.
        </p>
      )}
    </div>
  );
}
