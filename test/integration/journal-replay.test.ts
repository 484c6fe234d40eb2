import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFrame, encodeGroup } from '../../node-core/ledger/block-journal.ts';
import { decodeBlockRecord, encodeBlockRecord } from '../../node-core/ledger/codec.ts';
import { journalFileName, journalFiles, readJournal } from '../../node-core/ledger/journal-file.ts';
import { readCheckpoint } from '../../node-core/store/checkpoint.ts';
import type { SignedBlock } from '../../node-core/ledger/rules/index.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { Account, http, type Kit, submit } from '../helpers/ledger-kit.ts';
import { type CliNode, kill9, quickNodeArgs, spawnCliNode } from '../helpers/cli-node.ts';
import { tempDir, waitFor } from '../helpers/node.ts';

/**
 * The ledger's write-ahead journal (ledger/block-journal.ts) with real node processes and real LMDB:
 * blocks acknowledged while LMDB had not flushed them are replayed from the journal after a kill -9.
 * A kill -9 of the process alone loses nothing LMDB committed (the page cache keeps it), so LMDB
 * losing its unflushed tail, as on a power cut, is made by putting back a copy of the store taken
 * before those blocks. A torn last frame (a crash mid-append) carries a block that must not appear.
 */

const dataDir = tempDir('journal-replay-');
const batchDir = tempDir('journal-batch-');
const children: ChildProcess[] = [];

interface Instance extends CliNode {
  /** Info-level and above log records of this instance. */
  logs: Record<string, JsonValue>[];
}

/**
 * A node on the test's data directory. `batch`: its write batches (store/write-batch.ts) as
 * LEDGER_NODE_BATCH_MS and LEDGER_NODE_BATCH_IDLE_MS; 'off' commits each group to LMDB before it
 * is answered, so that LMDB holds every acknowledged block at a kill; 'never' keeps a batch open
 * until something waits for a checkpoint.
 */
async function startNode(
  journal: boolean,
  batch: 'default' | 'off' | 'never' = 'default',
  dir = dataDir,
): Promise<Instance> {
  const logs: Record<string, JsonValue>[] = [];
  const batchEnv =
    batch === 'off'
      ? { LEDGER_NODE_BATCH_MS: '0' }
      : batch === 'never'
        ? { LEDGER_NODE_BATCH_MS: '3600000', LEDGER_NODE_BATCH_IDLE_MS: '3600000' }
        : {};
  const node = await spawnCliNode([...quickNodeArgs(dir), '--log-level', 'info'], {
    env: { LEDGER_NODE_JOURNAL: journal ? '1' : '0', ...batchEnv },
    onStderrLine: (line) => {
      try {
        logs.push(JSON.parse(line) as Record<string, JsonValue>);
      } catch {
        // not a log record
      }
    },
  });
  children.push(node.child);
  return { ...node, logs };
}

async function kitAt(url: string): Promise<Kit> {
  const info = (await http(url, 'GET', '/node')).body as Record<string, JsonValue>;
  return {
    url,
    networkId: info.network_id as string,
    difficulty: BigInt(`0x${info.pow_difficulty as string}`),
    nodeAddress: info.address as string,
  };
}

const blockCount = async (url: string) =>
  ((await http(url, 'GET', '/node')).body as Record<string, JsonValue>).block_count as number;

const replayed = (inst: Instance) =>
  inst.logs.find((l) => l.msg === 'journal replayed')?.journal as Record<string, JsonValue> | undefined;

/** Resolves once the store's last checkpoint holds the meta pages its data file has now. */
async function checkpointed(dataFile: string): Promise<void> {
  await waitFor(
    () => {
      const ckpt = readCheckpoint(dataFile);
      const now = ckpt && readFileSync(dataFile).subarray(0, 2 * ckpt.pageSize);
      return ckpt !== undefined && Buffer.compare(now!, ckpt.metas) === 0;
    },
    10_000,
    'a checkpoint covering the last commit',
  );
}

/**
 * Resolves once the node's start-up writes are on disk: its own certificate's benchmark (run again
 * by a node killed before it finished) stores the certificate in a write that waits for LMDB's
 * flush, and block groups written meanwhile are made durable by that flush, not the journal.
 */
async function startupWritesDone(inst: Instance): Promise<void> {
  await waitFor(
    async () => {
      if (inst.logs.some((l) => l.msg === 'performance certificate made')) return true;
      const info = (await http(inst.url, 'GET', '/node')).body as { benchmark?: { state?: string } };
      const ran = inst.logs.some((l) => l.msg === 'performance benchmark: 0%');
      // Failed (retried later, after this test), or done by an earlier run: nothing written now.
      return info.benchmark?.state === 'failed' || (info.benchmark?.state === 'done' && !ran);
    },
    60_000,
    "the node's start-up writes",
  );
}

/** The accounts build for the restarted node (its API port is new each start). */
function repoint(accounts: Account[], kit: Kit): void {
  for (const a of accounts) Object.assign(a, { kit });
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(batchDir, { recursive: true, force: true });
});

describe('write-ahead journal', () => {
  it('replays every acknowledged block LMDB lost after kill -9, once, and drops a torn last frame', async () => {
    // 1. Blocks LMDB holds (each group committed before its answer); the node is killed and its
    // store copied as it was.
    let inst = await startNode(true, 'off');
    let kit = await kitAt(inst.url);
    const accounts = [0, 1, 2, 3].map(() => new Account(kit));
    const before: Block[] = [];
    for (const a of accounts) before.push(await a.claim(5n));
    await kill9(inst);
    const storeDir = join(dataDir, 'ledger.lmdb');
    const copy = join(dataDir, 'store-copy');
    cpSync(storeDir, copy, { recursive: true });
    const countBefore = 1 + before.length; // the genesis block and the claims

    // 2. More blocks, acknowledged (201) with the journal synced, several requests in flight at once.
    inst = await startNode(true);
    kit = await kitAt(inst.url);
    await startupWritesDone(inst);
    repoint(accounts, kit);
    const after: Block[] = [];
    await Promise.all(
      accounts.map(async (a) => {
        for (let i = 0; i < 6; i++) after.push(await a.claim(1n));
      }),
    );
    expect(await blockCount(inst.url)).toBe(countBefore + after.length);
    await kill9(inst);

    // 3. LMDB loses what it had not flushed: the store as it was before step 2.
    rmSync(storeDir, { recursive: true, force: true });
    cpSync(copy, storeDir, { recursive: true });
    const journalDir = join(dataDir, 'journal');
    const files = journalFiles(journalDir);
    expect(files.length).toBeGreaterThan(0);
    const read = readJournal(journalDir);
    expect(read.torn).toBeUndefined();
    // Every block of step 2 went through the journal (a group written while another write waits for
    // LMDB's flush is made durable by that flush instead, and a lost copy of LMDB would not be
    // what a crash leaves of it).
    const journaled = new Set(
      read.frames.flatMap((f) => {
        const d = decodeFrame(f.payload);
        return 'abort' in d
          ? []
          : d.entries.flatMap((e) => (e.kind === 'block' ? [decodeBlockRecord(e.record).block.hash] : []));
      }),
    );
    expect(after.filter((b) => !journaled.has(b.hash!))).toEqual([]);

    // A crash mid-append: a frame whose last bytes never reached the disk, carrying a valid block
    // that was never acknowledged.
    const a0 = accounts[0]!;
    const unacked = a0.claimBlock(1n);
    const record = encodeBlockRecord({ block: unacked as SignedBlock, height: 1 + 6 + 1 });
    const payload = encodeGroup(1_000_000, [{ kind: 'block', record, finalized: false }]);
    const last = read.frames.at(-1)!;
    const end = last.offset + 8 + last.payload.length;
    const frame = Buffer.alloc(8 + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    frame.writeUInt32LE(crc32(payload), 4);
    frame.set(payload, 8);
    const fd = openSync(journalFileName(journalDir, last.file), 'r+');
    writeSync(fd, frame, 0, frame.length >> 1, end); // its second half stays zeros
    closeSync(fd);
    expect(readJournal(journalDir).torn).toEqual({ file: last.file, offset: end });

    // 4. The restart replays the acknowledged blocks (they were not in LMDB), not the torn one.
    inst = await startNode(true, 'off');
    const r = replayed(inst);
    expect(r, 'no journal replay logged').toBeDefined();
    // On a failure, what the replay did and what the node logged above info say why.
    const why = JSON.stringify({ replay: r, logs: inst.logs.filter((l) => (l.level as number) > 30) });
    expect(r!.applied, why).toBe(after.length);
    expect(r!.refused).toEqual([]);
    expect(r!.torn).toBeDefined();
    for (const b of [...before, ...after])
      expect((await http(inst.url, 'GET', `/blocks/${b.hash}`)).status, b.hash).toBe(200);
    expect((await http(inst.url, 'GET', `/blocks/${unacked.hash}`)).status).toBe(404);
    expect(await blockCount(inst.url)).toBe(countBefore + after.length);
    const rows = (await http(inst.url, 'GET', '/accounts?limit=1000')).body as Record<string, JsonValue>[];
    for (const a of accounts) {
      const row = rows.find((x) => x.address === a.address);
      expect(row?.block_count, a.address).toBe(7);
      expect(row?.frontier).toBe(a.frontier);
      expect((await http(inst.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '11' });
    }
    // The replayed files are gone once LMDB holds their blocks; the journal goes on in a new one.
    expect(files.some((f) => existsSync(journalFileName(journalDir, f)))).toBe(false);

    // 5. Another kill -9 and start: nothing is applied twice, and the chain goes on.
    repoint(accounts, await kitAt(inst.url));
    const more = await accounts[1]!.claim(2n);
    // Once a checkpoint covers it (store/checkpoint.ts), LMDB keeps it through a kill -9 and the
    // restart's replay finds it there.
    await checkpointed(storeDir);
    await kill9(inst);
    inst = await startNode(false);
    expect(replayed(inst)?.applied ?? 0).toBe(0);
    expect(await blockCount(inst.url)).toBe(countBefore + after.length + 1);
    expect((await http(inst.url, 'GET', `/blocks/${more.hash}`)).status).toBe(200);
    // The same block again is a duplicate: answered as accepted, nothing added.
    expect((await submit({ url: inst.url }, more)).status).toBe(201);
    expect(await blockCount(inst.url)).toBe(countBefore + after.length + 1);
    await kill9(inst);
  }, 120_000);

  it('a kill -9 while a write batch is open: LMDB never committed its groups, the journal replays every acknowledged block once', async () => {
    // A batch that ends only when something waits for a checkpoint (start-up writes do; blocks not).
    let inst = await startNode(true, 'never', batchDir);
    await startupWritesDone(inst);
    const kit = await kitAt(inst.url);
    const countBefore = await blockCount(inst.url);
    const accounts = [0, 1, 2].map(() => new Account(kit));
    const acked: Block[] = [];
    await Promise.all(
      accounts.map(async (a) => {
        for (let i = 0; i < 4; i++) acked.push(await a.claim(3n));
      }),
    );
    // Readers on the node see the batch's blocks before LMDB commits them.
    expect(await blockCount(inst.url)).toBe(countBefore + acked.length);
    for (const b of acked) expect((await http(inst.url, 'GET', `/blocks/${b.hash}`)).status).toBe(200);
    await kill9(inst);

    // Every acknowledged block comes back from the journal: LMDB had none of them.
    inst = await startNode(true, 'off', batchDir);
    const r = replayed(inst);
    expect(r, 'no journal replay logged').toBeDefined();
    expect(r!.applied, JSON.stringify(r)).toBe(acked.length);
    expect(r!.refused).toEqual([]);
    expect(await blockCount(inst.url)).toBe(countBefore + acked.length);
    for (const b of acked) expect((await http(inst.url, 'GET', `/blocks/${b.hash}`)).status).toBe(200);
    for (const a of accounts)
      expect((await http(inst.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '12' });

    // The replay is durable in LMDB: the next start applies nothing again.
    await checkpointed(join(batchDir, 'ledger.lmdb'));
    await kill9(inst);
    inst = await startNode(true, 'default', batchDir);
    expect(replayed(inst)?.applied ?? 0).toBe(0);
    expect(await blockCount(inst.url)).toBe(countBefore + acked.length);
    await kill9(inst);
  }, 120_000);
});
