import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/node.ts';
import {
  createWallet,
  ensureRendererBuilt,
  launchChromium,
  ROOT,
  startUiNode,
  type UiNode,
} from './browser.ts';

/**
 * "The wallet must never look gone" (issue #16), in Chromium against real nodes: the wallet, the
 * settings and the contacts live in the node's data directory, so a node restarted on another port
 * (what happens when 8080 is busy) still shows them; a browser without the session is asked for the
 * admin token (never shown "create a wallet" over an existing one); a wallet left in browser storage
 * by an earlier version moves into the node on first start, and the browser's copy is dropped.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'correct horse battery';
const LEGACY_VAULT = 'ledger-desktop.vault.v1';
const CONTACT = 'c'.repeat(64);

let browser: Browser;
const shot = (page: Page, step: string) =>
  page.screenshot({ path: join(SHOTS, `store-${step}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('the wallet kept by the node', () => {
  const dataDir = tempDir('wallet-store-');
  let ui: UiNode;
  let context: BrowserContext;
  let page: Page;
  let address = '';
  let vaultText = '';

  beforeAll(async () => {
    ui = await startUiNode({ dataDir, powDifficulty: 0x0fff000000000000n });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await context?.close();
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the connect link opens a session and leaves no token in the address bar', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    expect(page.url()).not.toContain(ui.node.node.adminToken!);
    expect(new URL(page.url()).hash).toBe('#/');
    address = await createWallet(page, PASSWORD);
    // A setting and a contact, kept by the node too.
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('settings-theme').selectOption('dark');
    await page.evaluate(() => undefined); // let the write leave
    const node = ui.node.node;
    await expect.poll(() => (node.appStore.get('settings')?.value as { theme?: string })?.theme).toBe('dark');
    vaultText = node.appStore.get('vault')!.value as string;
    expect(vaultText).toContain('xchacha20-poly1305');
    await shot(page, '01-created');
  });

  it('after a restart on another port, the same browser opens the same wallet at the plain address', async () => {
    const before = ui.node.node.url;
    await ui.node.stop({ keepData: true });
    await ui.stop();
    ui = await startUiNode({ dataDir, powDifficulty: 0x0fff000000000000n });
    expect(ui.node.node.url).not.toBe(before);
    await page.goto(`${ui.node.node.url}/ui/`);
    await page.getByTestId('unlock').waitFor();
    // The dark theme came back with the settings.
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await shot(page, '02-other-port-unlock');
    await page.getByTestId('unlock-password').fill(PASSWORD);
    await page.getByTestId('unlock-submit').click();
    await page.getByTestId('wallet-page').waitFor();
    expect(await page.getByTestId('account-address').innerText()).toBe(address);
    await shot(page, '03-other-port-wallet');
  });

  it('a browser without the session is asked for the admin token, never offered a new wallet', async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const p = await other.newPage();
      await p.goto(`${ui.node.node.url}/ui/`);
      await p.getByTestId('connect').waitFor();
      expect(await p.getByTestId('onboarding').count()).toBe(0);
      expect(await p.getByTestId('connect-token-file').innerText()).toBe(ui.node.node.adminTokenFile!);
      await p.getByTestId('connect-token').fill('not-the-token');
      await p.getByTestId('connect-submit').click();
      await p.getByTestId('connect-error').waitFor();
      expect(await p.getByTestId('connect-error').innerText()).toMatch(/not this node’s admin token/);
      await shot(p, '04-connect-wrong-token');
      await p.getByTestId('connect-token').fill(ui.node.node.adminToken!);
      await p.getByTestId('connect-submit').click();
      await p.getByTestId('unlock').waitFor();
    } finally {
      await other.close();
    }
  });

  it('moves a wallet and contacts left in browser storage into a node that has none', async () => {
    const emptyDir = tempDir('wallet-store-migrate-');
    const fresh = await startUiNode({ dataDir: emptyDir, powDifficulty: 0x0fff000000000000n });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const p = await ctx.newPage();
      p.setDefaultTimeout(15_000);
      // An earlier version's page on this origin left its vault and contacts in localStorage.
      await p.goto(`${fresh.node.node.url}/ui/`);
      await p.getByTestId('connect').waitFor();
      await p.evaluate(
        ([vault, contact]) => {
          localStorage.setItem('ledger-desktop.vault.v1', vault!);
          localStorage.setItem(
            'ledger-desktop.contacts.v1',
            JSON.stringify([
              { name: 'Carol', address: contact },
              { name: 'Carol again', address: contact },
            ]),
          );
        },
        [vaultText, CONTACT],
      );
      await p.goto(fresh.appUrl);
      await p.getByTestId('unlock').waitFor();
      const node = fresh.node.node;
      expect(node.appStore.get('vault')?.value).toBe(vaultText);
      expect(node.appStore.get('address_book')?.value).toEqual([{ name: 'Carol', address: CONTACT }]);
      expect(await p.evaluate((k) => localStorage.getItem(k), LEGACY_VAULT)).toBeNull();
      await p.getByTestId('unlock-password').fill(PASSWORD);
      await p.getByTestId('unlock-submit').click();
      await p.getByTestId('wallet-page').waitFor();
      expect(await p.getByTestId('account-address').innerText()).toBe(address);
      await shot(p, '05-migrated');
    } finally {
      await ctx.close();
      await fresh.stop();
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});
