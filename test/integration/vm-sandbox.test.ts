import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VmError, type DriverReport, type VmHandle } from '../../node-core/vm/driver.ts';
import { processesInPidNs, processesMentioning, sshAnswers } from '../../node-core/vm/host-tools.ts';
import { SandboxDriver } from '../../node-core/vm/sandbox-driver.ts';
import { createInChild, sshRun, writeSshKey, type SshKey } from '../helpers/vm-ssh.ts';

/**
 * The sandbox driver with real processes: bubblewrap, dropbear, and the OpenSSH client logging in
 * with a key file written by opensshPrivateKey.
 */
const root = mkdtempSync(join(tmpdir(), 'vm-sandbox-'));
const probeReport: DriverReport = await new SandboxDriver({ rootDir: root }).probe();
if (!probeReport.available) console.warn(`vm-sandbox tests skipped: ${probeReport.detail}`);
const lease = 'a1'.repeat(32);

describe.skipIf(!probeReport.available)('sandbox driver', () => {
  const driver = new SandboxDriver({ rootDir: root });
  let key: SshKey;
  let other: SshKey;
  let handle: VmHandle;
  const handles: VmHandle[] = [];

  beforeAll(async () => {
    key = writeSshKey(root, 'lease-key');
    other = writeSshKey(root, 'other-key');
    const started = performance.now();
    // Created by another Node process that has exited since: as after a provider restart.
    handle = await createInChild(
      fileURLToPath(new URL('../../node-core/vm/sandbox-driver.ts', import.meta.url)),
      'SandboxDriver',
      { rootDir: root },
      { lease, vcpus: 1, memoryMb: 256, diskGb: 1, accessPubKey: key.pubHex },
    );
    handles.push(handle);
    console.log(`sandbox: create (in a child process) took ${(performance.now() - started).toFixed(0)} ms`);
  });

  afterAll(async () => {
    // Every process started here goes, even when a test failed half-way.
    for (const h of handles) await driver.destroy(h).catch(() => {});
    for (const pid of processesMentioning(root)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('reports no VM boundary', async () => {
    const r = await driver.probe();
    expect(r).toMatchObject({ driver: 'sandbox', available: true, vmBoundary: false });
    expect(r.detail).toMatch(/NO VM boundary/);
    expect(handle).toMatchObject({ lease, driver: 'sandbox', diskGb: 1, memoryMb: 256 });
    expect(handle.createdAt).toMatch(/^\d{19}$/);
    expect(handle.vcpus).toBe(Math.min(1, availableParallelism()));
  });

  it('lets root in with the lease key over real SSH, and runs inside the namespaces', async () => {
    const r = await sshRun(
      handle.sshPort,
      key.file,
      'id -u; hostname; echo $$; ls /etc; nproc; echo hi > /data/f',
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [uid, host, pid, ...rest] = r.stdout.trim().split('\n');
    expect(uid).toBe('0');
    expect(host).toBe('ledger-sandbox');
    // A pid namespace of its own: the shell's pid is small, not the host's.
    expect(Number(pid)).toBeLessThan(100);
    expect(rest).not.toContain('shadow');
    expect(rest.at(-1)).toBe(String(handle.vcpus)); // the CPU affinity mask
    expect(readFileSync(join(handle.dir, 'data/f'), 'utf8')).toBe('hi\n');
    // A login shell has no CAP_SYS_ADMIN (bit 21) or CAP_SYS_MODULE (16) to get out with.
    const caps = await sshRun(handle.sshPort, key.file, 'grep CapBnd /proc/self/status');
    const bnd = BigInt('0x' + caps.stdout.split(/\s+/)[1]!);
    expect(bnd & (1n << 21n)).toBe(0n);
    expect(bnd & (1n << 16n)).toBe(0n);
  });

  it('refuses any other key', async () => {
    const r = await sshRun(handle.sshPort, other.file, 'true');
    expect(r.code).toBe(255);
    expect(r.stderr).toMatch(/Permission denied/);
  });

  it('exec returns the exit code, stdout and stderr, and sees what SSH sessions wrote', async () => {
    const r = await driver.exec(handle, 'cat /data/f; echo err >&2; hostname; exit 7', {
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    });
    expect(r).toEqual({ exit_code: 7, stdout: 'hi\nledger-sandbox\n', stderr: 'err\n', truncated: false });
    const caps = await driver.exec(handle, 'grep CapBnd /proc/self/status; id -u', {
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    });
    // No CAP_SYS_ADMIN (bit 21) or CAP_SYS_MODULE (16) in the bounding set.
    const bnd = BigInt('0x' + caps.stdout.split(/\s+/)[1]!);
    expect(bnd & (1n << 21n)).toBe(0n);
    expect(bnd & (1n << 16n)).toBe(0n);
  });

  it('exec caps stdout and stderr each at maxOutputBytes', async () => {
    const r = await driver.exec(handle, 'yes a | head -c 100000; yes b | head -c 50 >&2', {
      timeoutMs: 5000,
      maxOutputBytes: 1000,
    });
    expect(r.exit_code).toBe(0);
    expect(r.stdout.length).toBe(1000);
    expect(r.stderr.length).toBe(50);
    expect(r.truncated).toBe(true);
  });

  it('exec past its time-out is killed and throws exec_timeout', async () => {
    const started = Date.now();
    const err = await driver
      .exec(handle, 'sleep 37; echo late', { timeoutMs: 400, maxOutputBytes: 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VmError);
    expect((err as VmError).code).toBe('exec_timeout');
    expect(Date.now() - started).toBeLessThan(3000);
    const left = await driver.exec(
      handle,
      'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " <"$f"; echo; done | grep -c "^sleep 37" || true',
      {
        timeoutMs: 5000,
        maxOutputBytes: 100,
      },
    );
    expect(left.stdout.trim()).toBe('0');
  });

  it('a new driver instance finds the VM alive (provider restart), and it is gone after destroy', async () => {
    const restarted = new SandboxDriver({ rootDir: root });
    expect(await restarted.alive(handle)).toBe(true);
    expect(
      (await restarted.exec(handle, 'echo again', { timeoutMs: 5000, maxOutputBytes: 100 })).stdout,
    ).toBe('again\n');
    const sock = await restarted.connect(handle);
    const banner = await new Promise<string>((r) => sock.once('data', (d: Buffer) => r(d.toString())));
    sock.destroy();
    expect(banner).toMatch(/^SSH-2\.0-dropbear/);

    const info = JSON.parse(readFileSync(join(handle.dir, 'info.json'), 'utf8')) as { 'child-pid': number };
    const pidNs = readlinkSync(`/proc/${info['child-pid']}/ns/pid`);
    expect(processesInPidNs(pidNs).length).toBeGreaterThanOrEqual(2); // bwrap's init and dropbear

    await restarted.destroy(handle);
    expect(await restarted.alive(handle)).toBe(false);
    expect(await driver.alive(handle)).toBe(false);
    expect(existsSync(handle.dir)).toBe(false);
    expect(processesInPidNs(pidNs)).toEqual([]);
    expect(processesMentioning(handle.dir)).toEqual([]);
    expect(await sshAnswers(handle.sshPort, 300)).toBe(false);
    await restarted.destroy(handle); // idempotent
    const err = await driver
      .exec(handle, 'true', { timeoutMs: 1000, maxOutputBytes: 10 })
      .catch((e: unknown) => e);
    expect((err as VmError).code).toBe('not_running');
  });

  it('an aborted launch fails and leaves nothing behind', async () => {
    const abortLease = 'f6'.repeat(32);
    const ac = new AbortController();
    ac.abort();
    const err = await driver
      .create(
        { lease: abortLease, vcpus: 1, memoryMb: 64, diskGb: 0, accessPubKey: key.pubHex },
        { signal: ac.signal },
      )
      .catch((e: unknown) => e);
    expect((err as VmError).code).toBe('launch_failed');
    expect(existsSync(join(root, abortLease))).toBe(false);
    expect(processesMentioning(join(root, abortLease))).toEqual([]);
  });

  it('refuses a bad spec and leaves nothing behind', async () => {
    const bad = 'b2'.repeat(32);
    const err = await driver
      .create({ lease: bad, vcpus: 1, memoryMb: 64, diskGb: 0, accessPubKey: 'zz' })
      .catch((e: unknown) => e);
    expect((err as VmError).code).toBe('launch_failed');
    expect(existsSync(join(root, bad))).toBe(false);
  });
});
