import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './axe.ts';
import {
  addAccount,
  createWallet,
  ensureRendererBuilt,
  launchChromium,
  ROOT,
  startUiNode,
  type UiNode,
} from './browser.ts';

/**
 * Everyday friction in the wallet (#16), end to end: the built renderer in Debian's Chromium against a
 * real node, driven as a person would, a screenshot of every state in test-artifacts/screenshots/
 * (friction-*.png). Where a send must still be running when the person leaves the page, the test
 * holds the real submission request in the browser (page.route) until it has navigated away, then
 * lets it through to the node unchanged: nothing is mocked.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'correct horse battery';
const NEVER_SEEN = 'c0ffee'.repeat(10) + 'c0ffee'.slice(0, 4);

let ui: UiNode;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let main = '';
let savings = '';
const errors: string[] = [];

const shot = (step: string, fullPage = true) =>
  page.screenshot({ path: join(SHOTS, `friction-${step}.png`), fullPage });

async function waitMicro(testId: string, value: string): Promise<void> {
  await page.waitForFunction(
    ([id, v]) => document.querySelector(`[data-testid="${id}"]`)?.getAttribute('data-micro') === v,
    [testId, value] as const,
    { timeout: 15_000 },
  );
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

/**
 * Holds the next request to `path` (a block submission) in the browser until `release()`; `arrived`
 * resolves once the page has sent it (its proof of work done).
 */
async function holdNext(path: string): Promise<{ arrived: Promise<void>; release: () => void }> {
  let release!: () => void;
  let seen!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const arrived = new Promise<void>((r) => (seen = r));
  await page.route(
    (url) => url.pathname === path,
    async (route) => {
      seen();
      await gate;
      await route.continue();
    },
    { times: 1 },
  );
  return { arrived, release };
}

/** The toast saying exactly `text` (others, such as incoming-funds notices, may show beside it). */
async function toastSaying(text: string) {
  const t = page
    .getByTestId('toast')
    .filter({ has: page.getByTestId('toast-text').getByText(text, { exact: true }) });
  await t.waitFor();
  return t;
}

async function closeToasts(): Promise<void> {
  for (const b of await page.getByTestId('toast-close').all()) await b.click();
  await page.getByTestId('toaster').waitFor({ state: 'detached' });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
  ui = await startUiNode({ powDifficulty: 0x0fff000000000000n });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
  });
});

afterAll(async () => {
  await context?.close();
  await ui?.stop();
  await browser?.close();
});

describe('everyday friction in the wallet, in Chromium against a real node', () => {
  it('a claim keeps running when the person leaves, and its result comes as a toast elsewhere', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    main = await createWallet(page, PASSWORD);
    const held = await holdNext('/blocks/claim');
    await page.getByTestId('claim-button').click();
    await held.arrived;
    expect(await page.getByTestId('claim-button').innerText()).toBe('Claiming…');
    await shot('01-claim-running');
    await page.getByTestId('nav-contacts').click();
    await page.getByTestId('contacts-page').waitFor();
    held.release();
    const claimed = await toastSaying('Claimed 1,000 XE of test funds for Main account.');
    expect(await claimed.getByTestId('toast-link').getAttribute('href')).toMatch(
      /^#\/explorer\/block\/[0-9a-f]{64}$/,
    );
    await shot('02-claim-toast-elsewhere');
    await closeToasts();
    await page.getByTestId('nav-wallet').click();
    await waitMicro('balance-total-XE', '1000000000');
    const row = page.getByTestId('activity-row').first();
    expect(await row.getAttribute('data-kind')).toBe('claim');
    expect(await row.getAttribute('data-state')).toBe('done');
    expect(await row.getByTestId('activity-block').innerText()).toBe('View block');
  });

  it('narrow window (800x600): the balance is on the first screen', async () => {
    savings = await addAccount(page, 'Savings');
    await selectAccount(main);
    await page.setViewportSize({ width: 800, height: 600 });
    await waitMicro('balance-total-XE', '1000000000');
    const box = await page.getByTestId('balance-total-XE').boundingBox();
    const bar = await page.getByTestId('status-bar').boundingBox();
    expect(box).not.toBeNull();
    // Wholly inside the window, above the status bar, with no scrolling.
    expect(await page.evaluate(() => document.querySelector('main')!.scrollTop)).toBe(0);
    expect(box!.y).toBeGreaterThan(0);
    expect(box!.y + box!.height).toBeLessThanOrEqual(bar!.y);
    await shot('03-narrow-800x600', false);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('plain words on the wallet; the technical detail is one click away', async () => {
    const text = await page.getByTestId('wallet-page').innerText();
    expect(text).not.toMatch(/final up to block/i);
    expect(text).not.toMatch(/not final/i);
    expect(await page.getByTestId('balance-status').innerText()).toMatch(/^Everything is confirmed\./);
    const details = page.getByTestId('balance-status').locator('details');
    expect(await details.locator('summary').innerText()).toBe('Details');
    await details.locator('summary').click();
    expect(await details.innerText()).toMatch(/Final up to block 1 of this account’s chain/);
    await shot('04-balance-details');
  });

  it('Send offers my own accounts by name; the send keeps running when I leave and reports where I am', async () => {
    await openTab('send');
    const own = page.getByTestId('send-contact').locator('optgroup[label="My accounts"] option');
    await own.first().waitFor({ state: 'attached' });
    const options = await own.allInnerTexts();
    expect(options).toEqual([`Savings (${savings.slice(0, 6)}…${savings.slice(-6)})`]);
    await page.getByTestId('send-contact').selectOption(savings);
    expect(await page.getByTestId('send-to').inputValue()).toBe(savings);
    expect(await page.getByTestId('send-to-name').innerText()).toMatch(/^Savings\s*yours/);
    await page.getByTestId('send-amount').fill('1,000.5');
    await page.getByTestId('send-review').click();
    // Parsed exactly as typed: 1,000.5 is more than the 1,000 available.
    expect(await page.getByTestId('send-amount-error').innerText()).toBe(
      'Not enough funds: 1,000.5 XE asked, 1,000 XE available to send.',
    );
    await page.getByTestId('send-amount').fill('1,5');
    await page.getByTestId('send-review').click();
    expect(await page.getByTestId('send-amount-error').innerText()).toBe(
      '"1,5" is not an amount here: a point starts the decimals and a comma separates thousands. Did you mean 1.5?',
    );
    // Keyboard users land on the field to fix; the fix itself is one click.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
      'send-amount',
    );
    expect(await page.getByTestId('send-amount').getAttribute('aria-describedby')).toMatch(/amount-error/);
    await shot('05-send-amount-hint');
    await page.getByTestId('send-amount-fix').click();
    expect(await page.getByTestId('send-amount').inputValue()).toBe('1.5');
    await page.getByTestId('send-amount').fill('5');
    await page.getByTestId('send-memo').fill('to savings');
    await page.getByTestId('send-review').click();
    // An own account: no question about an unknown address.
    expect(await page.getByTestId('review-to-label').innerText()).toMatch(/^Savings/);
    expect(await page.getByTestId('send-unknown-recipient').count()).toBe(0);
    await shot('06-send-review-own');
    const held = await holdNext('/blocks/send');
    await page.getByTestId('send-confirm').click();
    await held.arrived;
    await page.getByTestId('send-running').waitFor();
    expect(await axeViolations(page), '07-send-running').toEqual([]);
    await shot('07-send-running');
    // Away and back while it runs: the form shows it still running, not an empty form.
    await openTab('overview');
    expect(await page.getByTestId('activity-row').first().getAttribute('data-state')).toBe('running');
    await openTab('send');
    await page.getByTestId('send-running').waitFor();
    expect(await page.getByTestId('send-form').count()).toBe(0);
    // Away to another page, and the node gets the send only then.
    await page.getByTestId('nav-explorer').click();
    await page.getByTestId('explorer-page').waitFor();
    held.release();
    const sent = await toastSaying('Sent 5 XE to Savings.');
    expect(await axeViolations(page), '08-send-toast-elsewhere').toEqual([]);
    await shot('08-send-toast-elsewhere');
    await sent.getByTestId('toast-link').click();
    await page.getByTestId('explorer-block').waitFor();
    expect(await page.getByTestId('explorer-block-summary').innerText()).toMatch(
      /^Main account\s*yours .* sent 5 XE to Savings\s*yours/,
    );
    await shot('09-explorer-sent-block');
    await page.getByTestId('nav-wallet').click();
    await openTab('send');
    // Back on Send: how it ended, until "Send another".
    expect(await page.getByTestId('send-success').innerText()).toMatch(/^Sent 5 XE to Savings/);
    await page.getByTestId('send-another').click();
    await page.getByTestId('send-form').waitFor();
  });

  it('a send that ends while its page is open shows there, with no toast', async () => {
    await page.getByTestId('send-to').fill(savings);
    await page.getByTestId('send-amount').fill('2');
    await page.getByTestId('send-review').click();
    await page.getByTestId('send-confirm').click();
    await page.getByTestId('send-success').waitFor();
    expect(await page.getByTestId('toast').filter({ hasText: 'Sent 2 XE' }).count()).toBe(0);
    await page.getByTestId('send-another').click();
  });

  it('asks before sending to an address the node has never seen; not again once it has', async () => {
    await page.getByTestId('send-to').fill(NEVER_SEEN);
    await page.getByTestId('send-amount').fill('1');
    await page.getByTestId('send-review').click();
    await page.getByTestId('send-unknown-recipient').waitFor();
    expect(await page.getByTestId('send-unknown-recipient').innerText()).toMatch(
      /This address has never been used\. No account has it and nothing has been sent to it yet\./,
    );
    expect(await page.getByTestId('send-confirm').isDisabled()).toBe(true);
    expect(await axeViolations(page), '10-send-unknown-recipient').toEqual([]);
    await shot('10-send-unknown-recipient');
    await page.getByTestId('send-unknown-ack').check();
    expect(await page.getByTestId('send-confirm').isEnabled()).toBe(true);
    await page.getByTestId('send-confirm').click();
    await page.getByTestId('send-success').waitFor();
    await page.getByTestId('send-another').click();
    // Now a send waits for it: the node has seen it.
    await page.getByTestId('send-to').fill(NEVER_SEEN);
    await page.getByTestId('send-amount').fill('1');
    await page.getByTestId('send-review').click();
    await page.getByTestId('send-review-card').waitFor();
    await page.waitForFunction(() => !document.querySelector('[data-testid="send-checking-recipient"]'));
    expect(await page.getByTestId('send-unknown-recipient').count()).toBe(0);
    expect(await page.getByTestId('send-confirm').isEnabled()).toBe(true);
    await page.getByTestId('send-edit').click();
  });

  it('a contact with a never-seen address is not questioned', async () => {
    const friend = 'f1'.repeat(32);
    await page.getByTestId('nav-contacts').click();
    await page.getByTestId('contact-name').fill('Friend');
    await page.getByTestId('contact-address').fill(friend);
    await page.getByTestId('contact-save').click();
    await page.getByTestId('nav-wallet').click();
    await openTab('send');
    await page.getByTestId('send-contact').selectOption(friend);
    await page.getByTestId('send-amount').fill('1');
    await page.getByTestId('send-review').click();
    expect(await page.getByTestId('review-to-label').innerText()).toMatch(/^Friend/);
    expect(await page.getByTestId('send-unknown-recipient').count()).toBe(0);
    expect(await page.getByTestId('send-confirm').isEnabled()).toBe(true);
    await page.getByTestId('send-edit').click();
  });

  it('pending shows my own account by name; a receive keeps running when I leave', async () => {
    await selectAccount(savings);
    await openTab('overview');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="pending-row"]').length === 2);
    for (const from of await page.getByTestId('pending-from').allInnerTexts()) {
      expect(from).toMatch(/^Main account\s*yours/);
    }
    expect(await axeViolations(page), '11-pending-own-names').toEqual([]);
    await shot('11-pending-own-names');
    const held = await holdNext('/blocks/receive');
    await page.getByTestId('receive-all').click();
    await held.arrived;
    await page.getByTestId('nav-contacts').click();
    held.release();
    // The second receive is submitted after the first: let it through as it comes.
    await toastSaying('Received 2 sends into Savings.');
    await shot('12-receive-toast-elsewhere');
    await closeToasts();
    await page.getByTestId('nav-wallet').click();
    await waitMicro('balance-total-XE', '7000000');
  });

  it('history names my own accounts and links each row to its block', async () => {
    await selectAccount(main);
    await openTab('history');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="history-row"]').length === 4);
    const rows = page.getByTestId('history-row');
    const savingsSends = rows.filter({ has: page.getByText('Savings') });
    expect(await savingsSends.count()).toBe(2);
    // What each block did, in plain words.
    expect(await savingsSends.first().locator('.badge.out').innerText()).toBe('sent');
    expect(await rows.nth(3).locator('.badge.in').innerText()).toBe('test funds');
    expect(await rows.nth(0).getByTestId('history-counterparty').getAttribute('data-kind')).toBe('unknown');
    expect(await savingsSends.first().getByTestId('history-counterparty').getAttribute('data-kind')).toBe(
      'own',
    );
    expect(await axeViolations(page), '13-history-names').toEqual([]);
    await shot('13-history-names');
    const hash = await savingsSends.first().getAttribute('data-hash');
    await savingsSends.first().getByTestId('history-block-link').click();
    await page.getByTestId('explorer-block').waitFor();
    expect(page.url()).toContain(`#/explorer/block/${hash}`);
    expect(await page.getByTestId('explorer-block-state').innerText()).toMatch(
      /^(confirmed|waiting for confirmation)$/,
    );
  });

  it('explorer: receive rows show their amount, own accounts by name, genesis at the network’s start', async () => {
    // The page's own address (appUrl also carries the connect link, which the session no longer needs).
    await page.goto(`${ui.appUrl.split('#')[0]}#/explorer/account/${savings}`);
    await page.getByTestId('explorer-account').waitFor();
    expect(await page.getByTestId('explorer-account').locator('h2').first().innerText()).toMatch(/^Savings/);
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="explorer-block-row"]').length === 2,
    );
    const amounts = page.getByTestId('explorer-block-amount').locator('[data-micro]');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="explorer-block-amount"] [data-micro]').length === 2,
    );
    expect((await amounts.evaluateAll((els) => els.map((e) => e.getAttribute('data-micro')))).sort()).toEqual(
      ['2000000', '5000000'],
    );
    expect(await axeViolations(page), '14-explorer-receive-amounts').toEqual([]);
    await shot('14-explorer-receive-amounts');
    await page.getByTestId('nav-explorer').click();
    await page.getByTestId('explorer-recent').waitFor();
    const genesis = page.getByTestId('explorer-block-row').filter({ hasText: 'genesis' });
    await genesis.waitFor();
    // Genesis says timestamp 0; the node tells when the network began, and the row says so.
    const genesisTime = await genesis.getByTestId('explorer-block-time').innerText();
    expect(genesisTime).toMatch(/\(the network’s start\)$/);
    expect(genesisTime).toContain(String(new Date().getFullYear()));
    expect(await page.getByTestId('explorer-recent').innerText()).not.toMatch(/1970/);
    const ownRow = page.getByTestId('explorer-block-row').filter({ hasText: 'Savings' }).first();
    expect(await ownRow.getByTestId('address-label').getAttribute('data-kind')).toBe('own');
    await shot('15-explorer-recent');
    // An own account found by its name.
    await page.getByTestId('explorer-query').fill('savings');
    await page.getByTestId('explorer-go').click();
    await page.getByTestId('explorer-account').waitFor();
    expect(page.url()).toContain(`#/explorer/account/${savings}`);
  });

  it('deleting a contact asks first, and Undo brings it back', async () => {
    await page.getByTestId('nav-contacts').click();
    await page.getByTestId('contact-row').first().waitFor();
    const before = await page.getByTestId('contact-row').count();
    await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).getByTestId('contact-delete').click();
    const dialog = page.getByTestId('contact-delete-dialog');
    await dialog.locator('h2').waitFor();
    expect(await dialog.locator('h2').innerText()).toBe('Delete Friend?');
    // Focus starts on Cancel: a stray Enter deletes nothing.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
      'contact-delete-dialog-cancel',
    );
    expect(await axeViolations(page), '16-contact-delete-confirm').toEqual([]);
    await shot('16-contact-delete-confirm');
    await page.keyboard.press('Escape');
    await dialog.locator('h2').waitFor({ state: 'detached' });
    expect(await page.getByTestId('contact-row').count()).toBe(before);
    await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).getByTestId('contact-delete').click();
    await page.getByTestId('contact-delete-dialog-ok').click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="contact-row"]').length === n,
      before - 1,
    );
    const deleted = await toastSaying('Deleted Friend from the address book.');
    await shot('17-contact-deleted-undo');
    await deleted.getByTestId('toast-action').click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="contact-row"]').length === n,
      before,
    );
    expect(await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).count()).toBe(1);
    await shot('18-contact-restored');
  });

  it('dark mode: the toast and the dialog use the dark palette', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).getByTestId('contact-delete').click();
    const bg = await page
      .getByTestId('contact-delete-dialog')
      .evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(bg).toBe('rgb(26, 29, 36)');
    await shot('19-dialog-dark', false);
    await page.getByTestId('contact-delete-dialog-ok').click();
    const deleted = await toastSaying('Deleted Friend from the address book.');
    expect(await deleted.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(26, 29, 36)');
    expect(await axeViolations(page), '19b-toast-dark').toEqual([]);
    await shot('19b-toast-dark', false);
    await deleted.getByTestId('toast-action').click();
    await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).waitFor();
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('a locked window shows no notice of what was sent or deleted', async () => {
    await page.getByTestId('contact-row').filter({ hasText: 'Friend' }).getByTestId('contact-delete').click();
    await page.getByTestId('contact-delete-dialog-ok').click();
    await toastSaying('Deleted Friend from the address book.');
    await page.getByTestId('lock-button').click();
    await page.getByTestId('unlock').waitFor();
    expect(await page.getByTestId('toaster').count()).toBe(0);
    await shot('23-locked-no-toast', false);
    await page.getByTestId('unlock-password').fill(PASSWORD);
    await page.getByTestId('unlock-submit').click();
    await page.getByTestId('contacts-page').waitFor();
  });

  it('no errors in the page or its console', () => {
    expect(errors).toEqual([]);
  });
});

describe('amounts in a German locale', () => {
  let de: BrowserContext;
  let p: Page;
  beforeAll(async () => {
    de = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'de-DE' });
    p = await de.newPage();
    p.setDefaultTimeout(15_000);
  });
  afterAll(() => de?.close());

  it('reads "1,5" and "1.000,5" the German way and says what to type for "1.5"', async () => {
    // The same wallet (it lives in the node) in a browser set to German.
    await p.goto(ui.appUrl);
    await p.getByTestId('unlock-password').fill(PASSWORD);
    await p.getByTestId('unlock-submit').click();
    await p.getByTestId('wallet-page').waitFor();
    await p.locator(`[data-testid="account-item"][data-address="${savings}"]`).click();
    await p.getByTestId('tab-send').click();
    expect(await p.getByTestId('send-amount').getAttribute('placeholder')).toBe('for example 1.250,5');
    await p.getByTestId('send-to').fill(main);
    await p.getByTestId('send-amount').fill('1.000,5');
    await p.getByTestId('send-review').click();
    expect(await p.getByTestId('send-amount-error').innerText()).toBe(
      'Not enough funds: 1.000,5 XE asked, 7 XE available to send.',
    );
    await p.getByTestId('send-amount').fill('1,5');
    await p.getByTestId('send-review').click();
    expect(await p.getByTestId('review-amount').getAttribute('data-micro')).toBe('1500000');
    expect(await p.getByTestId('review-amount').innerText()).toBe('1,5 XE');
    await p.screenshot({ path: join(SHOTS, 'friction-20-german-review.png'), fullPage: true });
    await p.getByTestId('send-edit').click();
    expect(await p.getByTestId('send-amount').inputValue()).toBe('1,5');
    await p.getByTestId('send-amount').fill('1.5');
    await p.getByTestId('send-review').click();
    expect(await p.getByTestId('send-amount-error').innerText()).toBe(
      '"1.5" is not an amount here: a comma starts the decimals and a point separates thousands. Did you mean 1,5?',
    );
    await p.screenshot({ path: join(SHOTS, 'friction-21-german-amount.png'), fullPage: true });
    // Amounts are shown the way they are typed: the genesis balance with German separators.
    await p.getByTestId('nav-explorer').click();
    const genesis = p.getByTestId('explorer-block-row').filter({ hasText: 'genesis' });
    await genesis.waitFor();
    expect(await genesis.locator('[data-micro="42000000000000"]').innerText()).toBe('42.000.000 XE');
    await p.screenshot({ path: join(SHOTS, 'friction-22-german-explorer.png'), fullPage: true });
  });
});
