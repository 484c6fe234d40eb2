import { ErrorText, Loading } from '../components/common.tsx';
import { durationWords } from './format.ts';
import { HexValue } from './HexValue.tsx';
import { syncOf, useActivity, useNodeRaw, usePeers, useReadiness } from './queries.ts';
import { pointsOf } from './chart.ts';
import { measuredRate, syncWords } from './sync-words.ts';

/** Plain names of the readiness checks (GET /ready). */
const CHECK_NAMES: Record<string, string> = {
  live: 'The node is running',
  store_readable: 'Its database can be read',
  peers: 'It has the peers it needs',
  synced: 'It is in sync with its peers',
  delegated_weight: 'Some weight is delegated to representatives',
  quorum_reachable: 'Enough representatives are online to confirm blocks',
  finality_advancing: 'Blocks are being confirmed',
};

export function Overview() {
  const node = useNodeRaw();
  const ready = useReadiness();
  const activity = useActivity();
  const p2p = usePeers();
  if (node.isLoading) return <Loading what="Reading the node" />;
  if (node.error) return <ErrorText error={node.error} />;
  const raw = node.data!;
  const peers = Number(raw.peer_count ?? 0);
  const sync = syncWords(syncOf(raw), p2p.data?.p2p.state, peers);
  const rate = measuredRate(activity.data);
  return (
    <div className="grid2">
      <div>
        <dl className="facts">
          <dt>Network</dt>
          <dd data-testid="node-network">{String(raw.network_id)}</dd>
          <dt>Version</dt>
          <dd>{String(raw.version)}</dd>
          <dt>Node id</dt>
          <dd>
            <HexValue value={String(raw.id)} what="node id" testId="node-id" />
          </dd>
          <dt>Representative</dt>
          <dd>
            <HexValue value={String(raw.address)} what="representative address" />
          </dd>
          <dt>Blocks</dt>
          <dd data-testid="node-blocks">{Number(raw.block_count).toLocaleString()}</dd>
          <dt>Accounts</dt>
          <dd>{Number(raw.accounts).toLocaleString()}</dd>
          <dt>Peers</dt>
          <dd data-testid="node-peer-count">{peers}</dd>
        </dl>
      </div>
      <div>
        <h3>Sync</h3>
        <p data-testid="node-sync">
          <b>{sync.title}</b>
          {sync.detail && <span className="muted"> · {sync.detail}</span>}
        </p>
        {sync.progress !== undefined && (
          <progress
            value={sync.progress}
            max={1}
            aria-label="Sync progress"
            data-testid="node-sync-progress"
          />
        )}
        <p className="small muted" data-testid="node-rate">
          {rate === undefined
            ? 'Block rate: measuring…'
            : `Block rate: ${rate} per minute over the last ${durationWords((pointsOf(activity.data!.fine).length * activity.data!.fine.interval_ms) / 1000)}, as this node committed them.`}
        </p>
        <h3>Readiness</h3>
        <ErrorText error={ready.error} />
        {ready.data && (
          <>
            <p data-testid="node-ready" data-ready={ready.data.ready}>
              {ready.data.ready ? (
                <span className="badge in">Ready</span>
              ) : (
                <span className="badge warn">Not ready</span>
              )}{' '}
              <span className="muted small">
                {ready.data.ready
                  ? 'Every check passes.'
                  : `${ready.data.checks.filter((c) => !c.ok).length} check(s) fail.`}
              </span>
            </p>
            <ul className="checks" data-testid="node-checks">
              {ready.data.checks.map((c) => (
                <li key={c.name} data-ok={c.ok} data-testid={`check-${c.name}`}>
                  <span className={`check-mark ${c.ok ? 'ok' : 'bad'}`} aria-hidden="true">
                    {c.ok ? '✓' : '✗'}
                  </span>
                  <span className="visually-hidden">{c.ok ? 'passes:' : 'fails:'}</span>{' '}
                  {CHECK_NAMES[c.name] ?? c.name}
                  {c.detail && <span className="muted small"> · {c.detail}</span>}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </div>
  );
}
