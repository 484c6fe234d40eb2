import { useActions, type ActionState } from './actions.ts';

const STATE_WORDS: Record<ActionState, string> = {
  running: 'in progress…',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
};

const STATE_BADGE: Record<ActionState, string> = {
  running: 'warn',
  done: 'in',
  failed: 'out',
  cancelled: '',
};

/** This session's sends, claims and receives of one account, newest first, with how each ended. */
export function ActivityList({ account }: { account: string }) {
  const list = useActions().filter((a) => a.account === account);
  if (list.length === 0) return null;
  return (
    <div className="card" data-testid="activity">
      <h2>Recent activity</h2>
      <ul className="activity-list">
        {list.map((a) => (
          <li key={a.id} data-testid="activity-row" data-kind={a.kind} data-state={a.state}>
            <div className="row between" style={{ flexWrap: 'nowrap' }}>
              <span>{a.title}</span>
              <span className={`badge ${STATE_BADGE[a.state]}`} data-testid="activity-state">
                {STATE_WORDS[a.state]}
              </span>
            </div>
            <div className="small muted">
              {new Date(a.startedAt).toLocaleTimeString()}
              {/* A failure says why; the badge already says "done" or "cancelled". */}
              {a.state === 'failed' && a.outcome ? ` · ${a.outcome}` : ''}
              {a.blockHash && (
                <>
                  {' · '}
                  <a href={`#/explorer/block/${a.blockHash}`} data-testid="activity-block">
                    View block
                  </a>
                </>
              )}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
