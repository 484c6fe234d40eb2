import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { Account, http, kitOf, submit } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * A node whose write-ahead journal (ledger/journal-file.ts) fails a write: an I/O error, made here
 * by replacing node:fs's writev (the journal is its only user in the node) in this process. The
 * blocks of the groups it held are answered once LMDB has flushed them, later blocks the same way,
 * the node logs the failure once, and every acknowledged block is there after a restart.
 */

let t: TestNode | undefined;
const realWritev = fs.writev;
afterEach(async () => {
  fs.writev = realWritev;
  syncBuiltinESMExports();
  await t?.stop();
  t = undefined;
});

describe('a failed journal write', () => {
  it('answers blocks after LMDB has flushed them instead, logs it once, and loses nothing', async () => {
    const dataDir = tempDir('journal-failure-');
    t = await startTestNode({ dataDir, journal: true });
    const kit = await kitOf(t);
    const accounts = [0, 1, 2].map(() => new Account(kit));
    const acknowledged: Block[] = [];
    for (const a of accounts) acknowledged.push(await a.claim(10n));

    let failures = 0;
    fs.writev = ((_fd: number, _buffers: unknown, _position: number, cb: (e: Error) => void) => {
      failures += 1;
      setImmediate(() => cb(Object.assign(new Error('EIO: i/o error, writev'), { code: 'EIO' })));
    }) as unknown as typeof fs.writev;
    syncBuiltinESMExports();

    // Several requests in flight: the groups the journal held when it failed, and the ones after.
    const results = await Promise.all(
      accounts.map(async (a) => {
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const block = a.claimBlock(1n);
          const r = await submit(kit, block);
          statuses.push(r.status);
          if (r.status === 201) {
            a.advance(block);
            acknowledged.push(block);
          }
        }
        return statuses;
      }),
    );
    expect(results.flat()).toEqual(Array(12).fill(201));
    // The journal wrote once and failed; no later group went to it.
    expect(failures).toBe(1);
    const auth = { authorization: `Bearer ${t.node.adminToken}` };
    const log = (await http(kit.url, 'GET', '/node/log?level=error&q=journal', undefined, auth)).body as {
      lines: { msg: string; fields: { err?: { code?: string } } }[];
    };
    expect(log.lines.map((l) => l.msg)).toEqual([
      'the write-ahead journal failed: blocks are answered once LMDB has flushed them, until a restart',
    ]);
    expect(log.lines[0]!.fields.err?.code).toBe('EIO');

    // Every acknowledged block after a restart (the journal is whole again: a new file).
    fs.writev = realWritev;
    syncBuiltinESMExports();
    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir, journal: true });
    for (const b of acknowledged)
      expect((await http(t.node.url, 'GET', `/blocks/${b.hash}`)).status, b.hash).toBe(200);
    for (const a of accounts)
      expect((await http(t.node.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '14' });
    const next = accounts[0]!.claimBlock(1n);
    expect((await submit({ url: t.node.url }, next)).status).toBe(201);
  }, 60_000);
});
