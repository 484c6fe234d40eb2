import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { Account, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Rate limits under ingest from many clients at once (issue #18: with limits on and the clients
 * spread over many addresses, ingest must match the figure with limits off). Each client here is a
 * real source address on loopback (127.77.0.N, no forwarding header), submitting valid blocks over
 * its own keep-alive connection, all clients concurrently: each gets its whole write burst (50)
 * and nothing more, one client's refusals never touch another's budget, and a refused block
 * changes nothing.
 */

interface Answer {
  status: number;
  body: string;
}

/** A keep-alive client whose every request leaves from `localAddress`. */
function clientFrom(url: string, localAddress: string) {
  const u = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    post(path: string, body: string): Promise<Answer> {
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: u.hostname,
            port: Number(u.port),
            path,
            method: 'POST',
            localAddress,
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

const bodyOf = (b: Block) => stringifyJson(blockToJson(b, 'node'));

describe('HTTP API: rate limits with clients spread over many addresses', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode({ rateLimit: true, verifyThreads: 2 });
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('12 concurrent clients on 12 addresses each get their whole burst of 50 blocks, all applied', async () => {
    const CLIENTS = 12;
    const ACCOUNTS = 2;
    const PER_ACCOUNT = 25; // 2 x 25 = 50 blocks per address: exactly the write burst
    const chains = Array.from({ length: CLIENTS }, () =>
      Array.from({ length: ACCOUNTS }, () => {
        const a = new Account(kit);
        const blocks: Block[] = [];
        let b = a.claimBlock(1000n * XE);
        for (let i = 0; i < PER_ACCOUNT; i++) {
          if (i > 0) b = a.sendBlock(kit.nodeAddress, 1n);
          a.advance(b);
          blocks.push(b);
        }
        return { account: a, blocks };
      }),
    );
    const answers = await Promise.all(
      chains.map(async (accounts, c) => {
        const client = clientFrom(kit.url, `127.77.0.${c + 1}`);
        const out: Answer[] = [];
        try {
          // The client's two chains interleaved, one request at a time on its connection.
          for (let i = 0; i < PER_ACCOUNT; i++)
            for (const { blocks } of accounts)
              out.push(await client.post(`/blocks/${blocks[i]!.type}`, bodyOf(blocks[i]!)));
        } finally {
          client.close();
        }
        return out;
      }),
    );
    const statuses = answers.flat().map((a) => a.status);
    expect(statuses.length).toBe(CLIENTS * ACCOUNTS * PER_ACCOUNT);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    for (const { account } of chains.flat()) {
      const head = await http(kit.url, 'GET', `/accounts/${account.address}/chain?limit=1`);
      expect(Number(head.headers.get('x-total-count'))).toBe(PER_ACCOUNT);
    }
  });

  it("one address past its budget is refused (429), changing nothing; another address's block is taken", async () => {
    const greedy = clientFrom(kit.url, '127.77.1.1');
    const other = clientFrom(kit.url, '127.77.1.2');
    try {
      // Spend the greedy address's writes on bodies the route would refuse (400) until the limiter
      // answers instead.
      let served = 0;
      const started = performance.now();
      for (;;) {
        const r = await greedy.post('/blocks/claim', '{}');
        if (r.status === 429) {
          expect(JSON.parse(r.body)).toEqual({ error: 'rate limit exceeded' });
          break;
        }
        expect(r.status).toBe(400);
        served++;
        expect(served).toBeLessThan(200);
      }
      const seconds = (performance.now() - started) / 1000;
      expect(served).toBeGreaterThanOrEqual(50);
      expect(served).toBeLessThanOrEqual(50 + Math.ceil(10 * seconds) + 1);

      // A valid block from the drained address: refused by the limiter, not applied.
      const a = new Account(kit);
      const claim = a.claimBlock(5n * XE);
      const refused = await greedy.post('/blocks/claim', bodyOf(claim));
      expect(refused.status).toBe(429);
      expect((await http(kit.url, 'GET', `/blocks/${claim.hash}`)).status).toBe(404);
      expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).status).toBe(404);

      // The same block from another address is taken: budgets are per address.
      const taken = await other.post('/blocks/claim', bodyOf(claim));
      expect(taken.status).toBe(201);
      expect((await http(kit.url, 'GET', `/blocks/${claim.hash}`)).status).toBe(200);
    } finally {
      greedy.close();
      other.close();
    }
  });
});
