import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import {
  CONSOLE_DEFAULT_SIZE,
  type ConsoleClientMessage,
  type ConsoleServerMessage,
} from '../../../node-core/client/console-protocol.ts';
import { hexToBytes } from '../../../node-core/protocol/hex.ts';
import { api } from '../api.ts';
import { keystore } from '../keystore/index.ts';

/**
 * A lease's VM console (xterm.js, loaded lazily): the WebSocket of node-core/client/console-protocol.ts
 * on the node this app talks to, opened with the replay-proof lease signature of the lease's access
 * key; the SSH sign requests are answered here with the same key, so it never leaves the renderer.
 * Copy: the selection (Ctrl+Shift+C, the Copy button, right click with a selection); paste:
 * Ctrl+Shift+V, the Paste button, right click without a selection.
 */
export type ConsoleStatus = 'connecting' | 'authenticating' | 'ready' | 'closed' | 'error';

/** The console URL (ws:// for an http node, wss:// for https). */
export function consoleUrl(
  base: string,
  lease: string,
  ts: bigint,
  sig: string,
  cols: number,
  rows: number,
): string {
  const u = new URL(`${base.replace(/\/+$/, '')}/vms/${lease}/console`);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.search = new URLSearchParams({
    ts: ts.toString(),
    sig,
    cols: String(cols),
    rows: String(rows),
  }).toString();
  return u.toString();
}

export default function VmConsole({ leaseHash, accessPub }: { leaseHash: string; accessPub: string }) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | undefined>(undefined);
  const fit = useRef<FitAddon | undefined>(undefined);
  const ws = useRef<WebSocket | undefined>(undefined);
  const [status, setStatus] = useState<ConsoleStatus>('connecting');
  const [message, setMessage] = useState<string>();
  const [attempt, setAttempt] = useState(0);

  const send = (m: ConsoleClientMessage) => {
    if (ws.current?.readyState === WebSocket.OPEN) ws.current.send(JSON.stringify(m));
  };
  const paste = useCallback(async () => {
    try {
      const text = await navigator.clipboard.readText();
      if (text) term.current?.paste(text);
    } catch {
      setMessage('Paste was refused by the browser: use Ctrl+Shift+V or allow clipboard access.');
    }
  }, []);
  const copy = useCallback(async () => {
    const sel = term.current?.getSelection() ?? '';
    if (!sel) return;
    try {
      await navigator.clipboard.writeText(sel);
    } catch {
      setMessage('Copy was refused by the browser.');
    }
  }, []);

  // The terminal lives as long as the component.
  useEffect(() => {
    const t = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 13, scrollback: 5000 });
    const f = new FitAddon();
    t.loadAddon(f);
    t.open(host.current!);
    term.current = t;
    fit.current = f;
    t.attachCustomKeyEventHandler((e) => {
      if (e.type !== 'keydown' || !e.ctrlKey || !e.shiftKey) return true;
      if (e.code === 'KeyC') {
        void copy();
        return false;
      }
      if (e.code === 'KeyV') {
        void paste();
        return false;
      }
      return true;
    });
    const enc = new TextEncoder();
    const onData = t.onData((d) => {
      if (ws.current?.readyState === WebSocket.OPEN) ws.current.send(enc.encode(d));
    });
    const onResize = t.onResize(({ cols, rows }) => send({ type: 'resize', cols, rows }));
    const ro = new ResizeObserver(() => {
      try {
        f.fit();
      } catch {
        // not laid out yet
      }
    });
    ro.observe(host.current!);
    return () => {
      ro.disconnect();
      onData.dispose();
      onResize.dispose();
      t.dispose();
      term.current = undefined;
    };
  }, [copy, paste]);

  // One WebSocket per attempt (reconnect makes a new one).
  useEffect(() => {
    const t = term.current!;
    try {
      fit.current?.fit();
    } catch {
      // not laid out yet
    }
    const cols = t.cols || CONSOLE_DEFAULT_SIZE.cols;
    const rows = t.rows || CONSOLE_DEFAULT_SIZE.rows;
    setStatus('connecting');
    setMessage(undefined);
    let socket: WebSocket;
    try {
      const ts = BigInt(Date.now()) * 1_000_000n;
      const sig = keystore().signLeaseAccess(accessPub, leaseHash, ts);
      socket = new WebSocket(consoleUrl(api().baseUrl, leaseHash, ts, sig, cols, rows));
    } catch (e) {
      setStatus('error');
      setMessage(e instanceof Error ? e.message : String(e));
      return;
    }
    socket.binaryType = 'arraybuffer';
    ws.current = socket;
    let failed = false;
    socket.onmessage = (ev) => {
      if (typeof ev.data !== 'string') {
        t.write(new Uint8Array(ev.data as ArrayBuffer));
        return;
      }
      let m: ConsoleServerMessage;
      try {
        m = JSON.parse(ev.data) as ConsoleServerMessage;
      } catch {
        return;
      }
      if (m.type === 'status') {
        setStatus(m.state);
        if (m.message) setMessage(m.message);
        if (m.state === 'ready') {
          t.focus();
          send({ type: 'resize', cols: t.cols, rows: t.rows });
        }
      } else if (m.type === 'sign') {
        try {
          const signature = keystore().signWithAccessKey(accessPub, hexToBytes(m.data));
          send({ type: 'signature', id: m.id, signature });
        } catch (e) {
          failed = true;
          setStatus('error');
          setMessage(e instanceof Error ? e.message : String(e));
          socket.close();
        }
      } else if (m.type === 'exit') {
        setMessage(`The shell ended${m.code === null ? '' : ` with exit code ${m.code}`}.`);
      } else if (m.type === 'error') {
        failed = true;
        setStatus('error');
        setMessage(`${m.code}: ${m.message}`);
      }
    };
    socket.onerror = () => {
      failed = true;
      setStatus('error');
      setMessage((prev) => prev ?? 'The console connection failed.');
    };
    socket.onclose = (ev) => {
      if (ws.current === socket) ws.current = undefined;
      if (!failed) {
        setStatus('closed');
        if (ev.reason) setMessage(ev.reason);
      }
    };
    return () => {
      socket.onclose = null;
      socket.close();
    };
  }, [attempt, leaseHash, accessPub]);

  return (
    <div className="card vm-console" data-testid="vm-console">
      <div className="row between">
        <span data-testid="console-status" data-state={status} className={status === 'error' ? 'error' : ''}>
          {status}
          {message ? `: ${message}` : ''}
        </span>
        <span className="row">
          <button
            type="button"
            onClick={() => void copy()}
            data-testid="console-copy"
            title="Copy the selection (Ctrl+Shift+C)"
          >
            Copy
          </button>
          <button
            type="button"
            onClick={() => void paste()}
            data-testid="console-paste"
            title="Paste (Ctrl+Shift+V)"
          >
            Paste
          </button>
          <button
            type="button"
            onClick={() => ws.current?.close()}
            disabled={status === 'closed' || status === 'error'}
            data-testid="console-disconnect"
          >
            Disconnect
          </button>
          <button type="button" onClick={() => setAttempt((a) => a + 1)} data-testid="console-reconnect">
            Reconnect
          </button>
        </span>
      </div>
      <div
        ref={host}
        className="terminal-host"
        data-testid="terminal"
        style={{ height: 380, background: '#000', padding: 4 }}
        onContextMenu={(e) => {
          e.preventDefault();
          if (term.current?.hasSelection()) void copy();
          else void paste();
        }}
      />
    </div>
  );
}
