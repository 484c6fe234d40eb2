import { api, errorMessage } from '../api.ts';
import { usePowJobs } from '../pow/activity.ts';
import { useNodeInfo } from '../wallet/queries.ts';
import { catchingUpText } from '../status/catching-up.ts';
import { ago } from './common.tsx';

/** Always visible: the node's network, version, blocks, peers, finality and API address. */
export function StatusBar() {
  const node = useNodeInfo();
  const jobs = usePowJobs();
  const base = api().baseUrl;
  if (node.isError && !node.data) {
    return (
      <footer
        className="statusbar error"
        data-testid="status-bar"
        data-state="unreachable"
        aria-label="Node status"
      >
        <span className="item">
          <span className="dot" />
          <b>Node unreachable</b>
        </span>
        <span className="item" data-testid="status-error">
          {errorMessage(node.error)}
        </span>
        <span className="item">
          API <b>{base}</b>
        </span>
      </footer>
    );
  }
  const info = node.data;
  const raw = info?.raw ?? {};
  const advances = raw.finality_advances;
  const lastFinality = raw.last_finality_ns;
  const catchingUp = catchingUpText(raw.sync);
  return (
    <footer
      className={`statusbar${node.isError ? ' error' : ''}`}
      data-testid="status-bar"
      data-state={info ? (node.isError ? 'stale' : 'ok') : 'loading'}
      // A landmark, not a live region: figures that change every few seconds would interrupt a screen reader.
      aria-label="Node status"
    >
      {!info ? (
        <span className="item">Connecting to {base}…</span>
      ) : (
        <>
          {node.isError && (
            <span className="item">
              <b>Node unreachable</b>
            </span>
          )}
          <span className="item" title="network id">
            <span className="dot" />
            <b data-testid="status-network">{info.network_id}</b>
          </span>
          <span className="item">
            version <b data-testid="status-version">{info.version}</b>
          </span>
          <span className="item">
            blocks <b data-testid="status-blocks">{info.block_count.toLocaleString()}</b>
          </span>
          {catchingUp && (
            <span className="item" data-testid="status-sync" title="blocks pulled from peers so far">
              <b>{catchingUp}</b>
            </span>
          )}
          <span className="item">
            peers <b data-testid="status-peers">{info.peer_count}</b>
          </span>
          <span className="item" title="finality advances since the node started, and the last one">
            finality{' '}
            <b data-testid="status-finality">
              {String(advances ?? 0)}
              {typeof lastFinality === 'number' || typeof lastFinality === 'bigint'
                ? BigInt(lastFinality) > 0n
                  ? ` · last ${ago(BigInt(lastFinality))}`
                  : ' · none yet'
                : ''}
            </b>
          </span>
          <span className="item">
            API <b data-testid="status-api">{base}</b>
          </span>
          {node.isError && (
            <span className="item" data-testid="status-error">
              (last known values; {errorMessage(node.error)})
            </span>
          )}
        </>
      )}
      {jobs.length > 0 && (
        <span className="item" data-testid="status-pow">
          <b>proof of work running</b> ({jobs.length})
        </span>
      )}
    </footer>
  );
}
