import { type FormEvent, useState } from 'react';
import { stringifyJson } from '../../../node-core/protocol/json.ts';
import { Empty, ErrorText, Loading, timeOf } from '../components/common.tsx';
import { HexValue } from './HexValue.tsx';
import { KV_PAGE, useKeyset, useKv, useRecentStateBlocks } from './queries.ts';

/** The state chain: its newest blocks, a browser of its key/value state, and the DAO keyset. */

const VALUE_CHARS = 160;

export function RecentStateBlocks() {
  const q = useRecentStateBlocks();
  if (q.isLoading) return <Loading what="Reading the state chain" />;
  if (!q.data) return <ErrorText error={q.error} />;
  return (
    <div className="table-scroll">
      <table data-testid="state-blocks">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Time</th>
            <th>Changes</th>
            <th className="num">Signatures</th>
            <th>Hash</th>
          </tr>
        </thead>
        <tbody>
          {q.data.map((b) => (
            <tr key={b.index.toString()} data-testid="state-block-row">
              <td className="num">{b.index.toString()}</td>
              <td className="small">{timeOf(b.timestamp)}</td>
              <td className="small">
                {b.ops.length === 0
                  ? 'none'
                  : b.ops.length <= 3
                    ? b.ops.map((o) => `${o.type === 'delete' ? 'deleted' : 'set'} ${o.key}`).join(', ')
                    : `${b.ops.length} keys, first ${b.ops[0]!.key}`}
              </td>
              <td className="num">{b.signatures}</td>
              <td>{b.hash ? <HexValue value={b.hash} what="state block hash" /> : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function KvBrowser() {
  const [draft, setDraft] = useState('');
  const [prefix, setPrefix] = useState('');
  const q = useKv(prefix);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setPrefix(draft.trim());
  };
  const rows = q.data ?? [];
  const more = rows.length > KV_PAGE;
  return (
    <div data-testid="kv-browser">
      <form className="row" onSubmit={submit} role="search" aria-label="State keys">
        <label className="visually-hidden" htmlFor="kv-prefix">
          Key prefix
        </label>
        <input
          id="kv-prefix"
          className="mono"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="key prefix, e.g. sys."
          spellCheck={false}
          autoComplete="off"
          data-testid="kv-prefix"
        />
        <button type="submit" data-testid="kv-search">
          Search
        </button>
        {prefix !== '' && (
          <button
            type="button"
            className="link"
            onClick={() => {
              setDraft('');
              setPrefix('');
            }}
          >
            Show all
          </button>
        )}
      </form>
      <ErrorText error={q.error} />
      {q.isLoading && <Loading />}
      {q.data && rows.length === 0 && (
        <Empty>{prefix === '' ? 'The state holds no keys.' : `No key starts with “${prefix}”.`}</Empty>
      )}
      {rows.length > 0 && (
        <div className="table-scroll short" tabIndex={0} role="region" aria-label="State keys and values">
          <table data-testid="kv-table" aria-busy={q.isFetching}>
            <thead>
              <tr>
                <th>Key</th>
                <th>Value</th>
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, KV_PAGE).map((e) => {
                const text = stringifyJson(e.value);
                return (
                  <tr key={e.key} data-testid="kv-row" data-key={e.key}>
                    <td className="mono small">{e.key}</td>
                    <td className="mono small kv-value">
                      {text.length <= VALUE_CHARS ? (
                        text
                      ) : (
                        <details>
                          <summary>{text.slice(0, VALUE_CHARS)}…</summary>
                          {text}
                        </details>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {more && (
        <p className="small muted">The first {KV_PAGE} keys are shown: a longer prefix narrows the list.</p>
      )}
    </div>
  );
}

export function Keyset() {
  const q = useKeyset();
  if (q.isLoading) return <Loading />;
  if (!q.data) return <ErrorText error={q.error} />;
  return (
    <div data-testid="keyset">
      <p>
        Changes to the state chain need signatures from{' '}
        <b data-testid="keyset-threshold">{q.data.threshold}</b> of these <b>{q.data.keys.length}</b> DAO
        keys.
      </p>
      <ul className="plain-list">
        {q.data.keys.map((k) => (
          <li key={k}>
            <HexValue value={k} what="DAO public key" keep={10} />
          </li>
        ))}
      </ul>
    </div>
  );
}
