/**
 * Finding the accounts of a restored phrase: derive index 0, 1, 2, ... and ask the node whether each
 * was used (it has a chain, or sends wait for it), stopping after GAP unused ones in a row, the usual
 * gap limit of one-seed wallets. Index 0 is always kept, used or not, so a restore always gives an
 * account. Pure: the derivation and the question to the node are passed in.
 */
export const SCAN_GAP = 5;
/** A runaway stop: nobody opens this many accounts, and a node answering "used" to all is broken. */
export const SCAN_MAX = 1000;

export interface ScanProgress {
  /** The index being checked. */
  index: number;
  /** Indexes found used so far. */
  used: readonly number[];
  /** Unused indexes in a row just before `index`. */
  gap: number;
}

export interface ScanResult {
  /** Indexes to add: 0 and every used one, in order. */
  indexes: number[];
  /** Indexes found used (0 among them only if it was). */
  used: number[];
  /** How many indexes were checked. */
  checked: number;
  /** Why the scan stopped. */
  stoppedBy: 'gap' | 'max';
}

export class ScanCancelledError extends Error {
  constructor() {
    super('The search for used accounts was cancelled.');
    this.name = 'ScanCancelledError';
  }
}

export async function scanAccounts(opts: {
  addressOf(index: number): string | Promise<string>;
  isUsed(address: string): Promise<boolean>;
  gap?: number;
  max?: number;
  onProgress?(p: ScanProgress): void;
  signal?: AbortSignal;
}): Promise<ScanResult> {
  const gapLimit = opts.gap ?? SCAN_GAP;
  const max = opts.max ?? SCAN_MAX;
  const used: number[] = [];
  let gap = 0;
  let index = 0;
  for (; index < max && gap < gapLimit; index++) {
    if (opts.signal?.aborted) throw new ScanCancelledError();
    opts.onProgress?.({ index, used, gap });
    const address = await opts.addressOf(index);
    if (await opts.isUsed(address)) {
      used.push(index);
      gap = 0;
    } else gap++;
  }
  if (opts.signal?.aborted) throw new ScanCancelledError();
  return {
    indexes: used[0] === 0 ? [...used] : [0, ...used],
    used,
    checked: index,
    stoppedBy: gap >= gapLimit ? 'gap' : 'max',
  };
}
