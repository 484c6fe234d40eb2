import { formatUnits } from '../../../node-core/protocol/units.ts';

/** Micro-units as units with thousands separators ("1,250.5"): exact, never through a float. */
export function groupedUnits(micro: bigint, minDecimals = 0): string {
  const s = formatUnits(micro, minDecimals);
  const neg = s.startsWith('-');
  const [whole, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac ? `.${frac}` : ''}`;
}

/**
 * When a block was made, for people. A genesis block carries timestamp 0 by the protocol (it has no
 * time of its own): it is the network's start, not 1 January 1970.
 */
export function blockTime(type: string, ns: bigint): string {
  if (type === 'genesis' || ns === 0n) return 'at the network’s start';
  return new Date(Number(ns / 1_000_000n)).toLocaleString();
}
