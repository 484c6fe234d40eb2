import { useCallback } from 'react';
import { useKeystore } from '../keystore/index.ts';
import { contacts, type Contact } from '../settings.ts';

/**
 * Names for addresses, one rule for every page: the person's own accounts by their label first
 * (an own account is never shown by a contact's name), then the address book.
 */
export interface AddressName {
  name: string;
  kind: 'own' | 'contact';
}

export function resolveName(
  address: string | undefined,
  own: readonly { address: string; label: string }[],
  book: readonly Contact[],
): AddressName | undefined {
  if (!address) return undefined;
  const mine = own.find((a) => a.address === address);
  if (mine) return { name: mine.label, kind: 'own' };
  const c = book.find((x) => x.address === address);
  return c ? { name: c.name, kind: 'contact' } : undefined;
}

/** The resolver over the unlocked keystore's accounts and the address book, kept current. */
export function useAddressNames(): (address: string | undefined) => AddressName | undefined {
  const { accounts } = useKeystore();
  const book = contacts.use();
  return useCallback((a: string | undefined) => resolveName(a, accounts, book), [accounts, book]);
}

export interface NamedAddress extends AddressName {
  address: string;
}

/**
 * Addresses whose name matches what was typed (case and accents ignored): the exact names if any,
 * else every name that contains it. Own accounts first, then the address book.
 */
export function findByName(
  query: string,
  own: readonly { address: string; label: string }[],
  book: readonly Contact[],
): NamedAddress[] {
  const fold = (s: string) =>
    s
      .normalize('NFD')
      .replace(/\p{Diacritic}/gu, '')
      .toLowerCase()
      .trim();
  const q = fold(query);
  if (q === '') return [];
  const all: NamedAddress[] = [
    ...own.map((a) => ({ address: a.address, name: a.label, kind: 'own' as const })),
    ...book
      .filter((c) => !own.some((a) => a.address === c.address))
      .map((c) => ({ address: c.address, name: c.name, kind: 'contact' as const })),
  ];
  const exact = all.filter((n) => fold(n.name) === q);
  return exact.length > 0 ? exact : all.filter((n) => fold(n.name).includes(q));
}
