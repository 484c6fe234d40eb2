import { Agent, request } from 'node:http';

/**
 * A small closed-loop HTTP load generator: `concurrency` connections with keep-alive, each sending
 * its next request as soon as the previous answer arrived. Used for every HTTP figure, so ratios
 * compare servers under the same client.
 */
export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  statuses: Record<number, number>;
}

/**
 * A GET, sent again on a new connection when it went out on a kept-alive one the server had just
 * closed (its 5 s idle timeout): the client learns of the close only when its thread gets to it,
 * and building a workload holds the thread for seconds between two polls (the pool may hold
 * several such connections: a retry on the next one failed alike).
 */
export function httpGet(
  url: string,
  agent: Agent | false,
  retry = true,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (retry && req.reusedSocket && e.code === 'ECONNRESET') resolve(httpGet(url, false, false));
      else reject(e);
    });
    req.end();
  });
}

export function httpPost(url: string, body: string, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (out += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** GETs `urls()` in a closed loop for `seconds` after a short warm-up. */
export async function loadGet(
  nextUrl: () => string,
  seconds: number,
  concurrency: number,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<number, number> = {};
  const run = async (until: number, count: boolean) => {
    let n = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          const r = await httpGet(nextUrl(), agent);
          if (count) {
            n++;
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          }
        }
      }),
    );
    return n;
  };
  await run(performance.now() + 500, false);
  const start = performance.now();
  const n = await run(start + seconds * 1000, true);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  return { requests: n, seconds: elapsed, perSecond: n / elapsed, statuses };
}
