import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed, type KeyPair } from '../../node-core/protocol/keys.ts';
import { signLeaseAccess } from '../../node-core/protocol/payloads.ts';
import { fundedAccount, SHORT_WINDOWS } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, tempDir, type TestNode, waitFor } from '../helpers/node.ts';
import { leaseFields, run, sshArgs, viaTunnel, writeKeyFile } from '../helpers/vm-lease.ts';

/**
 * The provider's automation on a real node with the sandbox VM driver (issue #12; reference-behavior
 * 4.8, 1.6; decisions D12, D16, D17): a lease addressed to the node is provisioned, accepted with
 * fresh attestations and served; exec and the tunnel admit only the lease's access key (both
 * signature forms); a real OpenSSH client logs in through the tunnel with the CLI as ProxyCommand;
 * the provider settles in the window and tears the VM down; a restart keeps a live lease's VM.
 */

type Json = Record<string, JsonValue>;

describe('provider VMs (sandbox driver)', () => {
  const dataDir = tempDir('provider-vms-');
  let t: TestNode;
  let kit: Kit;
  let minter: Account;
  let keyDir: string;

  // VMs outlive the node (a restart must find them); afterAll destroys them.
  const options = () => ({
    dataDir,
    genesisSet: { ...SHORT_WINDOWS, lease_min_duration_secs: 5n },
    provide: { vcpus: 2n, memory_mb: 1024n, disk_gb: 2n, max_concurrent_leases: 0n },
    vm: {
      driver: 'sandbox' as const,
      // A launch that fails beside the whole suite on two cores is tried again within the waits here.
      provider: {
        watchMs: 300,
        retryBaseMs: 1_000,
        retryMaxMs: 4_000,
        keepVmsOnStop: true,
        exec: { timeoutMs: 2_000, maxOutputBytes: 4096 },
      },
    },
  });

  /** A lease from a funded consumer to this node, for `access`, of `duration` seconds. */
  async function lease(consumer: Account, access: KeyPair, duration: bigint): Promise<Block> {
    const cert = await waitFor(
      () => t.node.certificates.newestValid(t.node.nodeKey.address, nowNs()),
      20_000,
      'the node certificate',
    );
    if (!cert) throw new Error('no certificate');
    const terms = { vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration };
    const block = consumer.build(
      leaseFields(t.node.nodeKey.address, cert, access, terms, consumer.bal('XUSD')),
    );
    await consumer.commit(block);
    return block;
  }

  const leaseState = async (hash: string) =>
    ((await http(kit.url, 'GET', `/leases/${hash}`)).body as Json).state;

  /** Waits for a lease to be accepted; on time-out, says what the provider's record of it holds. */
  async function accepted(hash: string, what: string): Promise<void> {
    try {
      await waitFor(async () => (await leaseState(hash)) === 'accepted', 30_000, what);
    } catch (e) {
      const r = t.node.provider?.vm(hash);
      throw new Error(`${(e as Error).message}; the provider's record: ${JSON.stringify(r ?? null)}`, {
        cause: e,
      });
    }
  }

  const exec = (hash: string, command: string, headers: Record<string, string>) =>
    http(kit.url, 'POST', `/vms/${hash}/exec`, { command }, headers);

  const signed = (hash: string, key: KeyPair, ts = nowNs()) => ({
    'x-signature': signLeaseAccess(hash, seedOf(key.seed_hex), ts),
    'x-timestamp': String(ts),
  });

  function accessKey(): KeyPair {
    return keyPairFromSeed(globalThis.crypto.getRandomValues(new Uint8Array(32)));
  }

  const keyFile = (key: KeyPair) => writeKeyFile(keyDir, key);

  beforeAll(async () => {
    keyDir = tempDir('provider-keys-');
    t = await startTestNode(options());
    kit = await kitOf(t);
    minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
  }, 60_000);

  afterAll(async () => {
    await t?.node.provider?.destroyAll();
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('provisions, accepts, serves exec and the tunnel to the access key only, settles and tears down', async () => {
    const consumer = await fundedAccount(kit, minter);
    const access = accessKey();
    const l = await lease(consumer, access, 12n);
    const hash = l.hash!;
    await accepted(hash, 'the accept');

    const vms = (await http(kit.url, 'GET', '/vms')).body as Json[];
    expect(vms).toHaveLength(1);
    expect(vms[0]).toMatchObject({
      lease: hash,
      status: 'running',
      driver: 'sandbox',
      vm_boundary: false,
      vcpus: 1,
      memory_mb: 256,
      disk_gb: 1,
    });
    const info = (await http(kit.url, 'GET', '/node')).body as Json;
    expect(info.provider).toMatchObject({ enabled: true, driver: 'sandbox', vm_boundary: false, vms: 1 });
    const one = (await http(kit.url, 'GET', `/vms/${hash}`)).body as Json;
    expect(one).toMatchObject({ lease_hash: hash, status: 'running', resources: { vcpus: 1 } });

    // exec with the replay-proof form, then the reference's form.
    const r = await exec(hash, 'echo out-$((6*7)); echo err >&2; exit 3', signed(hash, access));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ exit_code: 3, stdout: 'out-42\n', stderr: 'err\n' });
    const plain = await exec(hash, 'id -u', {
      'x-signature': signLeaseAccess(hash, seedOf(access.seed_hex)),
    });
    expect(plain.body).toMatchObject({ exit_code: 0, stdout: '0\n' });

    // Refusals: nothing runs without the access key's fresh signature.
    const stranger = accessKey();
    expect((await exec(hash, 'true', {})).status).toBe(401);
    expect((await exec(hash, 'true', signed(hash, stranger))).status).toBe(403);
    const stale = await exec(hash, 'true', signed(hash, access, nowNs() - 120_000_000_000n));
    expect(stale.status).toBe(403);
    expect((stale.body as Json).error).toMatch(/expired/);
    expect((await exec('ab'.repeat(32), 'true', signed('ab'.repeat(32), access))).status).toBe(404);
    expect((await exec(hash, '', signed(hash, access))).status).toBe(400);
    // The time-out (2 s here, 30 s by default) is a 408; each output is capped (4 KiB here, 1 MiB by default).
    const slow = await exec(hash, 'sleep 10', signed(hash, access));
    expect(slow.status).toBe(408);
    const big = await exec(hash, "head -c 10000 /dev/zero | tr '\\0' a", signed(hash, access));
    expect(big.status).toBe(200);
    expect(String((big.body as Json).stdout)).toBe('a'.repeat(4096));
    expect((big.body as Json).truncated).toBe(true);

    // A real OpenSSH client through the tunnel, with the CLI as its ProxyCommand.
    const key = keyFile(access);
    const ssh = await run(
      'ssh',
      sshArgs(key, viaTunnel(key, kit.url, hash), 'echo via-tunnel-$((6*7)) $(id -un)'),
      {
        timeout: 20_000,
      },
    );
    expect(ssh.stdout.trim()).toBe('via-tunnel-42 root');
    // Another key is refused by the VM itself, though the tunnel (signed by it) is not.
    const strangerKey = keyFile(stranger);
    const wrong = await run('ssh', sshArgs(strangerKey, viaTunnel(strangerKey, kit.url, hash), 'true'), {
      timeout: 20_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((wrong as { code: number }).code).not.toBe(0);
    expect((wrong as { stderr: string }).stderr).toMatch(/signature verification failed|403/);

    // After expiry the provider settles inside the window and the VM goes.
    await waitFor(async () => (await leaseState(hash)) === 'settled', 45_000, 'the settle');
    // The lease shows what the settle paid: all the XE the node account holds beyond its opening claim.
    const settledLease = (await http(kit.url, 'GET', `/leases/${hash}`)).body as Json;
    const held = (await http(kit.url, 'GET', `/accounts/${t.node.nodeKey.address}/balance`)).body as Json;
    expect(BigInt(settledLease.emission as string)).toBeGreaterThan(0n);
    expect(BigInt(held.XE as string)).toBe(1_000_000n + BigInt(settledLease.emission as string));
    await waitFor(
      async () => ((await http(kit.url, 'GET', `/vms/${hash}`)).body as Json).status === 'stopped',
      15_000,
      'the teardown',
    );
    expect((await exec(hash, 'true', signed(hash, access))).status).toBe(410);
  }, 120_000);

  it('keeps a live lease’s VM across a provider restart and serves it again', async () => {
    const consumer = await fundedAccount(kit, minter);
    const access = accessKey();
    const l = await lease(consumer, access, 600n);
    const hash = l.hash!;
    // A second lease that expires just after the restart: the restarted provider settles it.
    const soon = (await lease(consumer, access, 8n)).hash!;
    await accepted(hash, 'the accept');
    await accepted(soon, 'the second accept');
    const before = await exec(hash, 'echo $$ > /root/marker; cat /root/marker', signed(hash, access));
    expect(before.status).toBe(200);

    await t.node.stop();
    t = await startTestNode(options());
    kit = await kitOf(t);
    const after = await exec(hash, 'cat /root/marker', signed(hash, access));
    expect(after.status).toBe(200);
    // The same VM: the file written before the restart is still there.
    expect((after.body as Json).stdout).toBe((before.body as Json).stdout);
    const vms = (await http(kit.url, 'GET', '/vms')).body as Json[];
    expect(vms.find((v) => v.lease === hash)).toMatchObject({ status: 'running' });
    await waitFor(async () => (await leaseState(soon)) === 'settled', 45_000, 'the settle after the restart');
    await waitFor(
      async () => ((await http(kit.url, 'GET', `/vms/${soon}`)).body as Json).status === 'stopped',
      15_000,
      'the teardown after the restart',
    );
  }, 120_000);

  it('GET /vms is [] on a node that runs no VMs', async () => {
    const plain = await startTestNode();
    try {
      expect((await http(plain.node.url, 'GET', '/vms')).body).toEqual([]);
    } finally {
      await plain.stop();
    }
  });
});
