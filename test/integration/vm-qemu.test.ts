import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VmError, type DriverReport, type VmHandle } from '../../node-core/vm/driver.ts';
import { findBinary, processesMentioning, sshAnswers } from '../../node-core/vm/host-tools.ts';
import { QemuDriver } from '../../node-core/vm/qemu-driver.ts';
import { ensureVmImage, findVmImage } from '../../node-core/vm/vm-image.ts';
import { createInChild, sshRun, writeSshKey, type SshKey } from '../helpers/vm-ssh.ts';

/**
 * The qemu driver with a real VM: the project's image (built here when missing, as `npm run vm:image`
 * does), the real KVM probe, the OpenSSH client logging in with the lease's key. On these machines
 * /dev/kvm cannot boot a stock kernel, so the driver falls back to emulation; set
 * LEDGER_VM_EXPECT_KVM=1 on a host where KVM works.
 */
const root = mkdtempSync(join(tmpdir(), 'vm-qemu-'));
let skip = '';
if (!findBinary('qemu-system-x86_64')) skip = 'qemu-system-x86_64 not installed';
else {
  try {
    await ensureVmImage({ onProgress: (m) => console.log(`vm-qemu: ${m}`) });
  } catch (e) {
    skip = `no VM image (${(e as Error).message})`;
  }
}
if (skip) console.warn(`vm-qemu tests skipped: ${skip}`);
const lease = 'c3'.repeat(32);
const expectKvm = process.env.LEDGER_VM_EXPECT_KVM === '1';

describe.skipIf(skip !== '')('qemu driver', () => {
  const vmRoot = join(root, 'Ledger Node Desktop', 'a-data-directory-with-a-long-name', 'vms');
  const driver = new QemuDriver({ rootDir: vmRoot });
  let report: DriverReport;
  let key: SshKey;
  let other: SshKey;
  let handle: VmHandle | undefined;

  beforeAll(async () => {
    key = writeSshKey(root, 'lease-key');
    other = writeSshKey(root, 'other-key');
    let t = performance.now();
    report = await driver.probe();
    console.log(`vm-qemu: probe ${(performance.now() - t).toFixed(0)} ms: ${report.detail}`);
    t = performance.now();
    // Created by another Node process that has exited since: as after a provider restart. Its folder
    // path is long, as under a real data directory: the agent socket is then reached through the
    // folder's descriptor (a socket path has at most 107 bytes).
    handle = await createInChild(
      fileURLToPath(new URL('../../node-core/vm/qemu-driver.ts', import.meta.url)),
      'QemuDriver',
      { rootDir: vmRoot },
      { lease, vcpus: 2, memoryMb: 384, diskGb: 3, accessPubKey: key.pubHex },
    );
    expect(Buffer.byteLength(join(handle.dir, 'agent.sock'))).toBeGreaterThan(107);
    console.log(
      `vm-qemu: create (in a child process) to SSH banner ${(performance.now() - t).toFixed(0)} ms`,
    );
  }, 240_000);

  afterAll(async () => {
    if (handle) await driver.destroy(handle).catch(() => {});
    // Nothing of this test may outlive it, whatever failed.
    for (const pid of processesMentioning(root)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('probed KVM for real and says which accelerator runs', () => {
    expect(report).toMatchObject({ driver: 'qemu', available: true, vmBoundary: true });
    if (expectKvm) {
      expect(report.accel).toBe('kvm');
    } else {
      // This machine's /dev/kvm is a paravirtual variant that cannot boot a stock kernel.
      expect(report.accel).toBe('tcg');
      expect(report.detail).toMatch(/software emulation \(TCG\), KVM unusable: /);
    }
  });

  it('keeps the built image while its inputs are unchanged', async () => {
    const before = findVmImage()!;
    const again = await ensureVmImage();
    expect(again).toEqual(before);
    expect(again.pvh).toBe(true); // Debian's xz bzImage yields the ELF kernel QEMU boots directly
  });

  it('says to build the image when there is none', async () => {
    const empty = mkdtempSync(join(root, 'no-image-'));
    const r = await new QemuDriver({ rootDir: root, imageDir: empty }).probe();
    expect(r).toMatchObject({ available: false, driver: 'qemu' });
    expect(r.detail).toMatch(/npm run vm:image/);
    const err = await new QemuDriver({ rootDir: root, imageDir: empty })
      .create({ lease: 'd4'.repeat(32), vcpus: 1, memoryMb: 256, diskGb: 0, accessPubKey: key.pubHex })
      .catch((e: unknown) => e);
    expect((err as VmError).code).toBe('driver_unavailable');
    expect(findVmImage(empty)).toBeUndefined();
  });

  it('lets root in with the lease key only, and the guest has the lease resources', async () => {
    const h = handle!;
    const r = await sshRun(
      h.sshPort,
      key.file,
      'id -u; nproc; grep MemTotal /proc/meminfo; cat /sys/block/vda/size; hostname; echo hi > /root/f',
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [uid, nproc, mem, sectors, host] = r.stdout.trim().split('\n');
    expect(uid).toBe('0');
    expect(host).toBe('ledger-vm');
    expect(Number(nproc)).toBe(Math.min(2, availableParallelism()));
    expect(h.vcpus).toBe(Number(nproc));
    const memKb = Number(/(\d+) kB/.exec(mem!)![1]);
    expect(memKb).toBeLessThanOrEqual(384 * 1024);
    expect(memKb).toBeGreaterThan(300 * 1024); // 384 MiB less the kernel's own reservations
    expect(Number(sectors) * 512).toBe(3 * 1024 ** 3);

    const refused = await sshRun(h.sshPort, other.file, 'true');
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/Permission denied/);
  }, 60_000);

  it('exec runs through the guest agent: exit code, stdout, stderr, output cap', async () => {
    const h = handle!;
    const r = await driver.exec(h, 'cat /root/f; echo oops >&2; exit 5', {
      timeoutMs: 20_000,
      maxOutputBytes: 4096,
    });
    expect(r).toEqual({ exit_code: 5, stdout: 'hi\n', stderr: 'oops\n', truncated: false });
    const big = await driver.exec(h, 'yes a | head -c 100000; echo e >&2', {
      timeoutMs: 20_000,
      maxOutputBytes: 1000,
    });
    expect(big.exit_code).toBe(0);
    expect(big.stdout.length).toBe(1000);
    expect(big.stderr).toBe('e\n');
    expect(big.truncated).toBe(true);
  }, 60_000);

  it('exec past its time-out throws exec_timeout, and the next exec still works', async () => {
    const h = handle!;
    const started = Date.now();
    const err = await driver
      .exec(h, 'sleep 30', { timeoutMs: 1500, maxOutputBytes: 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VmError);
    expect((err as VmError).code).toBe('exec_timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    const [a, b] = await Promise.all([
      driver.exec(h, 'echo one', { timeoutMs: 20_000, maxOutputBytes: 100 }),
      driver.exec(h, 'echo two', { timeoutMs: 20_000, maxOutputBytes: 100 }),
    ]);
    expect([a.stdout, b.stdout]).toEqual(['one\n', 'two\n']);
    // The guest killed the command it was timing.
    const left = await driver.exec(h, 'ps | grep -c "[s]leep 30" || true', {
      timeoutMs: 20_000,
      maxOutputBytes: 100,
    });
    expect(left.stdout.trim()).toBe('0');
  }, 60_000);

  it('a new driver instance finds the VM alive (provider restart); destroy removes everything', async () => {
    const h = handle!;
    const restarted = new QemuDriver({ rootDir: vmRoot });
    expect(await restarted.alive(h)).toBe(true);
    expect((await restarted.exec(h, 'echo again', { timeoutMs: 20_000, maxOutputBytes: 100 })).stdout).toBe(
      'again\n',
    );
    const sock = await restarted.connect(h);
    const banner = await new Promise<string>((r) => sock.once('data', (d: Buffer) => r(d.toString())));
    sock.destroy();
    expect(banner).toMatch(/^SSH-2\.0-dropbear/);
    expect(processesMentioning(h.dir)).toEqual([h.pid]);

    await restarted.destroy(h);
    expect(await restarted.alive(h)).toBe(false);
    expect(await driver.alive(h)).toBe(false);
    expect(existsSync(h.dir)).toBe(false);
    expect(processesMentioning(h.dir)).toEqual([]);
    expect(await sshAnswers(h.sshPort, 300)).toBe(false);
    await restarted.destroy(h); // idempotent
    const err = await driver
      .exec(h, 'true', { timeoutMs: 1000, maxOutputBytes: 10 })
      .catch((e: unknown) => e);
    expect((err as VmError).code).toBe('not_running');
    handle = undefined;
  }, 60_000);
});
