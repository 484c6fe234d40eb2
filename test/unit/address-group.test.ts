import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../node-core/address-group.ts';

describe('addressGroup', () => {
  it('keeps IPv4 addresses, and IPv4-mapped IPv6 in either spelling, as the IPv4 address', () => {
    expect(addressGroup('192.0.2.7', 64)).toBe('192.0.2.7');
    expect(addressGroup('::ffff:192.0.2.7', 64)).toBe('192.0.2.7');
    expect(addressGroup('::FFFF:c000:207', 56)).toBe('192.0.2.7');
  });

  it('cuts IPv6 addresses to the prefix, whatever their spelling', () => {
    expect(addressGroup('2001:db8:aa:bb01::1', 64)).toBe('20010db800aabb01/64');
    expect(addressGroup('2001:0DB8:00AA:BB01:1:2:3:4', 64)).toBe('20010db800aabb01/64');
    expect(addressGroup('2001:db8:aa:bb01::1', 56)).toBe('20010db800aabb/56');
    expect(addressGroup('2001:db8:aa:bbff::1', 60)).toBe('20010db800aabbf/60');
    expect(addressGroup('2001:db8:aa:bbff::1', 62)).toBe('20010db800aabbfc/62');
    expect(addressGroup('::', 64)).toBe('0000000000000000/64');
    expect(addressGroup('fe80::1%eth0', 64)).toBe('fe80000000000000/64');
  });

  it('leaves anything that is not an IP address as it is', () => {
    expect(addressGroup('unknown', 64)).toBe('unknown');
    expect(addressGroup('', 64)).toBe('');
  });
});
