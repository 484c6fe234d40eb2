import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { signLeaseAccess } from '../../node-core/protocol/payloads.ts';
import { findBinary } from '../../node-core/vm/host-tools.ts';
import { ensureVmImage } from '../../node-core/vm/vm-image.ts';
import { fundedAccount, SHORT_WINDOWS } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { leaseFields } from '../helpers/vm-lease.ts';

/**
 * A provider running a real VM per lease (issue #12, decisions D16): the qemu driver (software
 * emulation on these machines, whose /dev/kvm cannot boot a stock kernel) serves a lease end to
 * end on a node: provisioned, accepted, its resources visible inside the guest through exec.
 */

let skip = '';
if (!findBinary('qemu-system-x86_64')) skip = 'qemu-system-x86_64 not installed';
else {
  try {
    await ensureVmImage();
  } catch (e) {
    skip = `no VM image (${(e as Error).message})`;
  }
}
if (skip) console.warn(`provider-qemu tests skipped: ${skip}`);

type Json = Record<string, JsonValue>;

describe.skipIf(skip !== '')('provider with the qemu driver', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode({
      genesisSet: { ...SHORT_WINDOWS, lease_min_duration_secs: 5n },
      provide: { vcpus: 2n, memory_mb: 1024n, disk_gb: 4n, max_concurrent_leases: 0n },
      vm: { driver: 'qemu', provider: { watchMs: 300, keepVmsOnStop: false } },
    });
    kit = await kitOf(t);
  }, 60_000);

  afterAll(async () => {
    await t?.node.provider?.destroyAll();
    await t?.stop();
  });

  it('boots a VM for a lease, accepts it, and the guest has what the lease asked for', async () => {
    const info = (await http(kit.url, 'GET', '/node')).body as Json;
    expect(info.provider).toMatchObject({ enabled: true, driver: 'qemu', vm_boundary: true });
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const consumer = await fundedAccount(kit, minter);
    const cert = await waitFor(
      () => t.node.certificates.newestValid(t.node.nodeKey.address, nowNs()),
      20_000,
      'the certificate',
    );
    if (!cert) throw new Error('no certificate');
    const access = keyPairFromSeed(globalThis.crypto.getRandomValues(new Uint8Array(32)));
    const terms = { vcpus: 2n, memory_mb: 512n, disk_gb: 2n, duration: 600n };
    const lease = await consumer.commit(
      consumer.build(leaseFields(t.node.nodeKey.address, cert, access, terms, consumer.bal('XUSD'))),
    );
    const hash = lease.hash!;
    await waitFor(
      async () => ((await http(kit.url, 'GET', `/leases/${hash}`)).body as Json).state === 'accepted',
      90_000,
      'the accept',
    );
    expect(((await http(kit.url, 'GET', `/vms/${hash}`)).body as Json).status).toBe('running');
    const ts = nowNs();
    const r = await http(
      kit.url,
      'POST',
      `/vms/${hash}/exec`,
      { command: "nproc; awk '/MemTotal/ {print $2}' /proc/meminfo; cat /sys/block/vda/size" },
      { 'x-signature': signLeaseAccess(hash, seedOf(access.seed_hex), ts), 'x-timestamp': String(ts) },
    );
    expect(r.status).toBe(200);
    const [cpus, memKb, sectors] = String((r.body as Json).stdout)
      .trim()
      .split('\n')
      .map(Number);
    expect(cpus).toBe(2);
    expect(memKb).toBeGreaterThan(400_000); // 512 MiB less what the kernel keeps
    expect(memKb).toBeLessThanOrEqual(512 * 1024);
    expect(sectors! * 512).toBe(2 * 1024 ** 3); // the data disk of disk_gb
  }, 150_000);
});
