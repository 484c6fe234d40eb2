import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaseRenewal } from '../../node-core/leasing/records.ts';
import { leaseCost } from '../../node-core/protocol/lease-cost.ts';
import { SHORT_WINDOWS } from '../helpers/lease-kit.ts';
import { Account, http, kitOf } from '../helpers/ledger-kit.ts';
import { seedOf, waitFor } from '../helpers/node.ts';
import {
  createWallet,
  ensureRendererBuilt,
  launchChromium,
  ROOT,
  startUiNode,
  type UiNode,
} from './browser.ts';

/**
 * Leasing end to end: the built renderer in Debian's Chromium against a real development node that
 * provides with the sandbox VM driver. A funded account leases a sandbox VM from the window (quote,
 * signed request, offers, confirm, access key, lease block), sees it accepted, opens its console and
 * reads a command's output on screen, renews it, and cancels a second lease the provider does not
 * accept (above its maximum duration). Screenshots of every state in test-artifacts/screenshots/.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const PASSWORD = 'correct horse battery';
const XUSD = 50_000_000n;

let ui: UiNode;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let user = '';
let leaseHash = '';
let multiplier = 0n;

const shot = (step: string) => page.screenshot({ path: join(SHOTS, `leasing-${step}.png`), fullPage: true });
const attr = (testId: string, name: string) => page.getByTestId(testId).first().getAttribute(name);
/**
 * How far below the top of its label each control starts: a field's name sits above it, as in the
 * app's other forms (beside it, the name and the box touched: 'vCPUs[1]', 'Memory (MB)[512]').
 */
const belowLabel = (testIds: string[]) =>
  page.evaluate(
    (ids) =>
      ids.map((id) => {
        const control = document.querySelector(`[data-testid="${id}"]`)!;
        return control.getBoundingClientRect().top - control.closest('label')!.getBoundingClientRect().top;
      }),
    testIds,
  );

async function openWallet(): Promise<void> {
  await page.goto(ui.appUrl);
  user = await createWallet(page, PASSWORD);
}

async function waitLeaseState(hash: string, state: string, ms = 30_000): Promise<void> {
  await page.waitForFunction(
    ([h, s]) =>
      document.querySelector(`[data-testid="lease-row"][data-hash="${h}"]`)?.getAttribute('data-state') === s,
    [hash, state] as const,
    { timeout: ms },
  );
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
  ui = await startUiNode({
    powDifficulty: 0x0fff000000000000n,
    genesisSet: { ...SHORT_WINDOWS, lease_min_duration_secs: 5n },
    provide: { vcpus: 2n, memory_mb: 1024n, disk_gb: 2n, max_concurrent_leases: 0n },
    // A lease over an hour is refused by this provider: it stays `created` and can be cancelled.
    vm: { driver: 'sandbox', policy: { maxDurationSecs: 3600n }, provider: { watchMs: 300 } },
  } as Parameters<typeof startUiNode>[0]);
  context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => console.error(`e2e page error: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await ui?.stop();
  await browser?.close();
});

describe('leasing in Chromium against a providing node (sandbox driver)', () => {
  it('funds a new account with XUSD from the devnet minter', async () => {
    await openWallet();
    const kit = await kitOf(ui.node);
    const minter = new Account(kit, seedOf(ui.node.keys.minter.seed_hex));
    await minter.sync();
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: XUSD, balance: minter.bal('XUSD') + XUSD }),
    );
    await minter.send(user, XUSD, 'XUSD');
    await page.getByTestId('tab-overview').click();
    await page.getByTestId('pending-row').waitFor({ timeout: 30_000 });
    await page.getByTestId('receive-all').click();
    await page.getByTestId('receive-success').waitFor({ timeout: 30_000 });
  }, 90_000);

  it('lists the node as a provider and quotes before signing', async () => {
    await page.getByTestId('nav-leasing').click();
    await page.getByTestId('leasing-page').waitFor();
    const nodeAddress = ui.node.node.nodeKey.address;
    await page
      .locator(`[data-testid="provider-row"][data-address="${nodeAddress}"]`)
      .waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      () => document.querySelector('[data-testid="provider-multiplier"]')?.getAttribute('data-milli'),
      null,
      {
        timeout: 30_000,
      },
    );
    multiplier = BigInt((await attr('provider-multiplier', 'data-milli'))!);
    await page.getByTestId('lease-vcpus').fill('1');
    await page.getByTestId('lease-memory').fill('256');
    await page.getByTestId('lease-disk').fill('1');
    await page.getByTestId('lease-duration').fill('2');
    await page.getByTestId('lease-unit').selectOption('min');
    await page.getByTestId('quote-ok').waitFor();
    const fields = ['lease-account', 'lease-vcpus', 'lease-memory', 'lease-disk', 'lease-duration'];
    for (const [i, below] of (await belowLabel(fields)).entries())
      expect(below, fields[i]).toBeGreaterThanOrEqual(14);
    const expected = leaseCost({ vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration: 120n }, multiplier);
    expect(await attr('quote-cost', 'data-micro')).toBe(expected.toString());
    expect(await attr('quote-spendable', 'data-micro')).toBe(XUSD.toString());
    await shot('01-quote');
    // Too big for the balance: refused before anything is signed.
    await page.getByTestId('lease-duration').fill('2000');
    await page.getByTestId('lease-unit').selectOption('h');
    await page.getByTestId('quote-shortfall').waitFor();
    expect(await page.getByTestId('lease-request').isDisabled()).toBe(true);
    await shot('02-quote-short');
    await page.getByTestId('lease-duration').fill('2');
    await page.getByTestId('lease-unit').selectOption('min');
  });

  it('leases a sandbox VM: offers, confirm, the lease block, accepted by the provider', async () => {
    await page.getByTestId('lease-request').click();
    await page.getByTestId('offer-row').first().waitFor({ timeout: 30_000 });
    const expected = leaseCost({ vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration: 120n }, multiplier);
    expect(await attr('offer-cost', 'data-micro')).toBe(expected.toString());
    await shot('03-offers');
    await page.getByTestId('offer-choose').first().click();
    await page.getByTestId('lease-confirm').waitFor();
    await shot('04-confirm');
    await page.getByTestId('lease-confirm-submit').click();
    await page.getByTestId('lease-submitted').waitFor({ timeout: 60_000 });
    leaseHash = (await attr('lease-submitted', 'data-hash'))!;
    expect(leaseHash).toMatch(/^[0-9a-f]{64}$/);
    // The node holds the lease with the access key the keystore made; the vault keeps it encrypted.
    const rec = (await http(ui.node.node.url, 'GET', `/leases/${leaseHash}`)).body as Record<string, unknown>;
    expect(rec.consumer).toBe(user);
    expect(rec.cost).toBe(expected.toString());
    expect(rec.access_pub_key).toMatch(/^[0-9a-f]{64}$/);
    const vault = ui.node.node.appStore.get('vault')?.value as string;
    expect(vault.length).toBeGreaterThan(100);
    expect(vault).not.toContain(rec.access_pub_key as string);
    await shot('05-submitted');
    await waitLeaseState(leaseHash, 'accepted', 60_000);
    await page
      .locator(`[data-testid="lease-row"][data-hash="${leaseHash}"] [data-testid="countdown"]`)
      .waitFor();
    await shot('06-accepted');
  }, 150_000);

  it('opens the console, runs a command and reads its output on screen', async () => {
    await page
      .locator(`[data-testid="lease-row"][data-hash="${leaseHash}"] [data-testid="lease-link"]`)
      .click();
    await page.getByTestId('lease-detail').waitFor();
    await shot('07-detail');
    await page.getByTestId('lease-tab-console').click();
    try {
      await page.waitForFunction(
        () =>
          document.querySelector('[data-testid="console-status"]')?.getAttribute('data-state') === 'ready',
        null,
        { timeout: 45_000 },
      );
    } catch (e) {
      await shot('08-console-failed');
      throw new Error(`console not ready: ${await page.getByTestId('console-status').innerText()}`, {
        cause: e,
      });
    }
    await page.getByTestId('terminal').click();
    await page.keyboard.type('echo hello-$((6*7))');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => (document.querySelector('.xterm-rows')?.textContent ?? '').includes('hello-42'),
      null,
      {
        timeout: 20_000,
      },
    );
    await shot('08-console');
    // Reconnect opens a fresh session.
    await page.getByTestId('console-reconnect').click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="console-status"]')?.getAttribute('data-state') === 'ready',
      null,
      { timeout: 45_000 },
    );
  }, 120_000);

  it('renews the lease at the provider’s current price', async () => {
    await page.getByTestId('lease-tab-renewals').click();
    await page.getByTestId('renew-duration').fill('1');
    await page.getByTestId('renew-unit').selectOption('min');
    const expected = leaseCost({ vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration: 60n }, multiplier);
    await page.getByTestId('renew-cost').waitFor();
    expect((await belowLabel(['renew-duration']))[0]).toBeGreaterThanOrEqual(14);
    expect(await attr('renew-cost', 'data-micro')).toBe(expected.toString());
    // The hold's sentence reads as one line of text: no gaps around the amount in brackets, and its
    // status names what is off.
    const holdText = await page.evaluate(
      () =>
        (document.querySelector('[data-testid="hold-toggle"]')!.closest('label') as HTMLElement).innerText,
    );
    expect(holdText).toMatch(/before it runs out \(\d+\.\d+ XUSD each time\)$/);
    expect(await page.getByTestId('hold-status').innerText()).toBe('Hold is off');
    await shot('09-renew-quote');
    await page.getByTestId('renew-button').click();
    await page.getByTestId('renew-done').waitFor({ timeout: 60_000 });
    await page.getByTestId('renewal-row').first().waitFor({ timeout: 20_000 });
    const rec = await waitFor(
      async () => {
        const r = (await http(ui.node.node.url, 'GET', `/leases/${leaseHash}`)).body as Record<
          string,
          unknown
        >;
        return (r.renewals as unknown[]).length === 1 ? r : undefined;
      },
      20_000,
      'the renewal on the node',
    );
    expect(BigInt(rec!.duration as number)).toBe(180n);
    await shot('10-renewed');
  }, 90_000);

  it('cancels a second lease the provider does not accept', async () => {
    await page.getByTestId('leasing-tab-consumer').click();
    await page.getByTestId('lease-duration').fill('2');
    await page.getByTestId('lease-unit').selectOption('h');
    await page.getByTestId('quote-ok').waitFor();
    await page.getByTestId('lease-request').click();
    await page.getByTestId('offer-choose').first().click({ timeout: 30_000 });
    await page.getByTestId('lease-confirm-submit').click();
    await page.getByTestId('lease-submitted').waitFor({ timeout: 60_000 });
    const second = (await attr('lease-submitted', 'data-hash'))!;
    expect(second).not.toBe(leaseHash);
    await waitLeaseState(second, 'created');
    await shot('11-second-created');
    await page.locator(`[data-testid="lease-row"][data-hash="${second}"] [data-testid="lease-link"]`).click();
    await page.getByTestId('cancel-button').waitFor();
    expect(await page.getByTestId('cancel-button').isDisabled()).toBe(false);
    await page.getByTestId('cancel-button').click();
    await page.getByTestId('lease-action-done').waitFor({ timeout: 60_000 });
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="lease-detail"]')?.getAttribute('data-state') === 'cancelled',
      null,
      { timeout: 30_000 },
    );
    expect(await page.getByTestId('cancel-button').isDisabled()).toBe(true);
    await shot('12-cancelled');
  }, 120_000);

  it('shows the provider side: the VM with no VM boundary, capacity, certificate', async () => {
    await page.getByTestId('nav-provider').click();
    await page.getByTestId('provider-section').waitFor();
    await page.getByTestId('vm-row').first().waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('vms').innerText()).toMatch(/no VM boundary/);
    expect(await attr('provider-certificate', 'data-valid')).toBe('true');
    // Each gauge is one line: its name, bar and figures level (the bar once wrapped under the name,
    // its figures running into the next gauge's name).
    const offsets = await page.evaluate(() =>
      [...document.querySelectorAll('[data-testid="meter"], [data-testid="benchmark"]')].map((row) => {
        const bar = row.querySelector('progress')!.getBoundingClientRect();
        const name = row.firstElementChild!.getBoundingClientRect();
        return Math.abs(bar.top + bar.height / 2 - (name.top + name.height / 2));
      }),
    );
    expect(offsets).toHaveLength(4);
    for (const off of offsets) expect(off).toBeLessThan(6);
    // The badge stands apart from the driver's name it follows.
    const badgeGap = await page.getByTestId('no-vm-boundary').evaluate((badge) => {
      const range = document.createRange();
      range.selectNodeContents(badge.parentElement!);
      range.setEndBefore(badge);
      return badge.getBoundingClientRect().left - range.getBoundingClientRect().right;
    });
    expect(badgeGap).toBeGreaterThanOrEqual(4);
    await shot('13-provider');
  });

  it('pages the renewals of a lease held for a long time, the latest first', async () => {
    // A settled lease of this account with 130 renewals, written into the node's store as the renew
    // rule leaves them (130 real renewals would take minutes of blocks): the window asks for pages.
    const R = 130;
    const hash = 'ab'.repeat(32);
    const renewal = (k: number): LeaseRenewal => ({
      renew_hash: k.toString(16).padStart(64, 'e'),
      duration: 60n,
      cost: 1_000n,
      start_time: 1_790_000_000_000_000_000n + BigInt(k + 1) * 60_000_000_000n,
      locked_r: 5n,
      locked_payout_cap: 9n,
      locked_twap_milli: 1_000n,
    });
    const t = ui.node.node;
    await t.store.transaction(() => {
      t.ledger.leases.put({
        lease_hash: hash,
        state: 'settled',
        consumer: user,
        provider: 'b'.repeat(64),
        vcpus: 1n,
        memory_mb: 256n,
        disk_gb: 1n,
        duration: 60n * BigInt(R + 1),
        cost: 1_000n * BigInt(R + 1),
        stake: 0n,
        start_time: 1_790_000_000_000_000_000n,
        settled: true,
        locked_r: 5n,
        locked_payout_cap: 9n,
        locked_twap_milli: 1_000n,
        renewal_count: R,
        renewed_cost: 1_000n * BigInt(R),
        renewal_emission: 0n,
        created_at: 1_789_999_999_000_000_000n,
      });
      for (let k = 0; k < R; k++) t.ledger.leases.putRenewal(hash, k, renewal(k));
    });
    // Within the open window (a reload would lock its keystore).
    await page.evaluate((h) => {
      window.location.hash = `#/leasing/lease/${h}/renewals`;
    }, hash);
    const range = page.getByTestId('renewals-range');
    await range.waitFor();
    expect(await range.innerText()).toBe('81-130 of 130');
    const rows = page.getByTestId('renewal-row');
    expect(await rows.count()).toBe(50);
    expect(await rows.last().innerText()).toContain(renewal(R - 1).renew_hash.slice(-8));
    await page.getByRole('button', { name: 'Earlier' }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="renewals-range"]')?.textContent === '31-80 of 130',
    );
    await page.getByRole('button', { name: 'Earlier' }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="renewals-range"]')?.textContent === '1-50 of 130',
    );
    expect(await page.getByRole('button', { name: 'Earlier' }).isDisabled()).toBe(true);
    expect(await rows.first().innerText()).toContain(renewal(0).renew_hash.slice(-8));
    await page.getByTestId('renewals-later').click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="renewals-range"]')?.textContent === '51-100 of 130',
    );
    await page.getByTestId('renewals-later').click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="renewals-range"]')?.textContent === '81-130 of 130',
    );
    expect(await page.getByTestId('renewals-later').isDisabled()).toBe(true);
    await shot('14-renewals-paged');
    await page.getByTestId('lease-tab-details').click();
    expect(await page.getByTestId('lease-duration-secs').innerText()).toContain('130 renewals');
  });
});
