import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest's global set-up: every test run gets a temp folder of its own (TMPDIR, which the workers,
 * the nodes they spawn and Chromium inherit), removed when the run ends. Tests make hundreds of data
 * directories, token files and VM folders; a test that fails or is killed before its own clean-up
 * would otherwise leave them in /tmp for good.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'ledger-tests-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.LEDGER_KEEP_TEST_TMP === '1') {
      console.log(`test temp folder kept: ${root}`);
      return;
    }
    rmSync(root, { recursive: true, force: true });
  };
}
