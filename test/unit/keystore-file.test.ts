import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkContents,
  deriveKey,
  type KdfParams,
  type KeystoreContents,
  KeystoreFileError,
  newKdfParams,
  open,
  openWithPassword,
  parse,
  seal,
  stringify,
  WrongPasswordError,
} from '../../node-core/client/keystore-file.ts';

/**
 * The keystore file (window vault, backup file, CLI): round trips, the header bound to the
 * ciphertext, version 1 files still opening as imported accounts, and every refusal with its code.
 */
// The smallest N the format accepts keeps the real scrypt quick in tests.
const KDF_PARAMS = { N: 2 ** 14, r: 8, p: 1 } as const;
const PASSWORD = 'pässword one'; // NFKC-normalised: the same bytes however the ä was typed

const CONTENTS: KeystoreContents = {
  phrase: { entropy: 'ab'.repeat(32), nextIndex: 3 },
  accounts: [
    { kind: 'derived', index: 0, label: 'Main', created: 1_700_000_000_000 },
    { kind: 'imported', seed: '11'.repeat(32), label: 'Old one', created: 1_700_000_000_001 },
    { kind: 'derived', index: 2, label: 'Savings', hidden: true, created: 1_700_000_000_002 },
  ],
  accessKeys: [{ seed: '22'.repeat(32), pub: '33'.repeat(32), lease: '44'.repeat(32), created: 5 }],
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof KeystoreFileError ? e.code : `not a KeystoreFileError: ${String(e)}`;
  }
  return undefined;
}

async function sealed(contents = CONTENTS): Promise<{ kdf: KdfParams; key: Uint8Array; text: string }> {
  const kdf = newKdfParams(KDF_PARAMS);
  const key = await deriveKey(PASSWORD, kdf);
  return { kdf, key, text: stringify(seal(contents, key, kdf)) };
}

describe('keystore file', () => {
  it('seals and opens the contents; the text is the documented header and no plaintext', async () => {
    const { key, text } = await sealed();
    const file = parse(text);
    expect(file).toMatchObject({
      type: 'ledger-node-keystore',
      version: 2,
      cipher: 'xchacha20-poly1305',
      kdf: { name: 'scrypt', N: 2 ** 14, r: 8, p: 1 },
    });
    expect(Object.keys(file).sort()).toEqual(['cipher', 'ciphertext', 'kdf', 'nonce', 'type', 'version']);
    expect(text).not.toContain('Savings');
    expect(text).not.toContain('ab'.repeat(32));
    expect(text.endsWith('}\n')).toBe(true);
    expect(open(key, file)).toEqual(CONTENTS);
    expect(await openWithPassword(text, PASSWORD.normalize('NFD'))).toEqual(CONTENTS);
  });

  it('the key is scrypt of the NFKC password with the header parameters (node:crypto agrees)', async () => {
    const kdf = newKdfParams(KDF_PARAMS);
    const key = await deriveKey(PASSWORD, kdf);
    const byHand = scryptSync(Buffer.from(PASSWORD.normalize('NFKC')), Buffer.from(kdf.salt, 'hex'), 32, {
      N: kdf.N,
      r: kdf.r,
      p: kdf.p,
    });
    expect(Buffer.from(key).toString('hex')).toBe(byHand.toString('hex'));
  });

  it('a fresh nonce and salt each time', async () => {
    const a = parse((await sealed()).text);
    const b = parse((await sealed()).text);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.kdf.salt).not.toBe(b.kdf.salt);
  });

  it('a wrong password, or any change to the header or ciphertext, fails as wrong_password', async () => {
    const { key, text } = await sealed();
    await expect(openWithPassword(text, 'another password')).rejects.toBeInstanceOf(WrongPasswordError);
    const file = parse(text);
    // The header is associated data: weakening N (still allowed by parse) breaks the tag.
    expect(codeOf(() => open(key, { ...file, kdf: { ...file.kdf, N: 2 ** 15 } }))).toBe('wrong_password');
    const flipped = (file.ciphertext[0] === '0' ? '1' : '0') + file.ciphertext.slice(1);
    expect(codeOf(() => open(key, { ...file, ciphertext: flipped }))).toBe('wrong_password');
    expect(codeOf(() => open(key, { ...file, version: 1, type: undefined }))).toBe('wrong_password');
  });

  it('opens a version 1 vault (the window before phrases): its accounts become imported ones', async () => {
    const kdf = newKdfParams(KDF_PARAMS);
    const key = await deriveKey(PASSWORD, kdf);
    // Version 1 as written before: no type, associated data "ledger-desktop-vault/v1|...".
    const v1 = {
      accounts: [{ seed: '55'.repeat(32), label: 'First', created: 42 }],
      accessKeys: [{ seed: '66'.repeat(32), pub: '77'.repeat(32), created: 43 }],
    };
    const nonce = randomBytes(24);
    const aad = `ledger-desktop-vault/v1|xchacha20-poly1305|scrypt|${kdf.N}|${kdf.r}|${kdf.p}|${kdf.salt}`;
    const ct = xchacha20poly1305(key, nonce, new TextEncoder().encode(aad)).encrypt(
      new TextEncoder().encode(JSON.stringify(v1)),
    );
    const text = JSON.stringify({
      version: 1,
      kdf,
      cipher: 'xchacha20-poly1305',
      nonce: nonce.toString('hex'),
      ciphertext: Buffer.from(ct).toString('hex'),
    });
    const contents = await openWithPassword(text, PASSWORD);
    expect(contents).toEqual({
      accounts: [{ kind: 'imported', seed: '55'.repeat(32), label: 'First', created: 42 }],
      accessKeys: v1.accessKeys,
    });
    // Saved again, it is a version 2 file with the same accounts.
    const again = seal(contents, key, kdf);
    expect(again.version).toBe(2);
    expect(open(key, again)).toEqual(contents);
  });

  it('parse names what is wrong with a file that is not a keystore', async () => {
    const { text } = await sealed();
    const file = JSON.parse(text) as Record<string, unknown>;
    const variant = (patch: Record<string, unknown>) =>
      codeOf(() => parse(JSON.stringify({ ...file, ...patch })));
    expect(codeOf(() => parse('not json'))).toBe('not_keystore');
    expect(codeOf(() => parse('[1]'))).toBe('not_keystore');
    expect(codeOf(() => parse('{"hello": "world"}'))).toBe('not_keystore');
    expect(variant({ type: 'something-else' })).toBe('not_keystore');
    expect(variant({ version: 3 })).toBe('unsupported_version');
    expect(variant({ cipher: 'aes' })).toBe('damaged');
    expect(variant({ kdf: { ...(file.kdf as object), N: 1000 } })).toBe('damaged');
    expect(variant({ kdf: { ...(file.kdf as object), N: 2 ** 21 } })).toBe('damaged');
    expect(variant({ kdf: { ...(file.kdf as object), N: 2 ** 12 } })).toBe('weak_kdf');
    expect(variant({ nonce: 'zz' })).toBe('damaged');
    expect(() => parse('{"hello": "world"}')).toThrow(
      'This is not a Ledger Node keystore file (it has no keystore header).',
    );
  });

  it('refuses contents that break the format, before sealing', () => {
    const bad = (c: unknown) => codeOf(() => checkContents(c));
    expect(bad(CONTENTS)).toBeUndefined();
    expect(bad({})).toBe('damaged');
    expect(bad({ accounts: [{ kind: 'derived', index: 0, label: 'x', created: 1 }] })).toBe('damaged'); // no phrase
    const phrase = { entropy: 'ab'.repeat(16), nextIndex: 1 };
    expect(bad({ phrase, accounts: [{ kind: 'derived', index: 1, label: 'x', created: 1 }] })).toBe(
      'damaged',
    );
    expect(bad({ phrase: { entropy: 'ab'.repeat(17), nextIndex: 1 }, accounts: [] })).toBe('damaged');
    expect(
      bad({
        phrase: { ...phrase, nextIndex: 2 },
        accounts: [
          { kind: 'derived', index: 0, label: 'x', created: 1 },
          { kind: 'derived', index: 0, label: 'y', created: 1 },
        ],
      }),
    ).toBe('damaged');
    expect(bad({ accounts: [{ kind: 'imported', seed: 'ab', label: 'x', created: 1 }] })).toBe('damaged');
    expect(bad({ accounts: [{ kind: 'other', label: 'x', created: 1 }] })).toBe('damaged');
    expect(bad({ accounts: [], accessKeys: [{ seed: '11'.repeat(32), pub: 'x', created: 1 }] })).toBe(
      'damaged',
    );
    expect(() => seal({ accounts: 'no' } as never, new Uint8Array(32), newKdfParams())).toThrow(/damaged/);
  });
});
