import { useState, type ReactNode } from 'react';
import { errorMessage } from '../api.ts';
import { groupedUnits } from '../wallet/format.ts';

export { groupedUnits };

/** Small shared pieces: error, loading and empty states, amounts, addresses, copy. */

export function ErrorText({ error, testId }: { error: unknown; testId?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <div className="error box" role="alert" data-testid={testId ?? 'error'}>
      {errorMessage(error)}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <div className="skeleton" role="status" data-testid="loading">
      {what}…
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <div className="muted" data-testid="empty">
      {children}
    </div>
  );
}

export function Amount({
  micro,
  asset,
  testId,
}: {
  micro: bigint | undefined;
  asset?: string;
  testId?: string;
}) {
  return (
    <span className="amount" data-testid={testId} data-micro={micro?.toString()}>
      {micro === undefined ? '—' : groupedUnits(micro)}
      {asset ? ` ${asset}` : ''}
    </span>
  );
}

export function short(hex: string | undefined, n = 8): string {
  if (!hex) return '';
  return hex.length <= 2 * n + 1 ? hex : `${hex.slice(0, n)}…${hex.slice(-n)}`;
}

export function CopyButton({
  text,
  label = 'Copy',
  testId,
}: {
  text: string;
  label?: string;
  testId?: string;
}) {
  const [done, setDone] = useState<'ok' | 'failed' | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('ok');
    } catch {
      // Clipboard access can be refused (permissions, an insecure origin): select the text instead.
      setDone('failed');
    }
    setTimeout(() => setDone(undefined), 1500);
  };
  return (
    <button type="button" onClick={() => void copy()} data-testid={testId} title="Copy to the clipboard">
      {done === 'ok' ? 'Copied' : done === 'failed' ? 'Copy refused: select the text' : label}
    </button>
  );
}

/** Unix nanoseconds as local date and time. */
export function timeOf(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toLocaleString();
}

/** "12 s ago", "3 min ago". */
export function ago(ns: bigint, nowMs = Date.now()): string {
  const s = Math.max(0, Math.round((nowMs - Number(ns / 1_000_000n)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** A tiny identicon: a 5×5 mirrored grid coloured from the address. */
export function Identicon({ address, size = 28 }: { address: string; size?: number }) {
  const bytes = address.slice(0, 32);
  const hue = parseInt(address.slice(32, 35) || '0', 16) % 360;
  const cells: ReactNode[] = [];
  for (let y = 0; y < 5; y++) {
    for (let x = 0; x < 3; x++) {
      const on = parseInt(bytes[y * 3 + x] ?? '0', 16) % 2 === 0;
      if (!on) continue;
      cells.push(<rect key={`${x}-${y}`} x={x} y={y} width={1} height={1} />);
      if (x < 2) cells.push(<rect key={`m${x}-${y}`} x={4 - x} y={y} width={1} height={1} />);
    }
  }
  return (
    <svg
      width={size}
      height={size}
      viewBox="-0.5 -0.5 6 6"
      aria-hidden="true"
      style={{ background: `hsl(${hue} 40% 92%)`, borderRadius: 6, flex: 'none' }}
    >
      <g fill={`hsl(${hue} 55% 42%)`}>{cells}</g>
    </svg>
  );
}
