import { describe, expect, it, vi } from 'vitest';
import {
  decodeRegistration,
  Directory,
  DIRECTORY_TTL_NS,
  encodeRegistration,
  MAX_FUTURE_NS,
} from '../../node-core/net/directory.ts';
import { attestationSubject } from '../../node-core/leasing/attestation-subject.ts';
import { repReadiness } from '../../node-core/net/rep-readiness.ts';
import { benchmarkEndSubject } from '../../node-core/protocol/certificate.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { registrationMessage, signRegistration } from '../../node-core/protocol/registration.ts';

/** Directory registrations (contract "Directory", D15) and the readiness attribution built on them. */
const seed = new Uint8Array(32).fill(9);
const key = keyPairFromSeed(seed);
const PEER = '12D3KooWLwh6bjD9ZBCV3Zzta5SLhCyqrtMuFL5Yk7Lv9K4Gx6JQ';
const T0 = 1_790_000_000_000_000_000n;

describe('registrations', () => {
  it('sign the 32 key bytes followed by the timestamp as i64 big-endian', () => {
    const m = registrationMessage({ account: key.pub_key, timestamp: 0x0102030405060708n });
    expect(m.length).toBe(40);
    expect(Buffer.from(m.subarray(0, 32)).toString('hex')).toBe(key.pub_key);
    expect([...m.subarray(32)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('travel as raw JSON and decode strictly', () => {
    const r = signRegistration({ account: key.pub_key, node_peer: PEER, timestamp: T0 }, seed);
    expect(decodeRegistration(encodeRegistration(r))).toEqual(r);
    const json = (extra: Record<string, unknown>) =>
      new TextEncoder().encode(JSON.stringify({ ...r, timestamp: T0.toString(), ...extra }));
    expect(decodeRegistration(json({}))).toEqual(r);
    expect(decodeRegistration(json({ extra: 1 }))).toBeUndefined();
    expect(decodeRegistration(json({ pub_key: 'ab'.repeat(32) }))).toBeUndefined();
    expect(decodeRegistration(json({ node_peer: 'not a peer id!' }))).toBeUndefined();
    expect(decodeRegistration(json({ signature: 'zz' }))).toBeUndefined();
  });
});

describe('Directory', () => {
  const dir = (now = T0) => new Directory({ now: () => now });
  const reg = (timestamp: bigint, node_peer = PEER) =>
    signRegistration({ account: key.pub_key, node_peer, timestamp }, seed);

  it('stores a verified registration under the key and its address; the newest wins', () => {
    const d = dir();
    expect(d.offer(reg(T0 - 10n))).toBe('accept');
    expect(d.lookup(key.address)?.node_peer).toBe(PEER);
    expect(d.lookup(key.pub_key)?.timestamp).toBe(T0 - 10n);
    const other = '12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo';
    expect(d.offer(reg(T0 - 10n, other))).toBe('ignore'); // not newer
    expect(d.offer(reg(T0 - 20n, other))).toBe('ignore');
    expect(d.offer(reg(T0 - 5n, other))).toBe('accept');
    expect(d.lookup(key.address)?.node_peer).toBe(other);
    expect(d.list()).toHaveLength(1);
  });

  it('rejects a forged signature, ignores expired and far-future registrations (H-08)', () => {
    const d = dir();
    expect(d.offer({ ...reg(T0), signature: 'ab'.repeat(64) })).toBe('reject');
    expect(
      d.offer({ ...reg(T0), node_peer: PEER, account: keyPairFromSeed(new Uint8Array(32)).pub_key }),
    ).toBe('reject');
    expect(d.offer(reg(T0 - DIRECTORY_TTL_NS))).toBe('ignore');
    expect(d.offer(reg(T0 + MAX_FUTURE_NS + 1n))).toBe('ignore');
    expect(d.list()).toEqual([]);
  });

  it('says what became of a registration posted over HTTP, the signature checked before staleness', () => {
    const d = dir();
    expect(d.register(reg(T0 + MAX_FUTURE_NS + 1n))).toBe('future');
    expect(d.register(reg(T0 - DIRECTORY_TTL_NS))).toBe('expired');
    expect(d.register(reg(T0 - 10n))).toBe('stored');
    expect(d.register(reg(T0 - 10n))).toBe('stale');
    // A forged copy of an older registration: gossip ignores it unverified, HTTP says it is forged.
    const forged = { ...reg(T0 - 20n), signature: 'ab'.repeat(64) };
    expect(d.offer(forged)).toBe('ignore');
    expect(d.register(forged)).toBe('bad_signature');
    expect(d.lookup(key.address)?.timestamp).toBe(T0 - 10n);
  });

  it('refuses a new account when full of live entries, but still takes a newer one for a held account', () => {
    const d = new Directory({ now: () => T0, maxEntries: 1 });
    expect(d.register(reg(T0 - 10n))).toBe('stored');
    const otherSeed = new Uint8Array(32).fill(3);
    const other = signRegistration(
      { account: keyPairFromSeed(otherSeed).pub_key, node_peer: PEER, timestamp: T0 },
      otherSeed,
    );
    expect(d.register(other)).toBe('full');
    expect(d.offer(other)).toBe('ignore');
    expect(d.register(reg(T0 - 5n))).toBe('stored');
    expect(d.list().map((e) => e.account)).toEqual([key.pub_key]);
  });

  it('refuses a flood to a directory full of live entries without walking them until one expires', () => {
    let now = T0;
    const d = new Directory({ now: () => now, maxEntries: 20 });
    const regOf = (i: number, timestamp: bigint) => {
      const seed = new Uint8Array(32).fill(0).map((_, j) => (j === 0 ? 7 : j === 1 ? i & 0xff : i >> 8));
      return signRegistration({ account: keyPairFromSeed(seed).pub_key, node_peer: PEER, timestamp }, seed);
    };
    for (let i = 0; i < 20; i++) expect(d.register(regOf(i, T0 - 100n + BigInt(i)))).toBe('stored');
    for (let i = 20; i < 70; i++) expect(d.offer(regOf(i, T0))).toBe('ignore');
    expect(d.prunes).toBe(0);
    // The oldest entry expires: the next one in takes its place, after one walk.
    now = T0 - 100n + DIRECTORY_TTL_NS;
    expect(d.register(regOf(70, now))).toBe('stored');
    expect(d.prunes).toBe(1);
    expect(d.lookup(regOf(0, 0n).account)).toBeUndefined();
    // Full again, nothing else expired yet: refused without another walk.
    for (let i = 71; i < 90; i++) expect(d.offer(regOf(i, now))).toBe('ignore');
    expect(d.prunes).toBe(1);
    expect(d.list()).toHaveLength(20);
  });

  it('hides and prunes entries 30 minutes after their timestamp', () => {
    let now = T0;
    const d = new Directory({ now: () => now });
    expect(d.offer(reg(T0))).toBe('accept');
    now = T0 + DIRECTORY_TTL_NS;
    expect(d.lookup(key.address)).toBeUndefined();
    expect(d.list()).toEqual([]);
    d.prune();
    now = T0;
    expect(d.lookup(key.address)).toBeUndefined(); // gone, not just hidden
  });
});

describe('Directory pages and address look-ups (sorted once, kept in step)', () => {
  const hexOf = (n: number) => n.toString(16).padStart(64, '0');
  const entry = (account: string, timestamp: bigint) => ({
    account,
    node_peer: PEER,
    timestamp,
    signature: 'ab'.repeat(64),
  });

  it('pages live entries by account as they come and go, and finds addresses by prefix', () => {
    let now = T0;
    const d = new Directory({ now: () => now, verify: () => true });
    // Accounts in a shuffled order, one a second older than the next.
    const accounts = [7, 3, 9, 1, 5].map(hexOf);
    accounts.forEach((a, i) => expect(d.register(entry(a, T0 - BigInt(i) * 1_000_000_000n))).toBe('stored'));
    const sortedAccounts = [...accounts].sort();
    expect(d.page(0, 10).map((e) => e.account)).toEqual(sortedAccounts);
    expect(d.page(1, 2).map((e) => e.account)).toEqual(sortedAccounts.slice(1, 3));
    // Built now; later accounts go into place, a refresh of one held changes nothing.
    d.register(entry(hexOf(4), T0));
    d.register(entry(hexOf(7), T0 + 1n));
    expect(d.page(0, 10).map((e) => e.account)).toEqual([1, 3, 4, 5, 7, 9].map(hexOf));
    expect(d.page(4, 10).map((e) => [e.account, e.timestamp])).toEqual([
      [hexOf(7), T0 + 1n],
      [hexOf(9), T0 - 2_000_000_000n],
    ]);
    // An entry past the TTL leaves the pages at once, and the index at the next prune.
    now = T0 + DIRECTORY_TTL_NS - 2_500_000_000n; // 1 (3 s older than T0) and 5 (4 s) expired
    expect(d.page(0, 10).map((e) => e.account)).toEqual([3, 4, 7, 9].map(hexOf));
    expect(d.list().map((e) => e.account)).toEqual([3, 4, 7, 9].map(hexOf));
    // One waiting to be merged in while the prune removes two.
    d.register(entry(hexOf(6), now));
    d.prune();
    d.register(entry(hexOf(2), now));
    expect(d.page(0, 10).map((e) => e.account)).toEqual([2, 3, 4, 6, 7, 9].map(hexOf));

    // Addresses: a whole one finds itself, a prefix the live ones that start with it, in order.
    const addresses = d.list().map((e) => e.address);
    const first = [...addresses].sort()[0]!;
    expect([...d.addressesFrom(first)]).toEqual([first]);
    expect([...d.addressesFrom('')]).toEqual([...addresses].sort());
    expect([...d.addressesFrom(first.slice(0, 32))]).toEqual([first]);
    expect([...d.addressesFrom('g')]).toEqual([]);
  });

  it("an attestation's provider subject is found by its address's prefix among 20,000", () => {
    const d = new Directory({ now: () => T0, verify: () => true });
    for (let i = 0; i < 20_000; i++) d.register(entry(hexOf(i * 7919), T0 - BigInt(i)));
    const view = { leases: { get: () => undefined }, directory: d, ownAddress: 'f'.repeat(64) };
    const provider = d.lookup(hexOf(7919 * 123))!.address;
    const end = benchmarkEndSubject(provider);
    expect(attestationSubject(provider, view)).toBe(provider);
    expect(attestationSubject(end, view)).toBe(end);
    // The same first 32 characters, another ending: no registered provider's.
    const other = `${end.slice(0, 48)}${end.slice(48) === '0'.repeat(16) ? '1'.repeat(16) : '0'.repeat(16)}`;
    expect(() => attestationSubject(other, view)).toThrow('lease not found');
    const values = vi.spyOn((d as unknown as { entries: Map<string, unknown> }).entries, 'values');
    expect(() => attestationSubject('e'.repeat(64), view)).toThrow('lease not found');
    expect(values).not.toHaveBeenCalled();
  });

  it('a page among 20,000 entries reads the page, not the directory', () => {
    const d = new Directory({ now: () => T0, verify: () => true });
    for (let i = 0; i < 20_000; i++) d.register(entry(hexOf(i * 7919), T0 - BigInt(i)));
    expect(d.page(0, 1)).toHaveLength(1); // builds the index once
    let reads = 0;
    const entries = (d as unknown as { entries: Map<string, unknown> }).entries;
    const get = entries.get.bind(entries);
    entries.get = (k: string) => (reads++, get(k));
    const values = vi.spyOn(entries, 'values');
    const page = d.page(0, 100);
    expect(page).toHaveLength(100);
    expect(page.map((e) => e.account)).toEqual([...page.map((e) => e.account)].sort());
    expect(values).not.toHaveBeenCalled();
    expect(reads).toBe(100);
  });
});

describe('repReadiness', () => {
  it("attributes each representative's weight to the version and features of the node serving it", () => {
    const caps = new Map([
      ['a', { version: '1.0.0', features: ['noop', 'other'] }],
      ['b', { version: '1.1.0', features: [] }],
    ]);
    const r = repReadiness({
      weights: new Map([
        ['a', 50n],
        ['b', 30n],
        ['c', 20n],
      ]),
      total: 100n,
      features: ['noop'],
      resolve: (rep) => caps.get(rep),
    });
    expect(r).toEqual({
      total_weight: '100',
      feature_weight: { noop: '50' },
      feature_ready_milli: { noop: 500 },
      version_weight: [
        { version: '1.0.0', weight: '50' },
        { version: '1.1.0', weight: '30' },
      ],
      unknown_weight: '20',
      resolved_reps: 2,
      total_reps: 3,
    });
  });
});
