import { useState } from 'react';
import { short } from '../components/common.tsx';

/**
 * A hash, id or key: shortened in monospace (the whole value in the tooltip) with a small copy
 * button that names what it copies, so a screen reader does not hear a row of bare "Copy"s.
 */
export function HexValue({
  value,
  what,
  keep = 6,
  testId,
}: {
  value: string;
  /** What the value is, for the button's name: "peer id", "block hash". */
  what: string;
  keep?: number;
  testId?: string;
}) {
  const [state, setState] = useState<'copied' | 'refused' | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('refused');
    }
    setTimeout(() => setState(undefined), 1500);
  };
  return (
    <span className="hex-value" data-testid={testId} data-value={value}>
      <span className="mono small" title={value}>
        {short(value, keep)}
      </span>
      <button
        type="button"
        className="copy-mini"
        onClick={() => void copy()}
        aria-label={`Copy ${what}`}
        title={state === 'refused' ? 'Copying was refused: select the text in the tooltip' : `Copy ${what}`}
      >
        {state === 'copied' ? 'Copied' : state === 'refused' ? 'Refused' : 'Copy'}
      </button>
    </span>
  );
}
