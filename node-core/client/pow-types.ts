/**
 * The proof-of-work engine a script gets from `ledger-node-desktop/pow`: the same interface on Node
 * (pow-node.ts, the multi-core worker-thread solver) and in a browser (pow-browser.ts, the
 * WebAssembly kernel on the calling thread), chosen by the package's export conditions.
 */
export interface PowProgressInfo {
  /** Nonces tried so far. */
  attempts: bigint;
  /** Expected tries at this difficulty (a float, for a percentage or an estimate). */
  expected: number;
}

export interface PowEngineOptions {
  /** Called while a solve runs (about every 100 ms) and once at its end. */
  onProgress?: (p: PowProgressInfo) => void;
  /** Node only: worker threads (default: every core). */
  threads?: number;
}

export interface PowEngine {
  /** A nonce reaching `difficulty` for the 32-byte target; fits WalletOptions.solvePow. */
  solve(target: Uint8Array, difficulty: bigint, signal?: AbortSignal): Promise<bigint>;
  /** Frees the workers (Node); the engine can no longer solve. */
  close(): Promise<void>;
  readonly kind: 'node-workers' | 'wasm';
}
