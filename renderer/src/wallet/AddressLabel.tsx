import { short } from '../components/common.tsx';
import { href } from '../router.ts';
import { useAddressNames } from './names.ts';

/**
 * An address as people read it: the name (an own account's label, else the address book's) with a
 * "yours" mark, then the shortened address (the whole one on hover), optionally linked to the explorer.
 */
export function AddressLabel({
  address,
  chars = 6,
  link = false,
  testId,
}: {
  address: string | undefined;
  chars?: number;
  link?: boolean;
  testId?: string;
}) {
  const nameOf = useAddressNames();
  if (!address) return null;
  const n = nameOf(address);
  const addr = (
    <span className="mono small" style={{ whiteSpace: 'nowrap' }} title={address}>
      {short(address, chars)}
    </span>
  );
  return (
    <span className="address-label" data-testid={testId ?? 'address-label'} data-kind={n?.kind ?? 'unknown'}>
      {n && (
        <>
          <b data-testid="address-name">{n.name}</b>
          {n.kind === 'own' && <span className="badge own">yours</span>}{' '}
        </>
      )}
      {link ? <a href={href('explorer', 'account', address)}>{addr}</a> : addr}
    </span>
  );
}
