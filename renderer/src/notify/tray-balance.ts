/**
 * The tray's balance line in the desktop app: the XE of every unlocked account, summed exactly.
 * The page knows the accounts (the main process never sees them), so it reports the total through
 * the bridge (tray.setBalance) as a micro-unit digit string, or null when locked or not yet known.
 */
export function totalMicro(balances: readonly (bigint | undefined)[]): bigint | undefined {
  let sum = 0n;
  for (const b of balances) {
    if (b === undefined) return undefined; // a total missing an account would mislead
    sum += b;
  }
  return sum;
}
