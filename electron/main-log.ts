import { pino, type Logger } from 'pino';
import { prettyDestination, wantsColor } from '../node-core/cli/log-format.ts';

/**
 * The desktop app's log: JSON lines in `<userData>/logs/main.log` always (what a bug report needs),
 * and, when the app was started from a terminal (`npm start`), the same lines readable on stderr,
 * as `ledger-node` prints them (node-core/cli/log-format.ts). The logger's level governs both.
 */
export interface TerminalLike {
  isTTY?: boolean;
  write(text: string): unknown;
}

export function mainLogger(
  file: string,
  level: string,
  terminal: TerminalLike = process.stderr,
  env: Record<string, string | undefined> = process.env,
): Logger {
  const toFile = pino.destination({ dest: file, mkdir: true, sync: false });
  const base = { level, base: { name: 'ledger-node-desktop' } };
  if (terminal.isTTY !== true) return pino(base, toFile);
  const both = pino.multistream([
    { level: 'trace', stream: toFile },
    { level: 'trace', stream: prettyDestination(terminal, { color: wantsColor(true, env) }) },
  ]);
  // logger.flush() reaches the stream's flush: the file is the one that buffers (sync: false).
  return pino(base, Object.assign(both, { flush: (cb: (err?: Error) => void) => toFile.flush(cb) }));
}
