import { useCallback, useRef, useState } from 'react';

/** State of one user action (a button that writes): running, its result, its error. */
export interface Action<A extends unknown[], R> {
  run(...args: A): Promise<R | undefined>;
  busy: boolean;
  error: unknown;
  result: R | undefined;
  reset(): void;
}

export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): Action<A, R> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<R>();
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const run = useCallback(async (...args: A) => {
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      const r = await fnRef.current(...args);
      setResult(r);
      return r;
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  const reset = useCallback(() => {
    setError(undefined);
    setResult(undefined);
  }, []);
  return { run, busy, error, result, reset };
}
