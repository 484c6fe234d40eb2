import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { yieldToLoop } from '../../node-core/net/preload.ts';

/** Holds the thread for `ms`, as loading a part of libp2p does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/**
 * Between two parts of the network's modules (net/preload.ts), a request that came in while a part
 * loaded is answered, not left for the next parts: accepting its connection and reading it take a
 * turn of the event loop each. Real sockets on loopback; the client shares the thread, so its
 * connection and bytes are there by the first turn after the part, whatever the machine's load.
 */
describe('the network preload between two parts', () => {
  it('answers a request that came in during a part before the next part', async () => {
    const at = { part: 0, connected: -1, answered: -1 };
    const server = createServer((_req, res) => {
      at.answered = at.part;
      res.end('ok');
    });
    server.on('connection', () => {
      if (at.connected < 0) at.connected = at.part;
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    let answer = '';
    const client = connect(port, '127.0.0.1');
    client.on('data', (d: Buffer) => (answer += d.toString()));
    client.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    try {
      // Parts of 40 ms, a yield after each, until the request is answered.
      for (; at.answered < 0 && at.part < 50; at.part++) {
        busy(40);
        await yieldToLoop();
      }
      expect(at.connected).toBe(0);
      expect(at.answered).toBe(0);
      await new Promise((r) => client.once('close', r));
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
    } finally {
      client.destroy();
      server.close();
    }
  });
});
