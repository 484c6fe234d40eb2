import { createHash, createHmac, createPrivateKey, createPublicKey, pbkdf2Sync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  accountPath,
  accountSeed,
  accountSeedFromWalletNode,
  parseHardenedPath,
  slip10Child,
  slip10Derive,
  slip10Master,
  walletNode,
} from '../../node-core/protocol/hd-derivation.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import {
  entropyToBip39Seed,
  entropyToBip39SeedAsync,
  entropyToPhrase,
  MnemonicError,
  phraseToEntropy,
  phraseWords,
  walletNodeOfEntropy,
  walletNodeOfEntropyAsync,
  wordsStartingWith,
} from '../../node-core/protocol/mnemonic.ts';

/**
 * One seed, many accounts: SLIP-0010 Ed25519 derivation and BIP-39 phrases. Published vectors typed
 * in with their source, and every derivation also recomputed here from the specifications with
 * node:crypto (HMAC-SHA512, PBKDF2, Ed25519, SHA-256), which shares no code with the module.
 */
const H = 0x8000_0000;

/** SLIP-0010 by hand: master, then hardened children, with node:crypto's HMAC-SHA512. */
function slip10ByHand(seed: Buffer, path: number[]): { key: Buffer; chainCode: Buffer } {
  let I = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const index of path) {
    const ser32 = Buffer.alloc(4);
    ser32.writeUInt32BE(index + H);
    I = createHmac('sha512', I.subarray(32))
      .update(Buffer.concat([Buffer.from([0]), I.subarray(0, 32), ser32]))
      .digest();
  }
  return { key: I.subarray(0, 32), chainCode: I.subarray(32) };
}

/** Ed25519 public key of a 32-byte seed through OpenSSL (PKCS#8 wrapping of RFC 8410). */
function publicKeyByOpenSsl(seed: Buffer): Buffer {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const pub = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
  return pub.export({ format: 'der', type: 'spki' }).subarray(-32);
}

/** Account address per protocol.md section 2: SHA-256("xe/account/v1" || public key). */
function addressByHand(pub: Buffer): string {
  return createHash('sha256').update('xe/account/v1').update(pub).digest('hex');
}

// https://github.com/satoshilabs/slips/blob/master/slip-0010.md, "Test vector 1 for ed25519" and
// "Test vector 2 for ed25519": chain (hardened indexes without the offset), chain code, private key.
const VECTORS: { seed: string; chains: [number[], string, string][] }[] = [
  {
    seed: '000102030405060708090a0b0c0d0e0f',
    chains: [
      [
        [],
        '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb',
        '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7',
      ],
      [
        [0],
        '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69',
        '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3',
      ],
      [
        [0, 1],
        'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14',
        'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2',
      ],
      [
        [0, 1, 2],
        '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c',
        '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9',
      ],
      [
        [0, 1, 2, 2],
        '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc',
        '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662',
      ],
      [
        [0, 1, 2, 2, 1000000000],
        '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230',
        '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793',
      ],
    ],
  },
  {
    seed: 'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    chains: [
      [
        [],
        'ef70a74db9c3a5af931b5fe73ed8e1a53464133654fd55e7a66f8570b8e33c3b',
        '171cb88b1b3c1db25add599712e36245d75bc65a1a5c9e18d76f9f2b1eab4012',
      ],
      [
        [0],
        '0b78a3226f915c082bf118f83618a618ab6dec793752624cbeb622acb562862d',
        '1559eb2bbec5790b0c65d8693e4d0875b1747f4970ae8b650486ed7470845635',
      ],
      [
        [0, 2147483647],
        '138f0b2551bcafeca6ff2aa88ba8ed0ed8de070841f0c4ef0165df8181eaad7f',
        'ea4f5bfe8694d8bb74b7b59404632fd5968b774ed545e810de9c32a4fb4192f4',
      ],
      [
        [0, 2147483647, 1],
        '73bd9fff1cfbde33a1b846c27085f711c0fe2d66fd32e139d3ebc28e5a4a6b90',
        '3757c7577170179c7868353ada796c839135b3d30554bbb74a4b1e4a5a58505c',
      ],
      [
        [0, 2147483647, 1, 2147483646],
        '0902fe8a29f9140480a00ef244bd183e8a13288e4412d8389d140aac1794825a',
        '5837736c89570de861ebc173b1086da4f505d4adb387c6a1b1342d5e4ac9ec72',
      ],
      [
        [0, 2147483647, 1, 2147483646, 2],
        '5d70af781f3a37b829f0d060924d5e960bdc02e85423494afc0b1a41bbe196d4',
        '551d333177df541ad876a60ea71f00447931c0a9da16f227c11ea080d7391b8d',
      ],
    ],
  },
];

describe('SLIP-0010 Ed25519', () => {
  VECTORS.forEach((v, n) => {
    for (const [chain, chainCode, key] of v.chains) {
      const name = `m${chain.map((i) => `/${i}H`).join('')}`;
      it(`test vector ${n + 1}, chain ${name}`, () => {
        const node = slip10Derive(hexToBytes(v.seed), chain);
        expect(bytesToHex(node.chainCode)).toBe(chainCode);
        expect(bytesToHex(node.key)).toBe(key);
        // The typed values are also what the specification's formulas give, computed independently.
        const byHand = slip10ByHand(Buffer.from(v.seed, 'hex'), chain);
        expect(byHand.chainCode.toString('hex')).toBe(chainCode);
        expect(byHand.key.toString('hex')).toBe(key);
      });
    }
  });

  it('vector 1 public keys: the key of a node is an Ed25519 seed (keys.ts agrees with OpenSSL)', () => {
    // SLIP-0010 lists public keys with a 0x00 prefix: m and m/0H of test vector 1.
    const m = slip10Master(hexToBytes('000102030405060708090a0b0c0d0e0f'));
    expect(keyPairFromSeed(m.key).pub_key).toBe(
      'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed',
    );
    const c = slip10Child(m, 0);
    expect(keyPairFromSeed(c.key).pub_key).toBe(publicKeyByOpenSsl(Buffer.from(c.key)).toString('hex'));
  });

  it('refuses an index out of the hardened range and a seed of the wrong size', () => {
    const m = slip10Master(new Uint8Array(32).fill(7));
    expect(() => slip10Child(m, -1)).toThrow(/hardened index/);
    expect(() => slip10Child(m, 2 ** 31)).toThrow(/hardened index/);
    expect(() => slip10Child(m, 1.5)).toThrow(/hardened index/);
    expect(() => slip10Master(new Uint8Array(15))).toThrow(/16 to 64 bytes/);
    expect(() => slip10Master(new Uint8Array(65))).toThrow(/16 to 64 bytes/);
  });

  it('paths: written form, parsing, only hardened steps', () => {
    expect(accountPath(7)).toBe("m/44'/22597'/7'");
    expect(parseHardenedPath("m/44'/22597'/7'")).toEqual([44, 22597, 7]);
    expect(parseHardenedPath('m/0H/2147483647h')).toEqual([0, 2147483647]);
    expect(parseHardenedPath('m')).toEqual([]);
    expect(() => parseHardenedPath("m/44'/0")).toThrow(/not a hardened step/);
    expect(() => parseHardenedPath("44'/0'")).toThrow(/starts with "m"/);
    expect(() => parseHardenedPath("m/2147483648'")).toThrow(/too large/);
  });
});

// https://github.com/trezor/python-mnemonic/blob/master/vectors.json (the BIP-39 reference vectors),
// passphrase "TREZOR": entropy, phrase, 64-byte seed.
const BIP39_VECTORS: [string, string, string][] = [
  [
    '00000000000000000000000000000000',
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
    'c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04',
  ],
  [
    '7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f',
    'legal winner thank year wave sausage worth useful legal winner thank yellow',
    '2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c1069be3a3a5bd381ee6260e8d9739fce1f607',
  ],
  [
    '0000000000000000000000000000000000000000000000000000000000000000',
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art',
    'bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd3097170af7a4d73245cafa9c3cca8d561a7c3de6f5d4a10be8ed2a5e608d68f92fcc8',
  ],
];

describe('BIP-39 phrases', () => {
  for (const [entropy, phrase, seed] of BIP39_VECTORS) {
    it(`reference vector ${phrase.split(' ').slice(0, 2).join(' ')}… (${phrase.split(' ').length} words)`, () => {
      expect(entropyToPhrase(hexToBytes(entropy)).join(' ')).toBe(phrase);
      expect(bytesToHex(phraseToEntropy(phrase))).toBe(entropy);
      expect(bytesToHex(entropyToBip39Seed(hexToBytes(entropy), 'TREZOR'))).toBe(seed);
      const byHand = pbkdf2Sync(phrase.normalize('NFKD'), 'mnemonicTREZOR', 2048, 64, 'sha512');
      expect(byHand.toString('hex')).toBe(seed);
    });
  }

  it('reads a phrase as people paste it: case, line breaks, commas and list numbers ignored', () => {
    const [, phrase] = BIP39_VECTORS[1]!;
    const words = phrase.split(' ');
    const pasted = words.map((w, i) => `${i + 1}. ${w.toUpperCase()}`).join('\n');
    expect(phraseWords(pasted)).toEqual(words);
    expect(phraseWords(words.join(',  '))).toEqual(words);
    expect(bytesToHex(phraseToEntropy(pasted))).toBe('7f'.repeat(16));
  });

  it('names the first word not in the list, a wrong length and a bad checksum, in words', () => {
    const words = BIP39_VECTORS[1]![1].split(' ');
    const typo = [...words];
    typo[4] = 'wav';
    typo[8] = 'legall';
    const err = (() => {
      try {
        phraseToEntropy(typo);
      } catch (e) {
        return e as MnemonicError;
      }
    })();
    expect(err).toBeInstanceOf(MnemonicError);
    expect(err?.code).toBe('unknown_word');
    expect(err?.position).toBe(5);
    expect(err?.message).toBe('Word 5, "wav", is not in the BIP-39 English word list.');
    expect(() => phraseToEntropy(words.slice(0, 11))).toThrow(/12, 15, 18, 21 or 24 words; this one has 11/);
    const swapped = [...words];
    [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
    expect(() => phraseToEntropy(swapped)).toThrow(/checksum does not match/);
    expect(() => phraseToEntropy('   ')).toThrow(/Enter the words/);
  });

  it('suggests words of the list from a prefix', () => {
    expect(wordsStartingWith('aba')).toEqual(['abandon']);
    expect(wordsStartingWith('zo')).toEqual(['zone', 'zoo']);
    expect(wordsStartingWith('xyz')).toEqual([]);
    expect(wordsStartingWith('a', 3)).toHaveLength(3);
  });
});

describe("accounts of a phrase at m/44'/22597'/N'", () => {
  // A phrase known from the BIP-39 vectors, with no passphrase: what the wallet derives.
  const ENTROPY = '7f'.repeat(16);
  const PHRASE = BIP39_VECTORS[1]![1];

  it('account N computed step by step from the specifications matches the module', () => {
    // BIP-39: PBKDF2-HMAC-SHA512(password = NFKD phrase, salt = "mnemonic", 2048 rounds, 64 bytes).
    const bip39Seed = pbkdf2Sync(PHRASE.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
    const wallet = walletNodeOfEntropy(hexToBytes(ENTROPY));
    for (const n of [0, 1, 5, 1000]) {
      // SLIP-0010 along 44', 22597', N'.
      const byHand = slip10ByHand(bip39Seed, [44, 22597, n]);
      expect(bytesToHex(accountSeed(new Uint8Array(bip39Seed), n))).toBe(byHand.key.toString('hex'));
      expect(bytesToHex(accountSeedFromWalletNode(wallet, n))).toBe(byHand.key.toString('hex'));
      // The account is keys.ts's key pair of that 32-byte seed; its address is protocol.md's.
      const kp = keyPairFromSeed(accountSeedFromWalletNode(wallet, n));
      const pub = publicKeyByOpenSsl(byHand.key);
      expect(kp.pub_key).toBe(pub.toString('hex'));
      expect(kp.address).toBe(addressByHand(pub));
    }
    expect(bytesToHex(walletNode(new Uint8Array(bip39Seed)).key)).toBe(
      slip10ByHand(bip39Seed, [44, 22597]).key.toString('hex'),
    );
  });

  it('different indexes give different accounts; the same index always the same one', () => {
    const wallet = walletNodeOfEntropy(hexToBytes(ENTROPY));
    const a = new Set([0, 1, 2, 3].map((n) => bytesToHex(accountSeedFromWalletNode(wallet, n))));
    expect(a.size).toBe(4);
    expect(bytesToHex(accountSeedFromWalletNode(walletNodeOfEntropy(hexToBytes(ENTROPY)), 2))).toBe(
      bytesToHex(accountSeedFromWalletNode(wallet, 2)),
    );
  });
});

describe("the README's worked example", () => {
  it('phrase of entropy 7f x 32: accounts 0 and 1 as the README lists them, and as the specs compute them', () => {
    const entropy = hexToBytes('7f'.repeat(32));
    const phrase = entropyToPhrase(entropy).join(' ');
    expect(phrase).toBe(
      'legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth title',
    );
    const readme: [string, string][] = [
      [
        '8cb28f2758da8f2ed689bc316630cd95b1431bcb98a90f563614829dcb82b40d',
        'c652c77062d68acb4aa31dbe22e71cd06d6602b77f1fd4377331d2e1c68d9fce',
      ],
      [
        '2acd0fd62ca49bae74d0d1dc69595d58357a6bebfd2c7d31ca183700cb14d556',
        '874b068281dec19531404e51f108760e55d1f81cc96f89b98fdc5896c33eee16',
      ],
    ];
    const bip39Seed = pbkdf2Sync(phrase, 'mnemonic', 2048, 64, 'sha512');
    const wallet = walletNodeOfEntropy(entropy);
    readme.forEach(([seed, address], n) => {
      const byHand = slip10ByHand(bip39Seed, [44, 22597, n]).key;
      expect(byHand.toString('hex')).toBe(seed);
      expect(addressByHand(publicKeyByOpenSsl(byHand))).toBe(address);
      expect(keyPairFromSeed(accountSeedFromWalletNode(wallet, n)).address).toBe(address);
    });
  });
});

describe('the non-blocking BIP-39 seed (WebCrypto where there is one, as in the window)', () => {
  it('gives the reference seeds, and the same wallet node as the synchronous path', async () => {
    expect(globalThis.crypto?.subtle).toBeDefined();
    for (const [entropy, , seed] of BIP39_VECTORS) {
      expect(bytesToHex(await entropyToBip39SeedAsync(hexToBytes(entropy), 'TREZOR'))).toBe(seed);
    }
    const e = hexToBytes('7f'.repeat(32));
    const [a, b] = [walletNodeOfEntropy(e), await walletNodeOfEntropyAsync(e)];
    expect(bytesToHex(b.key)).toBe(bytesToHex(a.key));
    expect(bytesToHex(b.chainCode)).toBe(bytesToHex(a.chainCode));
  });
});
