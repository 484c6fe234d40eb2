import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chooseDriver } from '../../node-core/vm/choose-driver.ts';
import { findBinary } from '../../node-core/vm/host-tools.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * Which VM driver a provider gets (decisions D9, D16): the sandbox has no VM boundary, so it runs
 * only on a development network or when allowed explicitly; qemu without its image is unavailable
 * with a message that says how to build it.
 */
describe('choosing the VM driver', () => {
  it('refuses the sandbox on a network that is not a development network unless allowed', async () => {
    const dir = tempDir('choose-driver-');
    try {
      const refused = await chooseDriver('sandbox', { dataDir: dir, allowSandbox: false });
      expect(refused.driver).toBeUndefined();
      expect(refused.reason).toMatch(/no VM boundary/);
      if (!findBinary('bwrap')) {
        console.warn('vm-choose-driver: the allowed case is skipped: bubblewrap is not installed');
        return;
      }
      const allowed = await chooseDriver('sandbox', { dataDir: dir, allowSandbox: true });
      expect(allowed.driver?.name).toBe('sandbox');
      expect(allowed.report).toMatchObject({ available: true, vmBoundary: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says how to build the image when qemu has none, and auto falls back to the sandbox', async () => {
    const dir = tempDir('choose-driver-');
    try {
      const empty = tempDir('no-image-');
      const qemu = await chooseDriver('qemu', { dataDir: dir, imageDir: empty, allowSandbox: true });
      expect(qemu.driver).toBeUndefined();
      expect(qemu.reason).toMatch(/npm run vm:image|qemu-system-x86_64 missing/);
      const auto = await chooseDriver('auto', {
        dataDir: dir,
        imageDir: empty,
        allowSandbox: !!findBinary('bwrap'),
      });
      if (findBinary('bwrap')) expect(auto.driver?.name).toBe('sandbox');
      else expect(auto.driver).toBeUndefined();
      rmSync(empty, { recursive: true, force: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
