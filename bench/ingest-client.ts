import { LeanHttpConnection } from './lean-http.ts';

export interface IngestRun {
  rate: number;
  failed: number;
  firstError: string;
  /** Source addresses the requests came from (1 per client unless spread). */
  addresses: number;
}

export interface IngestOptions {
  /**
   * Spread each client over many source addresses: after this many requests it closes its
   * connection and opens another from a loopback address of its own (127.<10+client>.x.y), so a
   * node with rate limits on sees that many requests per client address at most. Unset: each
   * client keeps one connection from 127.0.0.1 throughout.
   */
  requestsPerAddress?: number;
  /**
   * Spread runs against the same node use distinct addresses: the first connection of each client
   * is its `firstAddress`th (a later run starts past an earlier one's, whose quotas it spent).
   */
  firstAddress?: number;
  /** The answer every request must get (default 201; a conflict's rival is answered 202). */
  status?: number;
}

/** The source address of a client's `n`th connection when spread (distinct for every client and n). */
function spreadAddress(client: number, n: number): string {
  return `127.${10 + client}.${Math.floor(n / 250)}.${1 + (n % 250)}`;
}

/** Each stream on its own keep-alive connection, one request at a time; every answer must be `status`. */
export async function driveIngest(
  url: string,
  streams: string[][],
  opts: IngestOptions = {},
): Promise<IngestRun> {
  const per = opts.requestsPerAddress;
  const first = opts.firstAddress ?? 0;
  const conns = streams.map((_, c) =>
    LeanHttpConnection.forUrl(url, per ? spreadAddress(c, first) : undefined),
  );
  let addresses = per ? 0 : streams.length;
  let failed = 0;
  let firstError = '';
  const start = performance.now();
  try {
    await Promise.all(
      streams.map(async (bodies, c) => {
        let sent = 0;
        for (const body of bodies) {
          if (per && sent > 0 && sent % per === 0) {
            conns[c]!.close();
            conns[c] = LeanHttpConnection.forUrl(url, spreadAddress(c, first + sent / per));
          }
          if (per && sent % per === 0) addresses++;
          sent++;
          const type = body.slice(9, body.indexOf('"', 9));
          const r = await conns[c]!.post(`/blocks/${type}`, body);
          if (r.status !== (opts.status ?? 201)) {
            failed++;
            firstError ||= `${r.status} ${r.body}`;
          }
        }
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
  const total = streams.reduce((n, s) => n + s.length, 0);
  return { rate: total / ((performance.now() - start) / 1000), failed, firstError, addresses };
}
