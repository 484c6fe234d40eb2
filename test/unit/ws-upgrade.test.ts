import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { routeUpgrades } from '../../node-core/api/ws-upgrade.ts';

describe('routeUpgrades', () => {
  it('routes a server once: a second call is refused, since it would route every upgrade twice', async () => {
    const app = Fastify();
    try {
      expect(typeof routeUpgrades(app, { maxPayload: 1024 })).toBe('function');
      expect(() => routeUpgrades(app, { maxPayload: 1024 })).toThrow(/routes its upgrades already/);
      expect(app.server.listenerCount('upgrade')).toBe(1);
      // Another server is its own.
      const other = Fastify();
      expect(() => routeUpgrades(other, { maxPayload: 1024 })).not.toThrow();
      await other.close();
    } finally {
      await app.close();
    }
  });
});
