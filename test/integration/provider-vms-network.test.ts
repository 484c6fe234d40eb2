import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { fundedAccount, SHORT_WINDOWS } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, tempDir, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P } from '../helpers/p2p.ts';
import { leaseFields, run, sshArgs, viaTunnel, writeKeyFile } from '../helpers/vm-lease.ts';

/**
 * Reaching a VM from anywhere on the network (issue #12; reference-behavior 1.6, 5.7): the consumer
 * asks its OWN node, which finds the provider in the directory and opens `/xe/tunnel/2.0.0` to it;
 * `GET /vms/{lease}` is relayed to the provider with `vm_status`. A real OpenSSH client logs in
 * through the consumer's node.
 */

type Json = Record<string, JsonValue>;

describe('VM access through the consumer’s own node', () => {
  let provider: TestNode;
  let own: TestNode;
  let kit: Kit;
  const keyDir = tempDir('vm-net-keys-');

  beforeAll(async () => {
    provider = await startTestNode({
      ...P2P,
      genesisSet: { ...SHORT_WINDOWS, lease_min_duration_secs: 5n },
      provide: { vcpus: 2n, memory_mb: 1024n, disk_gb: 2n, max_concurrent_leases: 0n },
      vm: { driver: 'sandbox', provider: { watchMs: 300, keepVmsOnStop: false } },
    });
    own = await startTestNode({
      ...P2P,
      genesisDir: join(provider.dataDir, 'genesis'),
      dial: [await listenAddr(provider)],
    });
    kit = await kitOf(provider);
  }, 60_000);

  afterAll(async () => {
    await own?.stop();
    await provider?.stop();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('relays VM status and tunnels a real ssh login over /xe/tunnel/2.0.0', async () => {
    const minter = new Account(kit, seedOf(provider.keys.minter.seed_hex));
    await minter.sync();
    const consumer = await fundedAccount(kit, minter);
    const cert = await waitFor(
      () => provider.node.certificates.newestValid(provider.node.nodeKey.address, nowNs()),
      20_000,
      'the provider certificate',
    );
    if (!cert) throw new Error('no certificate');
    const access = keyPairFromSeed(globalThis.crypto.getRandomValues(new Uint8Array(32)));
    const terms = { vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration: 300n };
    const lease = await consumer.commit(
      consumer.build(leaseFields(provider.node.nodeKey.address, cert, access, terms, consumer.bal('XUSD'))),
    );
    const hash = lease.hash!;
    // The consumer's node sees the accept by gossip and knows the provider's peer by the directory.
    await waitFor(
      async () =>
        ((await http(own.node.url, 'GET', `/leases/${hash}`)).body as Json | undefined)?.state === 'accepted',
      40_000,
      'the accept at the consumer node',
    );
    await waitFor(() => own.node.directory.lookup(provider.node.nodeKey.address), 20_000, 'the directory');

    expect((await http(own.node.url, 'GET', '/vms')).body).toEqual([]);
    const relayed = await http(own.node.url, 'GET', `/vms/${hash}`);
    expect(relayed.status).toBe(200);
    expect(relayed.body).toMatchObject({ lease_hash: hash, status: 'running', driver: 'sandbox' });
    expect((await http(own.node.url, 'GET', `/vms/${'cd'.repeat(32)}`)).status).toBe(404);

    const key = writeKeyFile(keyDir, access);
    const ssh = await run('ssh', sshArgs(key, viaTunnel(key, own.node.url, hash), 'echo remote-$((6*7))'), {
      timeout: 30_000,
    });
    expect(ssh.stdout.trim()).toBe('remote-42');
  }, 120_000);
});
