import { useQueryClient } from '@tanstack/react-query';
import { memo, useState } from 'react';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { ago, Empty, ErrorText, Loading } from '../components/common.tsx';
import { adminRequest, isSignedOut } from './admin-http.ts';
import { HexValue } from './HexValue.tsx';
import { type P2PState, type PeerRow, usePeers } from './queries.ts';

/** Peer-to-peer networking: its state with a stop/start switch (confirmed), and the peers. */

const STATE_WORDS: Record<P2PState, string> = {
  off: 'Off: this node was started without peer-to-peer networking',
  running: 'Running',
  stopping: 'Stopping…',
  stopped: 'Stopped',
  starting: 'Starting…',
};

export function P2PSwitch() {
  const peers = usePeers();
  const qc = useQueryClient();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const state = peers.data?.p2p.state;
  const running = state === 'running';

  const apply = async () => {
    setAsking(false);
    setBusy(true);
    setError(undefined);
    try {
      await adminRequest('POST', '/node/p2p', { running: !running });
      await qc.invalidateQueries({ queryKey: ['node'] });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (peers.isLoading) return <Loading />;
  if (!peers.data) return <ErrorText error={peers.error} />;
  const addrs = peers.data.p2p.listen_addrs;
  return (
    <div data-testid="p2p-section">
      <div className="row between">
        <p>
          Peer-to-peer networking:{' '}
          <b data-testid="p2p-state" data-state={state}>
            {STATE_WORDS[state!] ?? state}
          </b>
          {state !== 'off' && (
            <span className="muted small">
              {' '}
              · since {new Date(peers.data.p2p.since).toLocaleTimeString()}
            </span>
          )}
        </p>
        {state !== 'off' && (
          <button
            type="button"
            className={running ? 'danger' : 'primary'}
            disabled={busy || (state !== 'running' && state !== 'stopped')}
            onClick={() => setAsking(true)}
            data-testid="p2p-toggle"
          >
            {busy ? 'Working…' : running ? 'Stop peer-to-peer' : 'Start peer-to-peer'}
          </button>
        )}
      </div>
      {addrs.length > 0 && (
        <details className="details">
          <summary>Addresses other nodes can dial ({addrs.length})</summary>
          <ul className="plain-list">
            {addrs.map((a) => (
              <li key={a} className="mono small">
                {a}
              </li>
            ))}
          </ul>
        </details>
      )}
      {isSignedOut(error) ? (
        <div className="warn box" role="alert" data-testid="p2p-signed-out">
          {(error as Error).message} Open the app from the link the node prints when it starts (it signs this
          browser in), then stop or start networking here; or use the command under API below.
        </div>
      ) : (
        <ErrorText error={error} testId="p2p-error" />
      )}
      <ConfirmDialog
        open={asking}
        title={running ? 'Stop peer-to-peer networking?' : 'Start peer-to-peer networking?'}
        confirmLabel={running ? 'Stop networking' : 'Start networking'}
        danger={running}
        onConfirm={() => void apply()}
        onCancel={() => setAsking(false)}
        testId="p2p-confirm"
      >
        {running ? (
          <p>
            The node disconnects from its {peers.data.peer_count} peer{peers.data.peer_count === 1 ? '' : 's'}
            . It stops receiving blocks and votes, and what you send waits until networking is started again.
            The wallet and the API keep working.
          </p>
        ) : (
          <p>The node listens again and reconnects to its peers; it catches up on what it missed.</p>
        )}
      </ConfirmDialog>
    </div>
  );
}

export function PeersTable() {
  const peers = usePeers();
  if (peers.isLoading) return <Loading what="Reading the peers" />;
  if (!peers.data) return <ErrorText error={peers.error} />;
  const list = peers.data.peers;
  // "Connected 2 min ago" moves on in 10 s steps; between them a row redraws only when it changes.
  const clock = Math.floor(Date.now() / 10_000);
  if (list.length === 0)
    return (
      <Empty>
        {peers.data.p2p.state === 'running'
          ? 'No peers connected yet. The node dials the peers it was given and accepts those that dial it.'
          : 'No peers: peer-to-peer networking is not running.'}
      </Empty>
    );
  return (
    // A long list scrolls inside its own box, so the sections below stay a short scroll away.
    <div className="table-scroll short" tabIndex={0} role="region" aria-label="Connected peers">
      <table data-testid="peers-table">
        <caption className="visually-hidden">Connected peers</caption>
        <thead>
          <tr>
            <th>Peer</th>
            <th>Address</th>
            <th>Version</th>
            <th>Connected</th>
            <th className="num">Round trip</th>
          </tr>
        </thead>
        <tbody>
          {list.map((p) => (
            <PeerLine key={p.id} peer={p} clock={clock} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One row; memoised so a poll that changes one peer's latency redraws that row only. */
const PeerLine = memo(
  function PeerLine({ peer }: { peer: PeerRow; clock: number }) {
    return (
      <tr data-testid="peer-row" data-peer={peer.id}>
        <td>
          <HexValue value={peer.id} what="peer id" keep={8} />
        </td>
        <td className="mono small">{peer.address}</td>
        <td className="small">{peer.version}</td>
        <td className="small" title={new Date(Number(peer.connected_at / 1_000_000n)).toLocaleString()}>
          {ago(peer.connected_at)}
        </td>
        <td className="num small" data-testid="peer-latency">
          {peer.latency_ms === null ? <span className="muted">measuring…</span> : `${peer.latency_ms} ms`}
        </td>
      </tr>
    );
  },
  (a, b) =>
    a.clock === b.clock &&
    a.peer.id === b.peer.id &&
    a.peer.latency_ms === b.peer.latency_ms &&
    a.peer.address === b.peer.address &&
    a.peer.connected_at === b.peer.connected_at,
);
