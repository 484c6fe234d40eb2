/**
 * The leanest block-ingest servers this machine can run with the project's required parts (fastify,
 * node:crypto Ed25519 on worker threads, an fsync'd write before each 201), for the ingest
 * benchmark's ceiling lines. They check nothing but the signature: no ledger rules, no hashing, no
 * proof of work, no state. Whatever rate they reach bounds what any node built from these parts can
 * reach here, whatever its design. Usage: node ingest-ceiling-server.ts <mode> <dir>, where mode is
 *   verify   parse the body, verify its signature on 2 worker threads, answer 201 (nothing stored)
 *   append   and append the body to a journal, one write and fdatasync per group of requests,
 *            started together with the verification (the cheapest durable design there is)
 *   lmdb     and write the block and two small records to LMDB instead, answering once the
 *            group's commit is flushed (what the node's store has to do at the least)
 *   lmdb-inline  the same, the signatures checked on the server's own thread, as the node checks
 *            them by default on 2 cores (verify-pool.ts): the least CPU a block on such a machine
 * Prints its URL on stdout.
 */
import { closeSync, fdatasync, openSync, write } from 'node:fs';
import { join } from 'node:path';
import { fastify } from 'fastify';
import { open } from 'lmdb';
import { VerifyPool } from '../node-core/fastpath/verify-pool.ts';

const [mode = 'verify', dir = '.'] = process.argv.slice(2);
if (!['verify', 'append', 'lmdb', 'lmdb-inline'].includes(mode)) throw new Error(`unknown mode ${mode}`);
const stored = mode.replace(/-inline$/, '');

const pool = mode.endsWith('-inline')
  ? new VerifyPool({ threads: 0 })
  : new VerifyPool({ threads: 2, initialThreads: 2 });
pool.start();

/** Group commit of a journal: requests arriving while a write and sync run share the next one. */
class Journal {
  private readonly fd: number;
  private queue: { text: string; done: () => void }[] = [];
  private busy = false;
  constructor(path: string) {
    this.fd = openSync(path, 'a');
  }
  append(text: string): Promise<void> {
    return new Promise((done) => {
      this.queue.push({ text, done });
      this.flush();
    });
  }
  private flush(): void {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const group = this.queue;
    this.queue = [];
    write(this.fd, group.map((g) => g.text).join('\n') + '\n', (err) => {
      if (err) throw err;
      fdatasync(this.fd, (err2) => {
        if (err2) throw err2;
        this.busy = false;
        for (const g of group) g.done();
        this.flush();
      });
    });
  }
  close(): void {
    closeSync(this.fd);
  }
}

const journal = stored === 'append' ? new Journal(join(dir, 'journal')) : undefined;
const db = stored === 'lmdb' ? open({ path: join(dir, 'lmdb'), compression: false }) : undefined;
const ACCOUNT_RECORD = Buffer.alloc(120, 1);
const PENDING_RECORD = Buffer.alloc(60, 2);

/** Signing keys, learned from opening blocks (each account's first block declares its key). */
const keys = new Map<string, Buffer>();

interface Body {
  account: string;
  hash: string;
  signature: string;
  pub_key?: string;
  destination?: string;
}

const app = fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
  try {
    done(null, JSON.parse(body as string));
  } catch (e) {
    done(e as Error, undefined);
  }
});
app.post('/blocks/:type', async (req, reply) => {
  const raw = req.body as Body;
  if (raw.pub_key) keys.set(raw.account, Buffer.from(raw.pub_key, 'hex'));
  const key = keys.get(raw.account);
  if (!key) return reply.code(400).send({ error: 'unknown account' });
  const hash = Buffer.from(raw.hash, 'hex');
  const verified = pool.verify(Buffer.from(raw.signature, 'hex'), hash, key);
  let ok: boolean;
  if (journal) [ok] = await Promise.all([verified, journal.append(JSON.stringify(raw))]);
  else ok = await verified;
  if (!ok) return reply.code(400).send({ error: 'invalid signature' });
  if (db) {
    const account = Buffer.from(raw.account, 'hex');
    void db.put(hash, Buffer.from(JSON.stringify(raw)));
    void db.put(account, ACCOUNT_RECORD);
    await db.put(Buffer.concat([Buffer.from(raw.destination ?? raw.account, 'hex'), hash]), PENDING_RECORD);
    await db.flushed;
  }
  return reply.code(201).type('application/json').send(`{"hash":"${raw.hash}"}`);
});

await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`http://127.0.0.1:${(app.server.address() as { port: number }).port}\n`);
process.once('SIGTERM', () => {
  void (async () => {
    await app.close();
    await pool.stop();
    journal?.close();
    await db?.close();
    process.exit(0);
  })();
});
