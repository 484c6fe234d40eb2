import type { VerifyPool } from '../../node-core/fastpath/verify-pool.ts';

/** Ends a pool's first worker as a crash would: its thread stops with its requests unanswered. */
export async function crashWorker(pool: VerifyPool): Promise<void> {
  await (
    pool as unknown as { slots: { worker: { terminate(): Promise<number> } }[] }
  ).slots[0]!.worker.terminate();
}
