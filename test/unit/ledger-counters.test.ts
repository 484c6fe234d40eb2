import { describe, expect, it } from 'vitest';
import { addSupply, decodeCounters, emptyCounters, encodeCounters } from '../../node-core/ledger/counters.ts';
import { LedgerError } from '../../node-core/ledger/errors.ts';
import { U64_MAX } from '../../node-core/protocol/int.ts';

/** Hardening (#15, item 1): every supply term and sum is checked arithmetic; nothing stored wraps. */
describe('ledger counters: checked supply arithmetic', () => {
  it('adds up to 2^64-1 in steps and refuses the step past it with a non-retryable overflow', () => {
    const c = emptyCounters();
    addSupply(c, [{ asset: 'XUSD', term: 'minted', amount: U64_MAX - 1n }]);
    addSupply(c, [{ asset: 'XUSD', term: 'minted', amount: 1n }]);
    expect(c.supply.XUSD.minted).toBe(U64_MAX);
    let err: unknown;
    try {
      addSupply(c, [{ asset: 'XUSD', term: 'minted', amount: 1n }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect(err).toMatchObject({ code: 'overflow', retryable: false });
    expect(c.supply.XUSD.minted).toBe(U64_MAX); // a refused change leaves the term as it was
  });

  it('bounds the total created across terms, not only each term', () => {
    const c = emptyCounters();
    addSupply(c, [{ asset: 'XE', term: 'genesis', amount: U64_MAX - 10n }]);
    addSupply(c, [{ asset: 'XE', term: 'faucet', amount: 6n }]);
    expect(() => addSupply(c, [{ asset: 'XE', term: 'minted', amount: 5n }])).toThrow(
      /XE supply would exceed/,
    );
    addSupply(c, [{ asset: 'XE', term: 'emitted', amount: 4n }]);
    // Destroyed terms are bounded by the created total through conservation, each by u64 here.
    addSupply(c, [{ asset: 'XE', term: 'burned', amount: U64_MAX }]);
    expect(() => addSupply(c, [{ asset: 'XE', term: 'burned', amount: 1n }])).toThrow(LedgerError);
    // The other asset is independent.
    addSupply(c, [{ asset: 'XUSD', term: 'minted', amount: U64_MAX }]);
  });

  it('a list of deltas is all or nothing', () => {
    const c = emptyCounters();
    addSupply(c, [{ asset: 'XUSD', term: 'minted', amount: U64_MAX }]);
    expect(() =>
      addSupply(c, [
        { asset: 'XE', term: 'emitted', amount: 5n },
        { asset: 'XUSD', term: 'minted', amount: 1n },
      ]),
    ).toThrow(LedgerError);
    expect(c.supply.XE.emitted).toBe(0n);
  });

  it('undoing never goes below zero', () => {
    const c = emptyCounters();
    addSupply(c, [{ asset: 'XE', term: 'faucet', amount: 5n }]);
    addSupply(c, [{ asset: 'XE', term: 'faucet', amount: -5n }]);
    expect(c.supply.XE.faucet).toBe(0n);
    expect(() => addSupply(c, [{ asset: 'XE', term: 'faucet', amount: -1n }])).toThrow(RangeError);
  });

  it('round-trips every term and refuses to encode a value that would wrap', () => {
    const c = emptyCounters();
    c.blocks = 7;
    c.accounts = 3;
    c.next_seq = 9;
    c.supply.XE.genesis = U64_MAX;
    c.supply.XUSD.escrow_burned = 12345n;
    expect(decodeCounters(encodeCounters(c))).toEqual(c);
    for (const bad of [U64_MAX + 1n, -1n]) {
      const d = emptyCounters();
      d.supply.XUSD.minted = bad;
      expect(() => encodeCounters(d)).toThrow(/XUSD.minted out of range/);
    }
    const e = emptyCounters();
    e.blocks = 2 ** 32;
    expect(() => encodeCounters(e)).toThrow(/blocks out of range/);
  });

  it("carries the account index's flag, which a record of an older format lacks", () => {
    const c = emptyCounters();
    expect(c.indexed).toBe(true); // an empty ledger's empty index is complete
    c.accounts = 5;
    expect(decodeCounters(encodeCounters(c)).indexed).toBe(true);
    expect(decodeCounters(encodeCounters({ ...c, indexed: false })).indexed).toBe(false);
    // Written by a version without the index (one byte shorter): everything else read as it was.
    const older = encodeCounters(c).subarray(0, encodeCounters(c).length - 1);
    expect(decodeCounters(older)).toEqual({ ...c, indexed: false });
  });
});
