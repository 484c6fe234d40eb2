import type { DestinationStream, Logger } from 'pino';
import { pinoPackage } from '../cjs-packages.ts';
import type { LogRing } from './log-ring.ts';

const { pino } = pinoPackage;

/**
 * The node's logger, writing every line both where the given logger writes (stderr for the CLI, the
 * main log file in the desktop app) and into the in-memory ring the Node page reads. pino fixes a
 * logger's destination when it is created, so the tee is a new logger with the same level and
 * bindings over a multistream of the two. Without a logger (tests, embedders that want no log) the
 * node still keeps its recent lines, at info, in the ring only.
 */
export function teeLogger(base: Logger | undefined, ring: LogRing): Logger {
  if (base === undefined) return pino({ level: 'info', base: undefined }, ring);
  const dest = (base as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    DestinationStream | undefined;
  // A logger that is not pino's own (no destination to share): kept as it is, the ring stays empty.
  if (dest === undefined || typeof dest.write !== 'function') return base;
  return pino(
    { level: base.level, base: base.bindings() },
    pino.multistream([
      { level: 'trace', stream: dest },
      { level: 'trace', stream: ring },
    ]),
  );
}
