import { ago, Empty, ErrorText, groupedUnits, Loading } from '../components/common.tsx';
import { percentOf } from './format.ts';
import { HexValue } from './HexValue.tsx';
import { type Conflict, useConflicts, useDelegation, useNodeRaw } from './queries.ts';

/** Representatives by delegated weight, and conflicts with how the vote stands. */

const SHOWN_REPS = 50;
/** The share of delegated weight a candidate needs to win (the quorum the node counts with). */
const QUORUM_PERCENT = 67;

function TallyBar({ percent, label, testId }: { percent: number; label: string; testId?: string }) {
  return (
    <div
      className="tally"
      role="meter"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
      aria-label={label}
      data-testid={testId}
    >
      <div className="tally-fill" style={{ width: `${Math.min(100, percent)}%` }} />
      <div className="tally-quorum" style={{ left: `${QUORUM_PERCENT}%` }} title="quorum" />
    </div>
  );
}

export function Representatives() {
  const d = useDelegation();
  const node = useNodeRaw();
  if (d.isLoading) return <Loading what="Reading the representatives" />;
  if (!d.data) return <ErrorText error={d.error} />;
  const total = BigInt(d.data.total_weight);
  const reps = Object.entries(d.data.weights)
    .map(([address, w]) => ({ address, weight: BigInt(w) }))
    .sort((a, b) => (a.weight > b.weight ? -1 : a.weight < b.weight ? 1 : a.address < b.address ? -1 : 1));
  if (reps.length === 0) return <Empty>No weight is delegated to any representative yet.</Empty>;
  const own = node.data?.address;
  return (
    <>
      <p className="small muted">
        {reps.length} representative{reps.length === 1 ? '' : 's'} hold {groupedUnits(total)} XE of delegated
        weight. A block is confirmed once representatives holding {QUORUM_PERCENT}% of it vote for it.
      </p>
      <div className="table-scroll">
        <table data-testid="reps-table">
          <thead>
            <tr>
              <th>Representative</th>
              <th className="num">Weight (XE)</th>
              <th style={{ width: '30%' }}>Share</th>
            </tr>
          </thead>
          <tbody>
            {reps.slice(0, SHOWN_REPS).map((r) => {
              const share = percentOf(r.weight, total);
              return (
                <tr key={r.address} data-testid="rep-row">
                  <td>
                    <HexValue value={r.address} what="representative address" />
                    {r.address === own && <span className="badge own">this node</span>}
                  </td>
                  <td className="num">{groupedUnits(r.weight)}</td>
                  <td>
                    <div className="share">
                      <div className="share-bar">
                        <div className="share-fill" style={{ width: `${share}%` }} />
                      </div>
                      <span className="small">{share}%</span>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {reps.length > SHOWN_REPS && (
        <p className="small muted">…and {reps.length - SHOWN_REPS} more with smaller weight.</p>
      )}
    </>
  );
}

export function Conflicts() {
  const c = useConflicts();
  const d = useDelegation();
  if (c.isLoading) return <Loading what="Reading the conflicts" />;
  if (!c.data) return <ErrorText error={c.error} />;
  if (c.data.length === 0)
    return (
      <Empty>
        No conflicts: no account has two blocks competing for one place in its chain (resolved ones stay
        listed for an hour).
      </Empty>
    );
  const total = d.data ? BigInt(d.data.total_weight) : 0n;
  const open = c.data.filter((x) => x.status === 'voting');
  const resolved = c.data.filter((x) => x.status === 'resolved');
  return (
    <div data-testid="conflicts">
      <h3>Open ({open.length})</h3>
      {open.length === 0 ? (
        <Empty>None open.</Empty>
      ) : (
        open.map((x) => <ConflictCard key={key(x)} c={x} total={total} />)
      )}
      <h3>Resolved in the last hour ({resolved.length})</h3>
      {resolved.length === 0 ? (
        <Empty>None resolved recently.</Empty>
      ) : (
        resolved.map((x) => <ConflictCard key={key(x)} c={x} total={total} />)
      )}
    </div>
  );
}

const key = (c: Conflict) => `${c.account}:${c.previous}:${c.status}`;

function ConflictCard({ c, total }: { c: Conflict; total: bigint }) {
  return (
    <div className="conflict" data-testid="conflict" data-status={c.status}>
      <div className="row between">
        <span>
          Account <HexValue value={c.account} what="account address" />
        </span>
        <span className="small muted">
          {c.status === 'voting' ? (
            <span className="badge warn">voting</span>
          ) : (
            <span className="badge in">resolved</span>
          )}{' '}
          found {ago(c.detected_at)}
          {c.resolved_at !== undefined && `, settled ${ago(c.resolved_at)}`}
        </span>
      </div>
      {c.status === 'resolved' && c.winner === null && (
        <p className="small">Neither block won: the place in the chain itself was undone.</p>
      )}
      <table>
        <thead>
          <tr>
            <th>Competing block</th>
            <th className="num">Votes</th>
            <th className="num">Weight (XE)</th>
            <th style={{ width: '35%' }}>Share of all weight</th>
          </tr>
        </thead>
        <tbody>
          {c.blocks.map((b) => {
            const share = percentOf(BigInt(b.weight), total);
            return (
              <tr key={b.hash} data-testid="conflict-candidate" data-winner={c.winner === b.hash}>
                <td>
                  <HexValue value={b.hash} what="block hash" />
                  {c.winner === b.hash && <span className="badge in">winner</span>}
                </td>
                <td className="num">{b.votes}</td>
                <td className="num">{groupedUnits(BigInt(b.weight))}</td>
                <td>
                  <div className="share">
                    <TallyBar
                      percent={share}
                      label={`votes for ${b.hash.slice(0, 8)}: ${share}% of the weight`}
                    />
                    <span className="small">{share}%</span>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
