import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { createApiServer } from '../../node-core/api/server.ts';
import type { ApiServerOptions } from '../../node-core/api/server.ts';

export interface StartedApiServer {
  app: FastifyInstance;
  port: number;
  base: string;
}

/**
 * A starter for API servers on loopback with the given defaults; every server it starts is closed
 * after each test. Call once at a test file's top level (it registers the afterEach hook).
 */
export function apiServerStarter(
  defaults: ApiServerOptions,
): (overrides?: Partial<ApiServerOptions>) => Promise<StartedApiServer> {
  let servers: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  return async (overrides = {}) => {
    const app = createApiServer({ ...defaults, ...overrides });
    servers.push(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    return { app, port, base: `http://127.0.0.1:${port}` };
  };
}
