import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt, launchChromium, ROOT, startUiNode, type UiNode } from './browser.ts';

/**
 * The wallet end to end: the built renderer in Debian's Chromium against a real node (temp dir,
 * tiny proof-of-work difficulty), driven as a person would, with a screenshot of every screen in
 * test-artifacts/screenshots/.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'correct horse battery';
const MEMO = 'lunch 🍕, "thanks"';

let ui: UiNode;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let first = '';
let second = '';

const shot = (step: string) => page.screenshot({ path: join(SHOTS, `${step}.png`), fullPage: true });
const micro = (testId: string) => page.getByTestId(testId).first().getAttribute('data-micro');

/** Reads the recovery phrase shown, ticks "written down", and types back every word (test/e2e/seed.test.ts has the rest). */
async function backUpSeed(step: string): Promise<void> {
  await page.getByTestId('seed-backup').waitFor();
  const words: string[] = [];
  for (let i = 1; i <= 24; i++) words.push(await page.getByTestId(`phrase-shown-${i}`).innerText());
  expect(words.every((w) => /^[a-z]{3,8}$/.test(w))).toBe(true);
  await expect(page.getByTestId('seed-continue').isDisabled()).resolves.toBe(true);
  await page.getByTestId('seed-written').check();
  await page.getByTestId('seed-continue').click();
  await page.getByTestId('seed-confirm').waitFor();
  // Nothing typed is refused: the backup cannot be skipped.
  await page.getByTestId('seed-confirm-submit').click();
  expect(await page.getByTestId('phrase-check-error').innerText()).toBe(
    'Type the 24 words you wrote down, in order.',
  );
  for (let i = 1; i <= 24; i++) await page.getByTestId(`phrase-word-${i}`).fill(words[i - 1]!.toUpperCase());
  await shot(step);
  await page.getByTestId('seed-confirm-submit').click();
}

async function selectAccount(address: string): Promise<void> {
  await page.locator(`[data-testid="account-item"][data-address="${address}"]`).click();
  await page.waitForFunction(
    (a) => document.querySelector('[data-testid="account-address"]')?.textContent === a,
    address,
  );
}

async function openTab(tab: 'overview' | 'send' | 'receive' | 'history'): Promise<void> {
  await page.getByTestId(`tab-${tab}`).click();
}

async function waitMicro(testId: string, value: string): Promise<void> {
  await page.waitForFunction(
    ([id, v]) => document.querySelector(`[data-testid="${id}"]`)?.getAttribute('data-micro') === v,
    [testId, value] as const,
    { timeout: 15_000 },
  );
}

/** A node with the UI, and a fresh browser context and page on it. */
async function open(powDifficulty: bigint): Promise<void> {
  ui = await startUiNode({ powDifficulty });
  console.log(
    ui.mode === 'node'
      ? `e2e: the node serves the UI itself at ${ui.appUrl}`
      : `e2e: FALLBACK: the node does not serve /ui/ yet; static server at ${ui.appUrl}`,
  );
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => console.error(`e2e page error: ${e.message}`));
}

async function close(): Promise<void> {
  await context?.close();
  await ui?.stop();
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('wallet in Chromium against a real node', () => {
  beforeAll(() => open(0x0fff000000000000n));
  afterAll(close);

  it('first run: creates an account with a confirmed seed backup and a password', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    await page.getByTestId('status-network').waitFor();
    await shot('01-onboarding');
    await page.getByTestId('onboarding-create').click();
    await shot('02-seed');
    await backUpSeed('03-seed-confirm');
    await page.getByTestId('password-form').waitFor();
    await page.getByTestId('new-password').fill('short');
    await page.getByTestId('confirm-password').fill('short');
    await page.getByTestId('create-wallet').click();
    expect(await page.getByTestId('password-error').innerText()).toMatch(/at least 8 characters/);
    await page.getByTestId('new-password').fill(PASSWORD);
    await page.getByTestId('confirm-password').fill(PASSWORD);
    await shot('04-password');
    await page.getByTestId('create-wallet').click();
    await page.getByTestId('wallet-page').waitFor();
    first = await page.getByTestId('account-address').innerText();
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    // The vault at rest is ciphertext, not the seed, and the node keeps it (not the browser).
    const stored = ui.node.node.appStore.get('vault')?.value;
    expect(typeof stored).toBe('string');
    expect(await page.evaluate(() => localStorage.getItem('ledger-desktop.vault.v1'))).toBeNull();
    expect(JSON.parse(stored as string)).toMatchObject({
      type: 'ledger-node-keystore',
      version: 2,
      cipher: 'xchacha20-poly1305',
      kdf: { name: 'scrypt', N: 32768 },
    });
  });

  it('claims test funds', async () => {
    await page.getByTestId('claim-button').click();
    await page.getByTestId('claim-success').waitFor();
    await waitMicro('balance-total-XE', '1000000000');
    expect(await micro('balance-spendable-XE')).toBe('1000000000');
    await page.getByTestId('claim-used-up').waitFor();
    await shot('05-claimed');
  });

  it('creates a second account and adds it to the address book', async () => {
    await page.getByTestId('add-account').click();
    // The wallet's phrase already covers the next account: no new seed to back up.
    await page.getByTestId('new-account').waitFor();
    await page.getByTestId('account-label').fill('Savings');
    await shot('06-second-account');
    await page.getByTestId('add-account-save').click();
    await page.getByTestId('wallet-page').waitFor();
    second = await page.getByTestId('account-address').innerText();
    expect(second).not.toBe(first);
    expect(await page.getByTestId('account-item').count()).toBe(2);
    await page.getByTestId('nav-contacts').click();
    await page.getByTestId('contact-name').fill('My savings');
    await page.getByTestId('contact-address').fill(second);
    await page.getByTestId('contact-save').click();
    await page.getByTestId('contact-row').waitFor();
    await shot('07-address-book');
    await page.getByTestId('nav-wallet').click();
  });

  it('sends with a memo, after clear errors for a bad address and a long memo', async () => {
    await selectAccount(first);
    await openTab('send');
    await page.getByTestId('send-to').fill('abc123');
    await page.getByTestId('send-amount').fill('250.5');
    await page.getByTestId('send-memo').fill('x'.repeat(65));
    await page.getByTestId('send-review').click();
    expect(await page.getByTestId('send-to-error').innerText()).toMatch(/64 hexadecimal characters/);
    expect(await page.getByTestId('send-memo-error').innerText()).toMatch(/65 bytes; the limit is 64/);
    await shot('08-send-errors');
    await page.getByTestId('send-contact').selectOption(second);
    await page.getByTestId('send-memo').fill(MEMO);
    await page.getByTestId('send-review').click();
    expect(await page.getByTestId('review-to').innerText()).toBe(second);
    expect(await page.getByTestId('review-amount').getAttribute('data-micro')).toBe('250500000');
    await shot('09-send-review');
    await page.getByTestId('send-confirm').click();
    await page.getByTestId('send-success').waitFor();
    // The incoming notice has a link and a button: they go under its text, which keeps its width (beside
    // them it was squeezed to a 117-pixel column).
    const notice = page.getByTestId('toast').filter({ has: page.getByTestId('toast-action') });
    await notice.waitFor();
    expect((await notice.getByTestId('toast-text').boundingBox())!.width).toBeGreaterThanOrEqual(240);
    await shot('10-sent');
    await openTab('overview');
    await waitMicro('balance-total-XE', '749500000');
  });

  it('receives the pending send on the second account', async () => {
    await selectAccount(second);
    await openTab('overview');
    await page.getByTestId('pending-row').waitFor();
    await waitMicro('balance-pending-XE', '250500000');
    await shot('11-pending');
    await page.getByTestId('receive-all').click();
    await page.getByTestId('receive-success').waitFor();
    await waitMicro('balance-total-XE', '250500000');
    await waitMicro('balance-pending-XE', '0');
    await openTab('receive');
    await page.getByTestId('address-qr').waitFor();
    expect(await page.getByTestId('address-qr').getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await shot('12-received');
  });

  it('shows both histories with the memo', async () => {
    await openTab('history');
    const rows2 = page.getByTestId('history-row');
    await rows2.first().waitFor();
    expect(await rows2.count()).toBe(1);
    expect(await rows2.first().getAttribute('data-type')).toBe('receive');
    await page.waitForFunction(
      (m) => document.querySelector('[data-testid="history-memo"]')?.textContent === m,
      MEMO,
    );
    await shot('13-history-second');
    await selectAccount(first);
    const rows1 = page.getByTestId('history-row');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="history-row"]').length === 2);
    expect(await rows1.nth(0).getAttribute('data-type')).toBe('send'); // newest first
    expect(await rows1.nth(1).getAttribute('data-type')).toBe('claim');
    expect(await rows1.nth(0).getByTestId('history-memo').innerText()).toBe(MEMO);
    await page.getByTestId('history-direction').selectOption('in');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="history-row"]').length === 1);
    expect(await rows1.first().getAttribute('data-type')).toBe('claim');
    await page.getByTestId('history-direction').selectOption('all');
    await shot('14-history-first');
  });

  it('exports the history as CSV with exact amounts', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('history-export').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`history-${first}.csv`);
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'height,time_utc,timestamp_ns,type,direction,asset,amount_micro,amount,balance_micro,balance,counterparty,memo,hash,finalized',
    );
    expect(lines).toHaveLength(3);
    const claim = lines[1]!.split(',');
    expect(claim.slice(0, 1)).toEqual(['1']);
    expect(claim.slice(3, 10)).toEqual([
      'claim',
      'in',
      'XE',
      '1000000000',
      '1000.000000',
      '1000000000',
      '1000.000000',
    ]);
    expect(lines[2]).toContain(`,send,out,XE,250500000,250.500000,749500000,749.500000,${second},`);
    expect(lines[2]).toContain('"lunch 🍕, ""thanks"""');
  });

  it('refuses a send above the spendable balance before signing', async () => {
    await selectAccount(second);
    await openTab('send');
    await page.getByTestId('send-to').fill(first);
    await page.getByTestId('send-amount').fill('1000');
    await page.getByTestId('send-review').click();
    expect(await page.getByTestId('send-amount-error').innerText()).toBe(
      'Not enough funds: 1,000 XE asked, 250.5 XE available to send.',
    );
    expect(await page.getByTestId('send-review-card').count()).toBe(0);
    await shot('15-insufficient');
  });

  it('locks, refuses a wrong password clearly, and unlocks', async () => {
    await page.getByTestId('lock-button').click();
    await page.getByTestId('unlock').waitFor();
    expect(await page.getByTestId('account-list').count()).toBe(0);
    await page.getByTestId('unlock-password').fill('wrong password');
    await page.getByTestId('unlock-submit').click();
    expect(await page.getByTestId('unlock-error').innerText()).toBe('Wrong password. Try again.');
    await shot('16-unlock-wrong');
    await page.getByTestId('unlock-password').fill(PASSWORD);
    await page.getByTestId('unlock-submit').click();
    await page.getByTestId('wallet-page').waitFor();
    expect(await page.getByTestId('account-item').count()).toBe(2);
    await shot('17-unlocked');
  });

  it('explorer and settings pages load', async () => {
    await page.getByTestId('nav-explorer').click();
    await page.getByTestId('explorer-block-row').first().waitFor();
    await page.getByTestId('explorer-query').fill(second);
    await page.getByTestId('explorer-go').click();
    await waitMicro('explorer-balance-XE', '250500000');
    await shot('18-explorer');
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('settings-page').waitFor();
    expect(Number(await page.getByTestId('kdf-ms').innerText())).toBeLessThan(1000);
    // The page background under each theme choice, with the system preferring light, then dark.
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const LIGHT_BG = 'rgb(245, 246, 248)';
    const DARK_BG = 'rgb(17, 19, 24)';
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(bg).toBe(LIGHT_BG);
    await page.getByTestId('settings-theme').selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await expect.poll(bg).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByTestId('settings-theme').selectOption('light');
    await expect.poll(bg).toBe(LIGHT_BG);
    await page.getByTestId('settings-theme').selectOption('system');
    await expect.poll(bg).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(bg).toBe(LIGHT_BG);
    await page.getByTestId('settings-theme').selectOption('dark');
    await shot('19-settings-dark');
  });

  it('also runs from another origin with ?api= naming the node (development form, CORS)', async () => {
    const dev = await context.newPage();
    await dev.goto(ui.crossOriginUrl);
    // Another origin, the same wallet: the node keeps it, and the session cookie is the host's.
    await dev.getByTestId('unlock').waitFor();
    await dev.getByTestId('status-network').waitFor();
    expect(await dev.getByTestId('status-api').innerText()).toBe(ui.node.node.url);
    await dev.close();
  });

  it('receives automatically when the setting is on', async () => {
    await page.getByTestId('nav-wallet').click();
    await selectAccount(second);
    await page.getByTestId('auto-receive').check();
    await selectAccount(first);
    await openTab('send');
    await page.getByTestId('send-to').fill(second);
    await page.getByTestId('send-amount').fill('1');
    await page.getByTestId('send-review').click();
    await page.getByTestId('send-confirm').click();
    await page.getByTestId('send-success').waitFor();
    await selectAccount(second);
    await openTab('overview');
    // Nobody clicks Receive: the auto-receiver takes the send in.
    await waitMicro('balance-total-XE', '251500000');
    await waitMicro('balance-pending-XE', '0');
    await shot('20-auto-received');
  });

  it('the status bar shows the node and an error state when it stops answering', async () => {
    expect(await page.getByTestId('status-network').innerText()).toMatch(/^devnet-/);
    expect(Number(await page.getByTestId('status-blocks').innerText())).toBeGreaterThanOrEqual(6);
    await ui.stop();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="status-bar"]')?.getAttribute('data-state') !== 'ok',
      undefined,
      { timeout: 10_000 },
    );
    expect(await page.getByTestId('status-bar').innerText()).toMatch(/cannot reach the node/);
    await shot('21-node-unreachable');
  });
});

describe('proof of work progress and cancel', () => {
  // About 4.3e9 attempts expected: no search finishes during the test.
  beforeAll(() => open(0xffffffff00000000n));
  afterAll(close);

  it('shows attempts against the expected count while it runs, and Cancel stops it', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding-create').click();
    await backUpSeed('22-pow-seed-confirm');
    await page.getByTestId('new-password').fill(PASSWORD);
    await page.getByTestId('confirm-password').fill(PASSWORD);
    await page.getByTestId('create-wallet').click();
    await page.getByTestId('wallet-page').waitFor();
    await page.getByTestId('claim-button').click();
    await page.getByTestId('pow-progress').waitFor();
    await page.getByTestId('status-pow').waitFor();
    await page.waitForFunction(
      () =>
        Number(document.querySelector<HTMLProgressElement>('[data-testid="pow-progress"] progress')?.value) >
        0,
    );
    expect(await page.getByTestId('pow-progress').innerText()).toMatch(/of ~4294\.97 M expected attempts/);
    await shot('23-pow-progress');
    await page.getByTestId('pow-cancel').click();
    await page.getByTestId('pow-progress').waitFor({ state: 'detached' });
    await page.getByText('Cancelled.').waitFor();
    expect(await page.getByTestId('claim-button').isEnabled()).toBe(true);
    expect(await ui.node.client.chain(await page.getByTestId('account-address').innerText())).toBeUndefined();
    await shot('24-pow-cancelled');
  });
});
