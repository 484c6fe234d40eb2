import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWallet,
  DIST,
  ensureRendererBuilt,
  launchChromium,
  ROOT,
  startUiNode,
  type UiNode,
} from './browser.ts';
import { axeViolations } from './axe.ts';

/**
 * Desktop habits end to end, in Debian's Chromium against a real node: a clean first load (icons, no
 * console errors, compressed files), keyboard shortcuts and their help dialog, payment links opening
 * the send form, and incoming funds (sent by a second wallet on the node) told by a notice and a
 * (recorded) browser notification while the page is hidden. A screenshot at each state in test-artifacts/screenshots/desktop-*.png.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'desktop habits 1';

let ui: UiNode;
let browser: Browser;
let alice: { context: BrowserContext; page: Page; address: string };
const consoleErrors: string[] = [];
const failedRequests: string[] = [];

const shot = (page: Page, step: string) =>
  page.screenshot({ path: join(SHOTS, `desktop-${step}.png`), fullPage: true });

async function openPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) failedRequests.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return page;
}

const focusedTestId = (page: Page) =>
  page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);
const route = (page: Page) => page.evaluate(() => window.location.hash);
/** The GUI's address without the connect route startUiNode adds (the session cookie is set by then). */
const appBase = () => ui.appUrl.split('#')[0]!;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
  ui = await startUiNode({ powDifficulty: 0x0fff000000000000n });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  alice = { context, page: await openPage(context), address: '' };
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
});

describe('desktop habits in Chromium against a real node', () => {
  it('first load: the app icon, compressed files, no console errors and no failed request', async () => {
    const { page } = alice;
    const encodings = new Map<string, string | undefined>();
    page.on('response', (r) => {
      if (/\.(js|css|html)$|\/ui\/$/.test(new URL(r.url()).pathname))
        encodings.set(new URL(r.url()).pathname, r.headers()['content-encoding']);
    });
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    await page.getByTestId('status-network').waitFor();
    // The icon the page links resolves to an image.
    const icons = await page.evaluate(async () =>
      Promise.all(
        [...document.querySelectorAll<HTMLLinkElement>('link[rel="icon"]')].map(async (l) => {
          const r = await fetch(l.href);
          return { href: new URL(l.href).pathname, status: r.status, type: r.headers.get('content-type') };
        }),
      ),
    );
    expect(icons.map((i) => i.href).sort()).toEqual(['/ui/favicon.ico', '/ui/icon.png']);
    for (const i of icons) {
      expect(i.status, i.href).toBe(200);
      expect(i.type, i.href).toMatch(/^image\//);
    }
    // Chromium takes Brotli: the page and every script the build compressed come as Brotli.
    expect(encodings.get('/ui/')).toBe('br');
    const scripts = [...encodings.entries()].filter(([p]) => p.endsWith('.js'));
    expect(scripts.filter(([, enc]) => enc === 'br').length).toBeGreaterThan(0);
    for (const [p, enc] of scripts) {
      const compressed = existsSync(join(DIST, `${p.slice('/ui/'.length)}.br`));
      expect(enc, p).toBe(compressed ? 'br' : undefined);
    }
    await shot(page, '01-first-load');
    expect(consoleErrors).toEqual([]);
    expect(failedRequests).toEqual([]);
  });

  it('creates a wallet and claims test funds (the page the shortcuts work on)', async () => {
    const { page } = alice;
    alice.address = await createWallet(page, PASSWORD);
    await page.getByTestId('claim-button').click();
    await page.getByTestId('claim-success').waitFor();
    expect(failedRequests).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('? opens the shortcuts dialog: labelled, modal, focus kept inside, Escape closes it', async () => {
    const { page } = alice;
    await page.locator('body').click({ position: { x: 640, y: 500 } });
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    expect(await page.getByTestId('shortcut-row').count()).toBeGreaterThanOrEqual(10);
    expect(await focusedTestId(page)).toBe('shortcuts-help-close');
    // Tab and Shift+Tab never leave the dialog: the page behind is inert.
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press(i % 2 ? 'Shift+Tab' : 'Tab');
      expect(await page.evaluate(() => !!document.activeElement?.closest('dialog[open]'))).toBe(true);
    }
    await shot(page, '02-shortcuts-help');
    expect(await axeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    // ? toggles, and a second ? closes it as well.
    await page.keyboard.press('?');
    await dialog.waitFor();
    await page.keyboard.press('?');
    await dialog.waitFor({ state: 'hidden' });
    // The sidebar's link opens it too, for those who do not guess the key.
    await page.getByTestId('shortcuts-link').click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focusedTestId(page)).toBe('shortcuts-link');
  });

  it('g s, g h, g c, g w go to send, history, chat and the wallet; / searches the explorer', async () => {
    const { page } = alice;
    await page.keyboard.press('g');
    await page.keyboard.press('s');
    await page.getByTestId('send-form').waitFor();
    expect(await route(page)).toBe('#/wallet/send');
    await page.keyboard.press('g');
    await page.keyboard.press('h');
    await expect.poll(() => route(page)).toBe('#/wallet/history');
    await page.keyboard.press('g');
    await page.keyboard.press('c');
    await expect.poll(() => route(page)).toBe('#/chat');
    await page.keyboard.press('g');
    await page.keyboard.press('w');
    await page.getByTestId('wallet-page').waitFor();
    await page.keyboard.press('/');
    await page.getByTestId('explorer-query').waitFor();
    await expect.poll(() => focusedTestId(page)).toBe('explorer-query');
    await shot(page, '03-search-shortcut');
  });

  it('types into fields without firing shortcuts', async () => {
    const { page } = alice;
    await page.keyboard.type('g w ?/');
    expect(await page.getByTestId('explorer-query').inputValue()).toBe('g w ?/');
    expect(await route(page)).toBe('#/explorer');
    expect(await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).isVisible()).toBe(false);
    await page.getByTestId('explorer-query').fill('');
  });

  it('opens a payment link as a filled send form that still needs review', async () => {
    const { page } = alice;
    const to = 'c0ffee'.repeat(10) + 'beef';
    const uri = `xe:${to}?amount=12.5&memo=lunch%20%F0%9F%8D%95&label=Caf%C3%A9`;
    // A fresh load (from another page) is locked: the link waits for the unlock.
    await page.goto('about:blank');
    await page.goto(`${appBase()}#/send?uri=${encodeURIComponent(uri)}`);
    await page.getByTestId('unlock-password').fill(PASSWORD);
    await page.getByTestId('unlock-submit').click();
    await page.getByTestId('send-form').waitFor();
    // The link's address left the history: Back does not open it again.
    expect(await route(page)).toBe('#/wallet/send');
    expect(await page.getByTestId('send-to').inputValue()).toBe(to);
    expect(await page.getByTestId('send-amount').inputValue()).toBe('12.5');
    expect(await page.getByTestId('send-memo').inputValue()).toBe('lunch 🍕');
    expect(await page.getByTestId('payment-link-notice').innerText()).toMatch(/payment link to Café/);
    await shot(page, '04-payment-link-filled');
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(page), `payment link notice (${scheme})`).toEqual([]);
    }
    await page.getByTestId('send-review').click();
    await page.getByTestId('send-review-card').waitFor();
    expect(await page.getByTestId('review-amount').getAttribute('data-micro')).toBe('12500000');
    await shot(page, '05-payment-link-review');
    await page.getByTestId('send-edit').click();
  });

  it('says what is wrong with a bad payment link, and opens one arriving while unlocked', async () => {
    const { page } = alice;
    await page.evaluate(() => {
      window.location.hash = `#/send?uri=${encodeURIComponent(`xe:${'ab'.repeat(32)}?amount=1.1234567`)}`;
    });
    await page.getByTestId('payment-link-error').waitFor();
    expect(await page.getByTestId('payment-link-error').innerText()).toMatch(
      /cannot be used: the amount "1\.1234567": at most 6 decimal places/,
    );
    await shot(page, '06-payment-link-error');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByTestId('payment-link-dismiss').click();
    await page.getByTestId('payment-link-error').waitFor({ state: 'detached' });
    const to = '12'.repeat(32);
    await page.evaluate((t) => {
      window.location.hash = `#/send?uri=${encodeURIComponent(`web+xe:${t}?amount=3&asset=XUSD`)}`;
    }, to);
    await expect.poll(() => page.getByTestId('send-to').inputValue()).toBe(to);
    expect(await page.getByTestId('send-amount').inputValue()).toBe('3');
    expect(await page.getByTestId('send-asset').inputValue()).toBe('XUSD');
    expect(await page.getByTestId('send-memo').inputValue()).toBe('');
  });

  it('offers to open web+xe: links with this page from the shortcuts dialog', async () => {
    const { page } = alice;
    await page.locator('h2').first().click();
    await page.keyboard.press('?');
    await page.getByTestId('register-payment-links').click();
    await page.getByText(/Your browser asks you to confirm|refused to open payment links/).waitFor();
    await shot(page, '07-register-links');
    await page.keyboard.press('Escape');
  });

  it('tells of incoming funds: a notice in the window, then, once allowed, a notification while hidden', async () => {
    const { page } = alice;
    // The browser's notification and visibility, observed: a recording Notification (not yet
    // allowed), a hidden page.
    await page.evaluate(() => {
      const w = window as unknown as { __notes: { title: string; body: string }[]; __asked: number };
      w.__notes = [];
      w.__asked = 0;
      let permission = 'default';
      class RecordingNotification {
        static get permission() {
          return permission;
        }
        static requestPermission() {
          w.__asked += 1;
          permission = 'granted';
          return Promise.resolve('granted');
        }
        onclick: (() => void) | null = null;
        constructor(title: string, opts: { body: string }) {
          w.__notes.push({ title, body: opts.body });
        }
        close() {}
      }
      Object.defineProperty(window, 'Notification', { configurable: true, value: RecordingNotification });
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    });
    const notes = () => page.evaluate(() => (window as unknown as { __notes: unknown[] }).__notes);
    await page.keyboard.press('g');
    await page.keyboard.press('w');
    await page.getByTestId('wallet-page').waitFor();

    // Bob, with a wallet of his own on the same node (the node's client, as a script would), sends
    // Alice 250.5 XE, then 7 XE: real blocks, proof of work included.
    const bob = await ui.node.wallet();
    await bob.claim(1_000_000_000n);
    await bob.send(alice.address, 250_500_000n, 'XE');

    const first = page.getByTestId('toast').filter({ hasText: 'Incoming: 250.5 XE' });
    await first.waitFor({ timeout: 20_000 });
    expect(await first.getByTestId('toast-text').innerText()).toMatch(
      /^Incoming: 250\.5 XE\. To .+, from [0-9a-f]{8}…[0-9a-f]{8}\. Receive it in the wallet\.$/,
    );
    expect(await notes()).toEqual([]); // not allowed yet: the notice only
    await shot(page, '08-incoming-funds');
    expect(await axeViolations(page)).toEqual([]);
    // Allowed from the notice's button (browsers ask only from a click).
    await first.getByTestId('toast-action').click();
    expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(1);

    await bob.send(alice.address, 7_000_000n, 'XE');
    await page.getByTestId('toast').filter({ hasText: 'Incoming: 7 XE' }).waitFor({ timeout: 20_000 });
    await expect.poll(notes).toEqual([
      {
        title: 'Incoming: 7 XE',
        body: expect.stringMatching(/^To .+, from [0-9a-f]{8}…[0-9a-f]{8}\. Receive it in the wallet\.$/),
      },
    ]);
    await shot(page, '09-incoming-funds-notified');
    // Told once: the next refreshes of the pending list add nothing.
    await page.waitForTimeout(5000);
    expect(await notes()).toHaveLength(1);
  }, 120_000);

  it('Ctrl+L locks the wallet', async () => {
    const { page } = alice;
    await page.locator('h2').first().click();
    await page.keyboard.press('Control+l');
    await page.getByTestId('unlock').waitFor();
    await shot(page, '10-locked-by-shortcut');
  });

  it('kept the console free of errors and every request answered', () => {
    expect(consoleErrors).toEqual([]);
    expect(failedRequests).toEqual([]);
  });
});
