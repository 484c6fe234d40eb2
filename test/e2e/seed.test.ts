import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  pbkdf2Sync,
  randomBytes,
} from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, newKdfParams, seal, stringify } from '../../node-core/client/keystore-file.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { phraseToEntropy } from '../../node-core/protocol/mnemonic.ts';
import { Account, kitOf, XE } from '../helpers/ledger-kit.ts';
import { tempDir } from '../helpers/node.ts';
import { ensureRendererBuilt, launchChromium, ROOT, startUiNode, type UiNode } from './browser.ts';

/**
 * One seed, many accounts, end to end: the built renderer in Debian's Chromium against a real node.
 * A new wallet's 24 words (and their hex), the backup check of every word, "New account" at the next
 * index, Settings behind the password (the phrase again, hide, remove with its confirmation, bring
 * back by number, backup file out and in), and restores (a phrase with the used-account search, a
 * backup file at first run, an old hex seed). Addresses are recomputed here from the specifications
 * with node:crypto. Screenshots of each state go to test-artifacts/screenshots/seed-*.png.
 */
const SHOTS = join(ROOT, 'test-artifacts', 'screenshots');
const FILES = join(ROOT, 'test-artifacts', 'seed-files');
const PASSWORD = 'seed test password';

let ui: UiNode;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let words: string[] = [];
let backupPath = '';
const errors: string[] = [];

/** A screenshot, with `inView` (a test id) scrolled into view first: the page scrolls inside its main area. */
async function shot(step: string, inView?: string): Promise<void> {
  if (inView) await page.getByTestId(inView).scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, `seed-${step}.png`), fullPage: true });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations on the page as it is, in both themes (evaluated, as the app's CSP refuses inline scripts). */
async function axeViolations(): Promise<string[]> {
  const out: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    const found = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run(
              ctx: Document,
              o: object,
            ): Promise<{ violations: { id: string; help: string; nodes: { target: string[] }[] }[] }>;
          };
        }
      ).axe;
      return (await axe.run(document, { resultTypes: ['violations'] })).violations.map(
        (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(' | ')})`,
      );
    });
    out.push(...found.map((f) => `${scheme}: ${f}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return out;
}

/** Account `index` of a phrase, from BIP-39, SLIP-0010 and protocol.md section 2 by hand. */
function addressOf(phrase: readonly string[], index: number): string {
  const seed = pbkdf2Sync(phrase.join(' ').normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
  let I = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const step of [44, 22597, index]) {
    const ser = Buffer.alloc(4);
    ser.writeUInt32BE(step + 0x8000_0000);
    I = createHmac('sha512', I.subarray(32))
      .update(Buffer.concat([Buffer.from([0]), I.subarray(0, 32), ser]))
      .digest();
  }
  return addressOfSeed(I.subarray(0, 32));
}

function addressOfSeed(seed: Buffer): string {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const pub = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }))
    .export({ format: 'der', type: 'spki' })
    .subarray(-32);
  return createHash('sha256').update('xe/account/v1').update(pub).digest('hex');
}

/** The addresses in the wallet's account list, in order. */
async function walletAddresses(): Promise<string[]> {
  await page.getByTestId('nav-wallet').click();
  await page.getByTestId('wallet-page').waitFor();
  return page
    .getByTestId('account-item')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-address') ?? ''));
}

/** A paste of `text` into an input, as the browser fires it (clipboard data on a paste event). */
/**
 * The phrase with two neighbouring words swapped so that its checksum fails. A 24-word phrase has an
 * 8-bit checksum, so about one swap in 256 still passes it: swapping the first two words always made
 * this test fail then (the restore went on instead of saying "checksum does not match").
 */
function swapBreakingChecksum(words: string[]): string[] | undefined {
  for (let i = 0; i + 1 < words.length; i++) {
    if (words[i] === words[i + 1]) continue;
    const s = [...words];
    [s[i], s[i + 1]] = [s[i + 1]!, s[i]!];
    try {
      phraseToEntropy(s);
    } catch {
      return s;
    }
  }
  return undefined;
}

async function pasteInto(testId: string, text: string): Promise<void> {
  await page.getByTestId(testId).evaluate((el, t) => {
    const dt = new DataTransfer();
    dt.setData('text/plain', t);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  }, text);
}

async function openSecurity(): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('security-gate').waitFor();
  await page.getByTestId('security-password').fill(PASSWORD);
  await page.getByTestId('security-open').click();
  await page.getByTestId('security-open-section').waitFor();
}

/** Locks, then erases the keystore through "Forgot the password?", back to the first-run screen. */
async function eraseWallet(): Promise<void> {
  await page.getByTestId('lock-button').click();
  await page.getByTestId('unlock').waitFor();
  await page.getByText('Forgot the password?').click();
  await page.getByLabel('Type ERASE to confirm').fill('ERASE');
  await page.getByRole('button', { name: 'Erase the keystore' }).click();
  await page.getByTestId('onboarding').waitFor();
}

async function setPassword(): Promise<void> {
  await page.getByTestId('password-form').waitFor();
  await page.getByTestId('new-password').fill(PASSWORD);
  await page.getByTestId('confirm-password').fill(PASSWORD);
  await page.getByTestId('create-wallet').click();
  await page.getByTestId('wallet-page').waitFor();
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  mkdirSync(FILES, { recursive: true });
  await ensureRendererBuilt((l) => console.log(`e2e: ${l}`));
  browser = await launchChromium();
  ui = await startUiNode({ powDifficulty: 0x0fff000000000000n });
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
  });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await ui?.stop();
});

describe('one seed, many accounts in Chromium against a real node', () => {
  it('a new wallet: 24 numbered words, their hex, and a check of every word', async () => {
    await page.goto(ui.appUrl);
    await page.getByTestId('onboarding').waitFor();
    await shot('01-choose');
    await page.getByTestId('onboarding-create').click();
    await page.getByTestId('seed-backup').waitFor();
    words = [];
    for (let i = 1; i <= 24; i++) words.push(await page.getByTestId(`phrase-shown-${i}`).innerText());
    expect(words.every((w) => /^[a-z]{3,8}$/.test(w))).toBe(true);
    // A valid BIP-39 phrase (its checksum holds), and a fresh one: its words are not all the same.
    const entropy = bytesToHex(phraseToEntropy(words));
    expect(new Set(words).size).toBeGreaterThan(12);
    await shot('02-phrase');
    expect(await axeViolations(), '02-phrase').toEqual([]);
    await page.getByTestId('phrase-show-hex').check();
    expect(await page.getByTestId('phrase-hex').innerText()).toBe(entropy);
    await shot('03-phrase-hex');
    expect(await page.getByTestId('seed-continue').isDisabled()).toBe(true);
    await page.getByTestId('seed-written').check();
    await page.getByTestId('seed-continue').click();
    await page.getByTestId('seed-confirm').waitFor();
    // The phrase is no longer on the page.
    expect(await page.getByTestId('phrase-shown-1').count()).toBe(0);

    // Every word but two typed right: the first wrong one is named.
    for (let i = 1; i <= 24; i++) await page.getByTestId(`phrase-word-${i}`).fill(words[i - 1]!);
    const wrong = words[4] === 'zoo' ? 'abandon' : 'zoo';
    await page.getByTestId('phrase-word-5').fill(wrong);
    await page.getByTestId('phrase-word-20').fill('');
    await page.getByTestId('seed-confirm-submit').click();
    expect(await page.getByTestId('phrase-check-error').innerText()).toBe(
      `Word 5, "${wrong}", is not the word shown, and 1 more word is wrong: check them against what you wrote down.`,
    );
    expect(await page.getByTestId('phrase-word-5').getAttribute('aria-invalid')).toBe('true');
    await shot('04-check-wrong-word');
    expect(await axeViolations(), '04-check-wrong-word').toEqual([]);

    // Autocomplete from the word list: the start of the word, then Tab, gives the whole word.
    const w5 = words[4]!;
    await page.getByTestId('phrase-word-5').fill('');
    await page.getByTestId('phrase-word-5').pressSequentially(w5.slice(0, 4));
    const listId = await page.getByTestId('phrase-word-5').getAttribute('list');
    const options = await page
      .locator(`datalist[id="${listId}"] option`)
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options).toContain(w5);
    expect(options.every((o) => o.startsWith(w5.slice(0, 4)))).toBe(true);
    await page.getByTestId('phrase-word-5').press('Tab');
    expect(await page.getByTestId('phrase-word-5').inputValue()).toBe(w5);

    // The whole phrase pasted into the first box fills every box (a numbered list, as people copy it).
    for (let i = 1; i <= 24; i++) await page.getByTestId(`phrase-word-${i}`).fill('');
    await pasteInto('phrase-word-1', words.map((w, i) => `${i + 1}. ${w}`).join('\n'));
    for (let i = 1; i <= 24; i++)
      expect(await page.getByTestId(`phrase-word-${i}`).inputValue()).toBe(words[i - 1]);
    await shot('05-check-pasted');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('05-check-pasted-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByTestId('seed-confirm-submit').click();
    await setPassword();
    expect(await page.getByTestId('account-address').innerText()).toBe(addressOf(words, 0));
    await shot('06-wallet');
  });

  it('"New account" takes the next index of the same phrase', async () => {
    await page.getByTestId('add-account').click();
    await page.getByTestId('new-account').waitFor();
    expect(await page.getByTestId('new-account-index').innerText()).toMatch(
      /^Account 2 of your recovery phrase/,
    );
    await page.getByTestId('account-label').fill('Second');
    await shot('07-new-account');
    await page.getByTestId('add-account-save').click();
    await page.getByTestId('wallet-page').waitFor();
    await page.waitForFunction(
      (a) => document.querySelector('[data-testid="account-address"]')?.textContent === a,
      addressOf(words, 1),
    );
    expect(await walletAddresses()).toEqual([addressOf(words, 0), addressOf(words, 1)]);
    // Funds on account 2, for the removal's confirmation and the restore's search below.
    await page.locator(`[data-testid="account-item"][data-address="${addressOf(words, 1)}"]`).click();
    await page.getByTestId('claim-button').click();
    await page.getByTestId('claim-success').waitFor();
    await shot('08-second-account');
  });

  it('Settings asks for the password again, then shows the phrase again', async () => {
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('security-password').fill('not the password');
    await page.getByTestId('security-open').click();
    expect(await page.getByTestId('security-error').innerText()).toBe('Wrong password.');
    await shot('09-gate-wrong', 'security-error');
    expect(await axeViolations(), '09-gate-wrong').toEqual([]);
    await page.getByTestId('security-password').fill(PASSWORD);
    await page.getByTestId('security-open').click();
    await page.getByTestId('phrase-view').click();
    const again: string[] = [];
    for (let i = 1; i <= 24; i++) again.push(await page.getByTestId(`phrase-shown-${i}`).innerText());
    expect(again).toEqual(words);
    await shot('10-phrase-again', 'phrase-again');
    expect(await axeViolations(), 'the open wallet section').toEqual([]);
    await page.getByTestId('phrase-hide').click();
    expect(await page.getByTestId('phrase-shown-1').count()).toBe(0);
  });

  it('hides an account from the lists and shows it again', async () => {
    const second = page.locator(`[data-testid="security-account"][data-address="${addressOf(words, 1)}"]`);
    await second.getByTestId('account-hide').click();
    expect(await page.getByTestId('accounts-message').innerText()).toBe('“Second” is hidden from the lists.');
    await shot('11-hidden-in-settings', 'accounts-message');
    expect(await walletAddresses()).toEqual([addressOf(words, 0)]);
    await shot('12-hidden-wallet');
    await openSecurity();
    expect(await second.getAttribute('data-hidden')).toBe('true');
    await second.getByTestId('account-hide').click();
    expect(await walletAddresses()).toEqual([addressOf(words, 0), addressOf(words, 1)]);
  });

  it('removes an account after a confirmation naming it and its balance, and brings it back by number', async () => {
    await openSecurity();
    const second = page.locator(`[data-testid="security-account"][data-address="${addressOf(words, 1)}"]`);
    await page.waitForFunction(
      (a) =>
        document
          .querySelector(`[data-testid="security-account"][data-address="${a}"] [data-micro]`)
          ?.getAttribute('data-micro') === '1000000000',
      addressOf(words, 1),
    );
    await second.getByTestId('account-remove').click();
    const dialog = page.getByTestId('remove-dialog');
    await dialog.getByTestId('remove-balance').waitFor();
    expect(await dialog.locator('h2').innerText()).toBe('Remove “Second”?');
    expect(await dialog.innerText()).toContain(addressOf(words, 1));
    expect(await page.getByTestId('remove-balance').innerText()).toMatch(
      /^It holds 1,000 XE: the funds stay/,
    );
    expect(await page.getByTestId('remove-comeback').innerText()).toMatch(
      /account 2 of your recovery phrase/,
    );
    await shot('13-remove-confirm');
    expect(await axeViolations(), '13-remove-confirm').toEqual([]);
    // Cancel changes nothing; then remove for real.
    await page.getByTestId('remove-dialog-cancel').click();
    expect(await second.count()).toBe(1);
    await second.getByTestId('account-remove').click();
    await page.getByTestId('remove-dialog-ok').click();
    expect(await page.getByTestId('accounts-message').innerText()).toBe(
      '“Second” was removed from this wallet.',
    );
    expect(await second.count()).toBe(0);
    await page.getByTestId('account-restore-number').fill('2');
    await page.getByTestId('account-restore-submit').click();
    expect(await page.getByTestId('accounts-message').innerText()).toBe('Account 2 is back as “Account 2”.');
    await shot('14-brought-back', 'accounts-message');
    expect(await walletAddresses()).toEqual([addressOf(words, 0), addressOf(words, 1)]);
  });

  it('exports an encrypted backup file, and imports one (a wrong password and a wrong file say so)', async () => {
    await openSecurity();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('backup-export').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^ledger-wallet-backup-\d{4}-\d{2}-\d{2}\.json$/);
    backupPath = join(FILES, download.suggestedFilename());
    await download.saveAs(backupPath);
    const text = readFileSync(backupPath, 'utf8');
    expect(JSON.parse(text)).toMatchObject({
      type: 'ledger-node-keystore',
      version: 2,
      kdf: { name: 'scrypt' },
    });
    expect(text).not.toContain(words.join(' '));
    expect(text).not.toContain(bytesToHex(phraseToEntropy(words)));
    await shot('15-exported', 'backup-exported');

    // Another wallet's backup, made here with the shared file format: one imported account, another phrase.
    const otherSeed = Buffer.alloc(32, 0x5a);
    const otherWords = 'legal winner thank year wave sausage worth useful legal winner thank yellow'.split(
      ' ',
    );
    const kdf = newKdfParams({ N: 2 ** 14, r: 8, p: 1 });
    const key = await deriveKey('other password', kdf);
    const other = join(FILES, 'other-wallet.json');
    writeFileSync(
      other,
      stringify(
        seal(
          {
            phrase: { entropy: '7f'.repeat(16), nextIndex: 1 },
            accounts: [
              { kind: 'derived', index: 0, label: 'Theirs', created: 1 },
              { kind: 'imported', seed: otherSeed.toString('hex'), label: 'Old seed', created: 2 },
            ],
          },
          key,
          kdf,
        ),
      ),
    );
    await page.getByTestId('backup-file').setInputFiles(other);
    await page.getByTestId('backup-password').fill('wrong password');
    await page.getByTestId('backup-import-submit').click();
    expect(await page.getByTestId('backup-message').innerText()).toMatch(
      /^Wrong password for this backup file/,
    );
    await shot('16-import-wrong-password', 'backup-message');
    const notBackup = join(FILES, 'not-a-backup.json');
    writeFileSync(notBackup, '{"hello": "world"}\n');
    await page.getByTestId('backup-file').setInputFiles(notBackup);
    await page.getByTestId('backup-password').fill('other password');
    await page.getByTestId('backup-import-submit').click();
    expect(await page.getByTestId('backup-message').innerText()).toBe(
      'not-a-backup.json cannot be imported: This is not a Ledger Node keystore file (it has no keystore header).',
    );
    await shot('17-import-wrong-file', 'backup-message');
    await page.getByTestId('backup-file').setInputFiles(other);
    await page.getByTestId('backup-password').fill('other password');
    await page.getByTestId('backup-import-submit').click();
    expect(await page.getByTestId('backup-message').innerText()).toBe(
      'Added 2 accounts from the backup. 1 account comes from another recovery phrase and was added as an imported account.',
    );
    await shot('18-imported', 'backup-message');
    expect(await walletAddresses()).toEqual([
      addressOf(words, 0),
      addressOf(words, 1),
      addressOf(otherWords, 0),
      addressOfSeed(otherSeed),
    ]);
  });

  it('restores the phrase: a checksum error and an unknown word said so, then the used accounts found', async () => {
    // Account 4 used too, from outside the window: a gap of two between it and account 2.
    const kit = await kitOf(ui.node);
    const { accountSeed } = await import('../../node-core/protocol/hd-derivation.ts');
    const bip39 = pbkdf2Sync(words.join(' '), 'mnemonic', 2048, 64, 'sha512');
    await new Account(kit, accountSeed(new Uint8Array(bip39), 3)).claim(5n * XE);
    await eraseWallet();
    await page.getByTestId('onboarding-import').click();
    await page.getByTestId('seed-import').waitFor();
    // The phrase's hex form (what "Show as hex" showed) restores the same wallet.
    await page.getByTestId('import-mode-hex').check();
    await page.getByTestId('hex-kind-phrase').check();
    await page.getByTestId('import-seed-input').fill(bytesToHex(phraseToEntropy(words)).toUpperCase());
    await page.getByTestId('import-seed-submit').click();
    await page.getByTestId('scan-result').waitFor();
    expect(
      await page
        .getByTestId('scan-account')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-index'))),
    ).toEqual(['0', '1', '3']);
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByTestId('seed-import').waitFor();
    const swapped = swapBreakingChecksum(words);
    if (swapped) {
      await pasteInto('phrase-word-1', swapped.join(' '));
      await page.getByTestId('import-seed-submit').click();
      expect(await page.getByTestId('import-seed-error').innerText()).toMatch(/checksum does not match/);
      await shot('19-restore-checksum');
    }
    await pasteInto('phrase-word-1', words.join(' '));
    await page.getByTestId('phrase-word-3').fill('qwerty');
    await page.getByTestId('import-seed-submit').click();
    expect(await page.getByTestId('import-seed-error').innerText()).toBe(
      'Word 3, "qwerty", is not in the BIP-39 English word list.',
    );
    await shot('20-restore-unknown-word');
    expect(await axeViolations(), '20-restore-unknown-word').toEqual([]);
    await page.getByTestId('phrase-word-3').fill(words[2]!);
    await page.getByTestId('import-seed-submit').click();
    await page.getByTestId('scan-result').waitFor();
    expect(await page.getByTestId('scan-summary').innerText()).toBe(
      'Found 2 used accounts. The search stopped after 5 unused accounts in a row (accounts 5 to 9). “New account” adds the next one later.',
    );
    expect(
      await page
        .getByTestId('scan-account')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-index'))),
    ).toEqual(['0', '1', '3']);
    await shot('21-restore-found');
    expect(await axeViolations(), '21-restore-found').toEqual([]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('21-restore-found-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByTestId('scan-continue').click();
    await setPassword();
    expect(await walletAddresses()).toEqual([addressOf(words, 0), addressOf(words, 1), addressOf(words, 3)]);
    // The next new account is the one after the highest found.
    await page.getByTestId('add-account').click();
    expect(await page.getByTestId('new-account-index').innerText()).toMatch(/^Account 5 of/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await shot('22-restored-wallet');
  });

  it('restores from a backup file at first run (a wrong password said so)', async () => {
    await eraseWallet();
    await page.getByTestId('onboarding-backup').click();
    await page.getByTestId('restore-file').setInputFiles(backupPath);
    await page.getByTestId('restore-password').fill('not it');
    await page.getByTestId('restore-submit').click();
    expect(await page.getByTestId('restore-error').innerText()).toMatch(
      /^Wrong password for this backup file/,
    );
    await shot('23-restore-backup-wrong');
    await page.getByTestId('restore-password').fill(PASSWORD);
    await page.getByTestId('restore-submit').click();
    await page.getByTestId('wallet-page').waitFor();
    expect(await walletAddresses()).toEqual([addressOf(words, 0), addressOf(words, 1)]);
    await shot('24-restored-from-backup');
  });

  it('an old hex seed still imports, as one imported account', async () => {
    const seed = Buffer.alloc(32, 0x3c);
    await page.getByTestId('import-account').click();
    await page.getByTestId('import-seed-input').fill(seed.toString('hex').toUpperCase());
    await page.getByTestId('import-seed-submit').click();
    await page.getByTestId('account-label').fill('From hex');
    await page.getByTestId('add-account-save').click();
    await page.getByTestId('wallet-page').waitFor();
    expect((await walletAddresses()).at(-1)).toBe(addressOfSeed(seed));
    await openSecurity();
    const row = page.locator(`[data-testid="security-account"][data-address="${addressOfSeed(seed)}"]`);
    expect(await row.locator('td').nth(1).innerText()).toBe('imported seed');
    await row.getByTestId('account-remove').click();
    expect(await page.getByTestId('remove-comeback').innerText()).toMatch(
      /^It is an imported account: only its own seed or a backup/,
    );
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('25-remove-imported-dark');
    await page.getByTestId('remove-dialog-cancel').click();
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('the page logged no errors', () => {
    expect(errors).toEqual([]);
  });
});

describe('a wallet from before recovery phrases (vault version 1)', () => {
  it('opens with its account as an imported one; "New account" first makes the phrase, then takes its first account', async () => {
    const dir = tempDir('seed-v1-');
    const old = await startUiNode({ dataDir: dir, powDifficulty: 0x0fff000000000000n });
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    p.setDefaultTimeout(15_000);
    const oldErrors: string[] = [];
    p.on('pageerror', (e) => oldErrors.push(e.message));
    try {
      // The vault an earlier version left in this origin's storage: format version 1, one hex seed.
      const seed = Buffer.alloc(32, 0x4d);
      const kdf = newKdfParams({ N: 2 ** 14, r: 8, p: 1 });
      const key = await deriveKey(PASSWORD, kdf);
      const nonce = randomBytes(24);
      const aad = `ledger-desktop-vault/v1|xchacha20-poly1305|scrypt|${kdf.N}|${kdf.r}|${kdf.p}|${kdf.salt}`;
      const plain = JSON.stringify({
        accounts: [{ seed: seed.toString('hex'), label: 'Old account', created: 1 }],
      });
      const ct = xchacha20poly1305(key, nonce, Buffer.from(aad)).encrypt(Buffer.from(plain));
      const v1 = JSON.stringify({
        version: 1,
        kdf,
        cipher: 'xchacha20-poly1305',
        nonce: nonce.toString('hex'),
        ciphertext: Buffer.from(ct).toString('hex'),
      });
      await p.goto(`${old.node.node.url}/ui/`);
      await p.evaluate((v) => localStorage.setItem('ledger-desktop.vault.v1', v), v1);
      await p.goto(old.appUrl);
      await p.getByTestId('unlock-password').fill(PASSWORD);
      await p.getByTestId('unlock-submit').click();
      await p.getByTestId('wallet-page').waitFor();
      expect(await p.getByTestId('account-address').innerText()).toBe(addressOfSeed(seed));

      await p.getByTestId('nav-settings').click();
      await p.getByTestId('security-password').fill(PASSWORD);
      await p.getByTestId('security-open').click();
      expect(await p.getByTestId('phrase-none').innerText()).toMatch(/made before recovery phrases/);
      await p.getByTestId('phrase-none').scrollIntoViewIfNeeded();
      await p.screenshot({ path: join(SHOTS, 'seed-26-v1-settings.png'), fullPage: true });

      await p.getByTestId('nav-wallet').click();
      await p.getByTestId('add-account').click();
      expect(await p.getByTestId('phrase-first').innerText()).toMatch(
        /^This wallet was made before recovery phrases/,
      );
      await p.screenshot({ path: join(SHOTS, 'seed-27-v1-phrase-first.png'), fullPage: true });
      const phrase: string[] = [];
      for (let i = 1; i <= 24; i++) phrase.push(await p.getByTestId(`phrase-shown-${i}`).innerText());
      await p.getByTestId('seed-written').check();
      await p.getByTestId('seed-continue').click();
      for (let i = 1; i <= 24; i++) await p.getByTestId(`phrase-word-${i}`).fill(phrase[i - 1]!);
      await p.getByTestId('seed-confirm-submit').click();
      expect(await p.getByTestId('new-account-index').innerText()).toMatch(
        /^Account 1 of your recovery phrase/,
      );
      await p.getByTestId('account-label').fill('From the phrase');
      await p.getByTestId('add-account-save').click();
      await p.waitForFunction(
        (a) => document.querySelector('[data-testid="account-address"]')?.textContent === a,
        addressOf(phrase, 0),
      );
      expect(
        await p
          .getByTestId('account-item')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-address'))),
      ).toEqual([addressOfSeed(seed), addressOf(phrase, 0)]);
      // Stored again as version 2.
      expect(JSON.parse(old.node.node.appStore.get('vault')?.value as string)).toMatchObject({ version: 2 });
      await p.screenshot({ path: join(SHOTS, 'seed-28-v1-with-phrase.png'), fullPage: true });
      expect(oldErrors).toEqual([]);
    } finally {
      await ctx.close();
      await old.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
