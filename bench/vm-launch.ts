/**
 * VM launch (decisions D16: "about 5 s from launch to SSH login under software emulation"): for each
 * driver that works on this host, the time from `create()` to the first `ssh ... true` that succeeds
 * with the lease's key, median of 5 launches, each VM destroyed before the next. Also the part of it
 * until create() resolved (the guest's SSH server answering) and one exec round trip.
 * `npm run bench -- vm`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyPairFromSeed, randomSeed } from '../node-core/protocol/keys.ts';
import { opensshPrivateKey } from '../node-core/protocol/ssh-key.ts';
import type { VmDriver } from '../node-core/vm/driver.ts';
import { QemuDriver } from '../node-core/vm/qemu-driver.ts';
import { SandboxDriver } from '../node-core/vm/sandbox-driver.ts';
import { ensureVmImage } from '../node-core/vm/vm-image.ts';
import { median } from './measure.ts';

const RUNS = 5;

function sshTrue(port: number, keyFile: string): boolean {
  const r = spawnSync(
    'ssh',
    [
      ...['-i', keyFile, '-p', String(port)],
      ...['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes'],
      ...['-o', 'IdentitiesOnly=yes', '-o', 'ConnectTimeout=10', '-o', 'LogLevel=ERROR'],
      'root@127.0.0.1',
      'true',
    ],
    { stdio: 'ignore', timeout: 30_000 },
  );
  return r.status === 0;
}

async function measure(
  driver: VmDriver,
  keyFile: string,
  pubHex: string,
  log: (l: string) => void,
): Promise<Record<string, number>> {
  const logins: number[] = [];
  const creates: number[] = [];
  const execs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const lease = (i + 1).toString(16).padStart(2, '0').repeat(32);
    const t0 = performance.now();
    const handle = await driver.create({ lease, vcpus: 2, memoryMb: 512, diskGb: 1, accessPubKey: pubHex });
    try {
      const created = performance.now() - t0;
      while (!sshTrue(handle.sshPort, keyFile)) {
        if (performance.now() - t0 > 120_000) throw new Error(`${driver.name}: no SSH login within 120 s`);
      }
      const login = performance.now() - t0;
      const e0 = performance.now();
      await driver.exec(handle, 'true', { timeoutMs: 30_000, maxOutputBytes: 1024 });
      execs.push(performance.now() - e0);
      creates.push(created);
      logins.push(login);
      log(`  ${driver.name} #${i + 1}: SSH server up ${created.toFixed(0)} ms, login ${login.toFixed(0)} ms`);
    } finally {
      await driver.destroy(handle);
    }
  }
  log(
    `${driver.name}: launch to SSH login median ${median(logins).toFixed(0)} ms of ${RUNS} ` +
      `(SSH server up ${median(creates).toFixed(0)} ms; exec round trip ${median(execs).toFixed(0)} ms)`,
  );
  return {
    [`${driver.name}_launch_to_login_ms`]: median(logins),
    [`${driver.name}_launch_to_sshd_ms`]: median(creates),
    [`${driver.name}_exec_ms`]: median(execs),
  };
}

export default async function vmLaunch(log: (line: string) => void): Promise<Record<string, number>> {
  const root = mkdtempSync(join(tmpdir(), 'bench-vm-'));
  const seed = randomSeed();
  const pair = keyPairFromSeed(seed);
  const keyFile = join(root, 'key');
  writeFileSync(keyFile, opensshPrivateKey(seed, pair.pub_key, 'bench'), { mode: 0o600 });
  const figures: Record<string, number> = {};
  try {
    const sandbox = new SandboxDriver({ rootDir: join(root, 'sandbox') });
    const sr = await sandbox.probe();
    log(`sandbox: ${sr.detail}`);
    if (sr.available) Object.assign(figures, await measure(sandbox, keyFile, pair.pub_key, log));

    try {
      await ensureVmImage({ onProgress: (m) => log(m) });
    } catch (e) {
      log(`qemu: no image (${(e as Error).message})`);
    }
    const qemu = new QemuDriver({ rootDir: join(root, 'qemu') });
    const p0 = performance.now();
    const qr = await qemu.probe();
    log(`qemu: ${qr.detail} (probe ${(performance.now() - p0).toFixed(0)} ms)`);
    if (qr.available) Object.assign(figures, await measure(qemu, keyFile, pair.pub_key, log));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}
