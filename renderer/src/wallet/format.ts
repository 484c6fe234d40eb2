import { formatUnits } from '../../../node-core/protocol/units.ts';
import { browserSeparators, type NumberSeparators } from './amount-input.ts';

let display: NumberSeparators | undefined;

/** The separators amounts are shown with: the browser's locale, read once (as the send form reads them). */
export function displaySeparators(): NumberSeparators {
  display ??= browserSeparators();
  return display;
}

/**
 * Micro-units as units with thousands separators, in the person's locale ("1,250.5" in English,
 * "1.250,5" in German, so what is shown reads back in the send form): exact, never through a float.
 */
export function groupedUnits(micro: bigint, minDecimals = 0, seps = displaySeparators()): string {
  const s = formatUnits(micro, minDecimals);
  const neg = s.startsWith('-');
  const [whole, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, seps.group);
  return `${neg ? '-' : ''}${grouped}${frac ? `${seps.decimal}${frac}` : ''}`;
}

/**
 * When a block was made, for people. A genesis block carries timestamp 0 by the protocol (it has no
 * time of its own): it is the network's start, not 1 January 1970, and the node says when that was
 * (`network_started_at` in /node) when it can.
 */
export function blockTime(type: string, ns: bigint, networkStart?: bigint | null): string {
  if (type === 'genesis' || ns === 0n)
    return networkStart
      ? `${new Date(Number(networkStart / 1_000_000n)).toLocaleString()} (the network’s start)`
      : 'at the network’s start';
  return new Date(Number(ns / 1_000_000n)).toLocaleString();
}
