/**
 * Keeps the window's accounts reachable: a directory registration lives 30 minutes
 * (reference-behavior.md 7.2), so it is renewed every 20, and tried again soon when it failed (the
 * node starting, or away) rather than at the next renewal.
 */
export const REGISTER_EVERY_MS = 20 * 60_000;
export const REGISTER_RETRY_MS = 30_000;

export interface RegistrationTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Registers now, then on schedule until the returned function is called. */
export function keepRegistered(
  register: () => Promise<void>,
  opts: { everyMs?: number; retryMs?: number; timers?: RegistrationTimers } = {},
): () => void {
  const everyMs = opts.everyMs ?? REGISTER_EVERY_MS;
  const retryMs = opts.retryMs ?? REGISTER_RETRY_MS;
  const timers: RegistrationTimers = opts.timers ?? {
    setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
    clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  let stopped = false;
  let handle: unknown;
  const run = (): void => {
    register().then(
      () => {
        if (!stopped) handle = timers.setTimeout(run, everyMs);
      },
      () => {
        if (!stopped) handle = timers.setTimeout(run, retryMs);
      },
    );
  };
  run();
  return () => {
    stopped = true;
    timers.clearTimeout(handle);
  };
}
