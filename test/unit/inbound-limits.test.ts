import { describe, expect, it } from 'vitest';
import { NetError } from '../../node-core/net/errors.ts';
import { InboundLimiter, sourceOf } from '../../node-core/net/inbound-limits.ts';

/** The inbound connection caps (N-09) on their own; the libp2p wiring is tested with real sockets. */
describe('InboundLimiter', () => {
  it('refuses the connection over the per-IP cap, and admits again once one closes', () => {
    const l = new InboundLimiter({ perIp: 2, total: 10 });
    const r1 = l.admit('10.0.0.1');
    const r2 = l.admit('10.0.0.1');
    expect(r1 && r2).toBeTruthy();
    expect(l.admit('10.0.0.1')).toBeUndefined();
    expect(l.admit('10.0.0.2')).toBeDefined(); // another address has its own cap
    expect(l.refused).toBe(1);
    r1!();
    r1!(); // releasing twice counts once
    expect(l.count).toBe(2);
    expect(l.admit('10.0.0.1')).toBeDefined();
    expect(l.admit('10.0.0.1')).toBeUndefined();
  });

  it('refuses any connection over the overall inbound cap', () => {
    const l = new InboundLimiter({ perIp: 8, total: 3 });
    const releases = ['10.0.0.1', '10.0.0.2', undefined].map((ip) => l.admit(ip));
    expect(releases.every(Boolean)).toBe(true);
    expect(l.admit('10.0.0.9')).toBeUndefined();
    expect(l.admit(undefined)).toBeUndefined();
    releases[2]!();
    expect(l.admit('10.0.0.9')).toBeDefined();
    expect(l.refused).toBe(2);
  });

  it('counts IPv6 by /56 and IPv4-mapped addresses as IPv4', () => {
    expect(sourceOf('2001:db8:aa:bb01::1')).toBe(sourceOf('2001:db8:aa:bbff:1:2:3:4'));
    expect(sourceOf('2001:db8:aa:bb01::1')).not.toBe(sourceOf('2001:db8:aa:cc01::1'));
    expect(sourceOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(sourceOf('::1')).toBe('00000000000000/56');
    const l = new InboundLimiter({ perIp: 1, total: 10 });
    expect(l.admit('2001:db8:aa:bb01::1')).toBeDefined();
    expect(l.admit('2001:db8:aa:bb02::9')).toBeUndefined();
  });

  it('refuses caps below 1 with a typed error', () => {
    expect(() => new InboundLimiter({ perIp: 0 })).toThrow(NetError);
    expect(() => new InboundLimiter({ total: 0 })).toThrow(
      expect.objectContaining({
        code: 'ERR_BAD_OPTION',
        message: 'inbound connection caps must be at least 1',
      }),
    );
  });
});
