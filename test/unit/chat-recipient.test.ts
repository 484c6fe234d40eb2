import { describe, expect, it } from 'vitest';
import { parseRecipient } from '../../renderer/src/chat/recipient.ts';

/** The "new conversation" box: a name from the address book, an address or a public key. */
const A = 'ab'.repeat(32);
const book = [
  { name: 'Alice', address: A },
  { name: 'Sam', address: 'cd'.repeat(32) },
  { name: 'sam ', address: 'ef'.repeat(32) },
];

describe('new conversation input', () => {
  it('takes an address book name, whatever the case and spaces around it', () => {
    expect(parseRecipient('  alice ', book)).toEqual({ account: A });
  });

  it('asks for the address when two entries share the name', () => {
    const r = parseRecipient('Sam', book);
    expect('error' in r && r.error).toMatch(/2 address book entries are called “Sam”/);
  });

  it('takes 64 hexadecimal characters, spaces dropped and lower-cased', () => {
    const spaced = `${A.slice(0, 32).toUpperCase()} ${A.slice(32)}`;
    expect(parseRecipient(spaced, book)).toEqual({ account: A });
  });

  it('says what is wrong otherwise', () => {
    expect(parseRecipient('', book)).toEqual({
      error: 'Enter an address, a public key or a name from your address book.',
    });
    const short = parseRecipient('abc123', book);
    expect('error' in short && short.error).toMatch(/64 hexadecimal characters; this has 6/);
    const unknown = parseRecipient('Zoe', book);
    expect('error' in unknown && unknown.error).toMatch(/No address book entry has that name/);
  });
});
