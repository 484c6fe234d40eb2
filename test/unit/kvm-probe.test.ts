import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INIT_MARKER } from '../../node-core/vm/guest-files.ts';
import { clearKvmProbeCache, probeKvm } from '../../node-core/vm/kvm-probe.ts';
import type { VmImage } from '../../node-core/vm/vm-image.ts';
import { tempDir, waitFor } from '../helpers/node.ts';

/**
 * The KVM probe's verdict is kept between starts (kvm-probe.ts): on a host whose KVM cannot boot a
 * stock kernel the probe holds a core for its whole timeout, so a node must not pay it at every
 * start. A stand-in qemu (a shell script that counts its runs) plays the guest here: whether a real
 * KVM boots is the host's business, what these tests check is when the probe runs again.
 */
describe('the KVM probe, verdict kept between starts (stand-in qemu script)', () => {
  let dir: string;
  let device: string;
  let runs: string;
  let image: VmImage;
  const fakeQemu = (name: string, body: string): string => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\necho run >> '${runs}'\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const runCount = (): number =>
    existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0;
  /** A node starting again: a new process has no answers in memory. */
  const restart = clearKvmProbeCache;

  beforeEach(() => {
    dir = tempDir('kvm-probe-');
    device = join(dir, 'kvm');
    writeFileSync(device, '');
    runs = join(dir, 'runs.txt');
    image = {
      key: 'image-a',
      kernel: join(dir, 'vmlinux'),
      pvh: true,
      initrd: join(dir, 'initrd'),
      kernelVersion: 'test',
      builtAt: 0,
    };
    restart();
  });
  afterEach(() => {
    restart();
    rmSync(dir, { recursive: true, force: true });
  });

  it('boots once; the next start reads the verdict without running qemu', async () => {
    const qemu = fakeQemu('qemu-ok', `echo '${INIT_MARKER}'; exec sleep 5`);
    const verdictFile = join(dir, 'kvm-probe.json');
    const first = await probeKvm(qemu, image, { device, verdictFile });
    expect(first.usable).toBe(true);
    expect(first.reason).toMatch(/reached init under KVM/);
    expect(runCount()).toBe(1);
    expect(JSON.parse(readFileSync(verdictFile, 'utf8'))).toMatchObject({ usable: true });

    restart();
    const second = await probeKvm(qemu, image, { device, verdictFile });
    expect(second.usable).toBe(true);
    expect(second.reason).toMatch(/reached init under KVM in \d+ ms \(probed .* UTC/);
    expect(runCount()).toBe(1);
  });

  it('keeps a timeout (the costly verdict) and probes again when qemu or the image changes', async () => {
    const qemu = fakeQemu('qemu-stuck', 'exec sleep 5');
    const verdictFile = join(dir, 'kvm-probe.json');
    const opts = { device, verdictFile, timeoutMs: 300 };
    const first = await probeKvm(qemu, image, opts);
    expect(first).toMatchObject({
      usable: false,
      reason: expect.stringMatching(/did not reach init within 300 ms/),
    });
    restart();
    expect((await probeKvm(qemu, image, opts)).usable).toBe(false);
    expect(runCount()).toBe(1);

    // Another image: probed again.
    restart();
    await probeKvm(qemu, { ...image, key: 'image-b' }, opts);
    expect(runCount()).toBe(2);

    // qemu replaced (now boots): probed again, and the new verdict is kept.
    restart();
    fakeQemu('qemu-stuck', `echo '${INIT_MARKER}'; exec sleep 5`);
    expect((await probeKvm(qemu, image, opts)).usable).toBe(true);
    expect(runCount()).toBe(3);
    restart();
    expect((await probeKvm(qemu, image, opts)).usable).toBe(true);
    expect(runCount()).toBe(3);
  });

  it('probes again over a damaged verdict file, and works where none can be written', async () => {
    const qemu = fakeQemu('qemu-ok', `echo '${INIT_MARKER}'; exec sleep 5`);
    const verdictFile = join(dir, 'kvm-probe.json');
    writeFileSync(verdictFile, '{"key": trunc');
    expect((await probeKvm(qemu, image, { device, verdictFile })).usable).toBe(true);
    expect(runCount()).toBe(1);
    expect(JSON.parse(readFileSync(verdictFile, 'utf8'))).toMatchObject({ usable: true });

    restart();
    const nowhere = join(dir, 'missing-folder', 'kvm-probe.json');
    expect((await probeKvm(qemu, image, { device, verdictFile: nowhere })).usable).toBe(true);
    expect(existsSync(nowhere)).toBe(false);
    expect(runCount()).toBe(2);
  });

  it('keeps nothing when qemu cannot be started, nor when the device is missing', async () => {
    const verdictFile = join(dir, 'kvm-probe.json');
    const missing = await probeKvm(join(dir, 'no-such-qemu'), image, { device, verdictFile });
    expect(missing).toMatchObject({ usable: false, reason: expect.stringMatching(/qemu could not start/) });
    expect(existsSync(verdictFile)).toBe(false);

    const qemu = fakeQemu('qemu-ok', `echo '${INIT_MARKER}'`);
    const noDevice = await probeKvm(qemu, image, { device: join(dir, 'no-kvm'), verdictFile });
    expect(noDevice).toMatchObject({
      usable: false,
      reason: expect.stringMatching(/missing or not accessible/),
    });
    expect(runCount()).toBe(0);
    expect(existsSync(verdictFile)).toBe(false);
  });
  /** Whether a process runs (a zombie left for its reaper does not). */
  const running = (pid: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };

  it.each(['exits', 'is killed with SIGKILL'])(
    "a probe's qemu does not outlive the process that started it, when that process %s",
    async (how) => {
      const pidFile = join(dir, 'qemu.pid');
      // A guest that never reaches init, as on this machine's KVM: it would spin until killed.
      const qemu = fakeQemu('qemu-stuck', `echo $$ > '${pidFile}'; exec sleep 60`);
      const probe = resolve('node-core/vm/kvm-probe.ts');
      const script = join(dir, 'probing.ts');
      writeFileSync(
        script,
        `import { probeKvm } from ${JSON.stringify(probe)};\n` +
          `void probeKvm(${JSON.stringify(qemu)}, ${JSON.stringify(image)}, { device: ${JSON.stringify(device)}, timeoutMs: 60_000 });\n` +
          `process.on('message', () => process.exit(0));\n`,
      );
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      const exited = new Promise((res) => child.once('exit', res));
      await waitFor(
        () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'),
        10_000,
        'the probe',
      );
      const pid = Number(readFileSync(pidFile, 'utf8'));
      expect(running(pid)).toBe(true);
      if (how === 'exits') child.send('exit');
      else child.kill('SIGKILL');
      await exited;
      await waitFor(() => !running(pid), 5000, 'the probe guest to be gone');
    },
  );
});
