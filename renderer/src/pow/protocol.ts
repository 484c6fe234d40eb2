/** Messages between the page and the proof-of-work worker (u64 values travel as decimal strings). */
export type PowWorkerRequest =
  | { type: 'solve'; id: number; target: string; difficulty: string; startNonce: string }
  | { type: 'cancel'; id: number };

export type PowWorkerResponse =
  | { type: 'ready'; simd: boolean }
  | { type: 'progress'; id: number; attempts: string }
  | { type: 'done'; id: number; nonce: string; attempts: string }
  | { type: 'failed'; id: number; aborted: boolean; message: string };
