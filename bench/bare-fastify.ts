/**
 * The baseline for read benchmarks: a bare fastify server with one route shaped like the node's
 * balance route (a path parameter, a small JSON answer) and nothing else. Prints its URL.
 */
import { fastify } from 'fastify';

const app = fastify({ logger: false });
app.get('/accounts/:address/balance', async () => ({ XE: '1000000000' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address() as { port: number };
process.stdout.write(`http://127.0.0.1:${port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
