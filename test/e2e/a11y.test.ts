import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWallet,
  ensureRendererBuilt,
  launchChromium,
  ROOT,
  startUiNode,
  type UiNode,
} from './browser.ts';
import { axeViolations } from './axe.ts';

/**
 * Accessibility end to end: axe-core (injected into Debian's Chromium) audits every page of the app
 * against a real node, in the light and the dark theme, and finds no violation at all; the skip link
 * is the first thing Tab reaches and moves focus to the page's content; landmarks are labelled. The
 * console stays free of errors throughout. Screenshots: test-artifacts/screenshots/a11y-*.png.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'accessible wallet';

let ui: UiNode;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

/** Audits the current page in both themes, with a screenshot of each. */
async function auditBothThemes(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(100); // styles recomputed
    await page.screenshot({ path: join(SHOTS, `a11y-${name}-${scheme}.png`), fullPage: true });
    expect(await axeViolations(page), `${name} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function go(hash: string, ready: string): Promise<void> {
  await page.evaluate((h) => {
    window.location.hash = h;
  }, hash);
  await page.getByTestId(ready).first().waitFor();
  // Lazy pages and their first queries settle (the app polls, so the network is never idle).
  await page.waitForTimeout(600);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
  ui = await startUiNode({ powDifficulty: 0x0fff000000000000n });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
});

describe('accessibility of every page (axe-core in Chromium, real node)', () => {
  it('onboarding: no violations; the skip link comes first and leads to the content', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    await page.getByTestId('status-network').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('skip-link');
    expect(await page.getByTestId('skip-link').isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'a11y-skip-link.png') });
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main-content');
    await auditBothThemes('onboarding');
  });

  it('wallet: overview, send, receive and history', async () => {
    await createWallet(page, PASSWORD);
    await page.getByTestId('claim-button').click();
    await page.getByTestId('claim-success').waitFor();
    await auditBothThemes('wallet-overview');
    await go('#/wallet/send', 'send-form');
    await auditBothThemes('wallet-send');
    await go('#/wallet/receive', 'address-qr');
    await auditBothThemes('wallet-receive');
    await go('#/wallet/history', 'wallet-page');
    await auditBothThemes('wallet-history');
  });

  it('landmarks: one main, labelled navigation, a labelled status bar', async () => {
    const landmarks = await page.evaluate(() => ({
      mains: document.querySelectorAll('main').length,
      navs: [...document.querySelectorAll('nav')].map((n) => n.getAttribute('aria-label')),
    }));
    expect(landmarks.mains).toBe(1);
    expect(landmarks.navs.length).toBeGreaterThan(0);
    for (const label of landmarks.navs) expect(label).toBeTruthy();
    expect(await page.getByRole('contentinfo', { name: 'Node status' }).count()).toBe(1);
  });

  for (const [name, hash, ready] of [
    ['address-book', '#/contacts', 'contact-name'],
    ['chat', '#/chat', 'nav-chat'],
    ['leasing', '#/leasing', 'nav-leasing'],
    ['provider', '#/leasing/provider', 'nav-provider'],
    ['explorer', '#/explorer', 'explorer-query'],
    ['node', '#/node', 'nav-node'],
    ['settings', '#/settings', 'nav-settings'],
  ] as const) {
    it(`${name}`, async () => {
      await go(hash, ready);
      await page.waitForTimeout(500);
      await auditBothThemes(name);
    });
  }

  it('provider page of a node that is not one: the notice stands apart from the card below it', async () => {
    await go('#/leasing/provider', 'not-provider');
    const gap = await page.getByTestId('not-provider').evaluate((notice) => {
      const next = notice.nextElementSibling!;
      return next.getBoundingClientRect().top - notice.getBoundingClientRect().bottom;
    });
    expect(gap).toBeGreaterThanOrEqual(8);
  });

  it('explorer: a block', async () => {
    await go('#/explorer', 'explorer-query');
    const first = page.locator('a[href^="#/explorer/block/"]').first();
    await first.waitFor();
    await first.click();
    await page.waitForFunction(() => window.location.hash.startsWith('#/explorer/block/'));
    await page.waitForTimeout(600);
    await auditBothThemes('explorer-block');
  });

  it('the shortcuts dialog', async () => {
    await go('#/wallet', 'wallet-page');
    await page.locator('h2').first().click();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await auditBothThemes('shortcuts');
    await page.keyboard.press('Escape');
  });

  it('the lock screen', async () => {
    await page.getByTestId('lock-button').click();
    await page.getByTestId('unlock').waitFor();
    await auditBothThemes('unlock');
  });

  it('left the console free of errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
