import { LeanHttpConnection } from './lean-http.ts';

export interface IngestRun {
  rate: number;
  failed: number;
  firstError: string;
}

/** Each stream on its own keep-alive connection, one request at a time; every answer must be 201. */
export async function driveIngest(url: string, streams: string[][]): Promise<IngestRun> {
  const conns = streams.map(() => LeanHttpConnection.forUrl(url));
  let failed = 0;
  let firstError = '';
  const start = performance.now();
  try {
    await Promise.all(
      streams.map(async (bodies, c) => {
        for (const body of bodies) {
          const type = body.slice(9, body.indexOf('"', 9));
          const r = await conns[c]!.post(`/blocks/${type}`, body);
          if (r.status !== 201) {
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
  return { rate: total / ((performance.now() - start) / 1000), failed, firstError };
}
