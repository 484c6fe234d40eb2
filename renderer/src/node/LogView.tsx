import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { stringifyJson } from '../../../node-core/protocol/json.ts';
import { Loading } from '../components/common.tsx';
import { adminRequest, isSignedOut } from './admin-http.ts';
import { type LogLine, openLogStream, type StreamState } from './log-stream.ts';

/**
 * The node's log, live: the newest lines first read from `GET /node/log`, then followed on its event
 * stream. Filters (lowest level, text) are applied by the node; Pause holds new lines back (counted)
 * so a line can be read while the node keeps logging. The view keeps the newest MAX_SHOWN lines.
 */
const MAX_SHOWN = 500;
const FIELD_CHARS = 300;

const LEVELS = [
  { value: '', label: 'All levels' },
  { value: 'debug', label: 'Debug and above' },
  { value: 'info', label: 'Info and above' },
  { value: 'warn', label: 'Warnings and errors' },
  { value: 'error', label: 'Errors only' },
] as const;

function fieldsText(fields: LogLine['fields']): string {
  const parts = Object.entries(fields).map(
    ([k, v]) => `${k}=${typeof v === 'string' ? v : stringifyJson(v)}`,
  );
  return parts.join(' ');
}

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export function LogView() {
  const [level, setLevel] = useState('');
  const [draft, setDraft] = useState('');
  const text = useDebounced(draft.trim(), 300);
  const [lines, setLines] = useState<LogLine[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [stream, setStream] = useState<StreamState>({ kind: 'connecting' });
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState(0);
  const pausedRef = useRef(false);
  const heldRef = useRef<LogLine[]>([]);
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    let stop: (() => void) | undefined;
    let cancelled = false;
    setLoading(true);
    setError(undefined);
    heldRef.current = [];
    setHeld(0);
    const q = new URLSearchParams({ limit: '200' });
    if (level) q.set('level', level);
    if (text) q.set('q', text);
    adminRequest<{ lines: LogLine[]; last_seq: number }>('GET', `/node/log?${q.toString()}`).then(
      (page) => {
        if (cancelled) return;
        setLines(page.lines);
        setLoading(false);
        stop = openLogStream({
          level,
          text,
          after: Number(page.last_seq),
          onState: setStream,
          onLines: (more) => {
            if (pausedRef.current) {
              heldRef.current.push(...more);
              setHeld(heldRef.current.length);
              return;
            }
            setLines((old) => [...old, ...more].slice(-MAX_SHOWN));
          },
        });
      },
      (e: unknown) => {
        if (cancelled) return;
        setError(e);
        setLoading(false);
      },
    );
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [level, text]);

  // Follows the newest line unless the reader scrolled up to read an older one.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lines]);

  const togglePause = () => {
    const next = !paused;
    setPaused(next);
    pausedRef.current = next;
    if (!next && heldRef.current.length > 0) {
      const more = heldRef.current;
      heldRef.current = [];
      setHeld(0);
      setLines((old) => [...old, ...more].slice(-MAX_SHOWN));
    }
  };

  if (isSignedOut(error))
    return (
      <div className="warn box" data-testid="log-signed-out">
        {(error as Error).message} The log can name addresses of peers and accounts. Open the app from the
        link the node prints when it starts (it signs this browser in), or read the log where the node writes
        it.
      </div>
    );

  return (
    <div data-testid="log-view">
      <div className="row">
        <label className="visually-hidden" htmlFor="log-level">
          Level
        </label>
        <select
          id="log-level"
          value={level}
          onChange={(e) => setLevel(e.target.value)}
          data-testid="log-level"
        >
          {LEVELS.map((l) => (
            <option key={l.value} value={l.value}>
              {l.label}
            </option>
          ))}
        </select>
        <label className="visually-hidden" htmlFor="log-filter">
          Text filter
        </label>
        <input
          id="log-filter"
          type="search"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="filter: text in the message or its fields"
          maxLength={200}
          style={{ minWidth: 260 }}
          data-testid="log-filter"
        />
        <button type="button" onClick={togglePause} aria-pressed={paused} data-testid="log-pause">
          {paused ? `Resume${held > 0 ? ` (${held} new)` : ''}` : 'Pause'}
        </button>
        <span className="small muted" data-testid="log-stream-state" data-state={stream.kind}>
          {stream.kind === 'live'
            ? paused
              ? 'paused'
              : 'live'
            : stream.kind === 'connecting'
              ? 'connecting…'
              : stream.kind === 'signed_out'
                ? 'not signed in'
                : `reconnecting in ${stream.inSeconds} s (${stream.reason})`}
        </span>
      </div>
      {error !== undefined && (
        <div className="error box" role="alert" data-testid="log-error">
          {(error as Error).message}
        </div>
      )}
      {loading ? (
        <Loading what="Reading the log" />
      ) : (
        <div
          className="log-box"
          ref={box}
          role="log"
          aria-live="off"
          aria-label="Node log, newest at the bottom"
          tabIndex={0}
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          }}
          data-testid="log-lines"
          data-count={lines.length}
        >
          {lines.length === 0 ? (
            <div className="muted small">
              {text || level ? 'No line matches the filter yet.' : 'The node has logged nothing yet.'}
            </div>
          ) : (
            lines.map((l) => {
              const f = fieldsText(l.fields);
              return (
                <div key={l.seq} className={`log-line lvl-${l.level_name}`} data-testid="log-line">
                  <span className="log-time">{new Date(l.time).toLocaleTimeString()}</span>{' '}
                  <span className="log-level">{l.level_name}</span> <span className="log-msg">{l.msg}</span>
                  {f && (
                    <span className="log-fields" title={f.length > FIELD_CHARS ? f : undefined}>
                      {' '}
                      {f.length > FIELD_CHARS ? `${f.slice(0, FIELD_CHARS)}…` : f}
                    </span>
                  )}
                </div>
              );
            })
          )}
        </div>
      )}
    </div>
  );
}
