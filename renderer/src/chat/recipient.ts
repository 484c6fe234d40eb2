/**
 * What the "new conversation" box takes: an address book name, an address or a public key (both 64
 * hexadecimal characters; only the directory can tell which, and gives the key messages go to).
 */

export interface NamedAddress {
  name: string;
  address: string;
}

/** The 64-hex account to look up in the directory, or a sentence saying what is wrong. */
export function parseRecipient(
  text: string,
  book: readonly NamedAddress[],
): { account: string } | { error: string } {
  const name = text.trim().toLowerCase();
  if (name === '') return { error: 'Enter an address, a public key or a name from your address book.' };
  const named = book.filter((c) => c.name.trim().toLowerCase() === name);
  if (named.length === 1) return { account: named[0]!.address };
  if (named.length > 1)
    return { error: `${named.length} address book entries are called “${text.trim()}”: enter the address.` };
  const hex = text.replace(/\s+/g, '').toLowerCase();
  if (/^[0-9a-f]*$/.test(hex) && hex.length !== 64)
    return { error: `An address or public key is 64 hexadecimal characters; this has ${hex.length}.` };
  if (!/^[0-9a-f]{64}$/.test(hex))
    return {
      error:
        'No address book entry has that name, and it is not an address or a public key (64 characters, 0-9 and a-f).',
    };
  return { account: hex };
}
