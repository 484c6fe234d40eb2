import { formatUnits } from '../../../node-core/protocol/units.ts';

/** Micro-units as units with thousands separators ("1,250.5"): exact, never through a float. */
export function groupedUnits(micro: bigint, minDecimals = 0): string {
  const s = formatUnits(micro, minDecimals);
  const neg = s.startsWith('-');
  const [whole, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac ? `.${frac}` : ''}`;
}
