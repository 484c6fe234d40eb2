import type { WireError } from './channels.ts';

/**
 * Messages between the main process (PowHost) and the proof-of-work utility process (PowService).
 * Job ids on this wire are the host's own sequence numbers, never the renderer's job ids: a job id
 * the renderer reuses right after a cancel cannot meet its predecessor in the utility process.
 * Big numbers travel as decimal or hex strings (structured clone would keep bigints, but strings
 * keep the protocol plain and printable).
 */
export type ToPowProcess =
  { type: 'solve'; id: number; target: string; difficulty: string } | { type: 'cancel'; id: number };

export type FromPowProcess =
  | { type: 'progress'; id: number; attempts: string; expected: number }
  | { type: 'solved'; id: number; nonce: string }
  | { type: 'failed'; id: number; error: WireError };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

export function isToPowProcess(m: unknown): m is ToPowProcess {
  if (!isObj(m) || !isId(m.id)) return false;
  if (m.type === 'cancel') return true;
  return m.type === 'solve' && typeof m.target === 'string' && typeof m.difficulty === 'string';
}

export function isFromPowProcess(m: unknown): m is FromPowProcess {
  if (!isObj(m) || !isId(m.id)) return false;
  switch (m.type) {
    case 'progress':
      return typeof m.attempts === 'string' && typeof m.expected === 'number';
    case 'solved':
      return typeof m.nonce === 'string';
    case 'failed':
      return isObj(m.error) && typeof m.error.name === 'string' && typeof m.error.message === 'string';
    default:
      return false;
  }
}
