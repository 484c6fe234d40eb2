import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockHashBytesNode } from '../../node-core/fastpath/block-hash.ts';
import { signBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P, peerCount } from '../helpers/p2p.ts';
import { ensureRendererBuilt, launchChromium, ROOT, startUiNode, type UiNode } from './browser.ts';

/**
 * The status bar during a catch-up (issue #18), in Chromium against real nodes on loopback: a node
 * with an empty ledger shows its page first, then a peer holding CHAINS x PER_CHAIN blocks connects;
 * while the node catches up the status bar says "Catching up: N % (…)", and once it is done the line
 * is gone and the block count is the peer's. The window asks the node every 3 s: the history is large
 * enough (32,001 blocks, about 9 s of catch-up here) that the line is seen more than once; with 8,001
 * the catch-up once ended between two asks and the line was never shown.
 */
const CHAINS = 640;
const PER_CHAIN = 50;
const TOTAL = CHAINS * PER_CHAIN + 1;
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');

let browser: Browser;
let page: Page;
let source: TestNode;
let ui: UiNode;

/** CHAINS accounts on the source, each a claim then sends, applied in-process (chains side by side). */
async function fill(t: TestNode): Promise<void> {
  const networkId = t.node.statechain.networkId;
  const t0 = t.node.now();
  const seal = (b: Block, seed: Uint8Array): Block => {
    const hash = blockHashBytesNode(b, networkId);
    return { ...b, hash: bytesToHex(hash), signature: bytesToHex(signBytesNode(hash, seed)) };
  };
  await Promise.all(
    Array.from({ length: CHAINS }, async () => {
      const seed = new Uint8Array(randomBytes(32));
      const kp = keyPairFromSeed(seed);
      let balance = 1_000_000n;
      let prev = seal(
        {
          type: 'claim',
          account: kp.address,
          previous: ZERO_HASH,
          balance,
          timestamp: t0,
          asset: 'XE',
          amount: balance,
          pub_key: kp.pub_key,
        },
        seed,
      );
      await t.node.ledger.submit(prev, { live: false });
      for (let i = 1; i < PER_CHAIN; i++) {
        balance -= 1n;
        prev = seal(
          {
            type: 'send',
            account: kp.address,
            previous: prev.hash!,
            balance,
            timestamp: t0 + BigInt(i),
            asset: 'XE',
            destination: bytesToHex(randomBytes(32)),
            amount: 1n,
          },
          seed,
        );
        await t.node.ledger.submit(prev, { live: false });
      }
    }),
  );
  await t.node.consensus.idle();
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  source = await startTestNode({ ...P2P, powDifficulty: 0n });
  await fill(source);
  // The node under test knows the network but no peer yet: its page is up before the catch-up.
  ui = await startUiNode({ ...P2P, genesisDir: join(source.dataDir, 'genesis') });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(20_000);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  await source?.stop();
});

describe('status bar during a catch-up (Chromium, real nodes)', () => {
  it('says "Catching up: N % (…)" while the node pulls history, and the block count once done', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('status-blocks').waitFor();
    expect(await page.getByTestId('status-blocks').innerText()).toBe('1');
    expect(await page.getByTestId('status-sync').count()).toBe(0);

    // The peer dials the node: the catch-up starts.
    source.node.p2p!.discover([await listenAddr(ui.node)]);
    await waitFor(async () => (await peerCount(ui.node)) === 1, 15_000, 'the peer to connect');
    const line = page.getByTestId('status-sync');
    await line.waitFor({ timeout: 60_000 });
    const text = await line.innerText();
    expect(text).toMatch(/^Catching up: \d{1,2} % \((about \d+(\.\d)? (s|min|h) left|time left unknown)\)$/);
    await page.screenshot({ path: join(SHOTS, 'sync-01-catching-up.png') });

    await expect
      .poll(async () => (await page.getByTestId('status-blocks').innerText()).replace(/\D/g, ''), {
        timeout: 120_000,
        interval: 500,
      })
      .toBe(String(TOTAL));
    await expect.poll(async () => line.count(), { timeout: 15_000, interval: 500 }).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'sync-02-caught-up.png') });
  }, 240_000);
});
