import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Provider, type ProviderDeps } from '../../node-core/leasing/provider/provider.ts';
import { VmBook } from '../../node-core/leasing/provider/vm-book.ts';
import type { LeaseRecord } from '../../node-core/leasing/records.ts';
import { DEFAULT_LEASE_TIMING } from '../../node-core/leasing/timing.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';
import type { SignedBlock } from '../../node-core/protocol/block-sign.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { Store } from '../../node-core/store/store.ts';
import { SandboxDriver } from '../../node-core/vm/sandbox-driver.ts';
import { tempDir, waitFor } from '../helpers/node.ts';

/**
 * The provider's automation as a component (issue #12; LS-09, LS-17, policy, capacity): the real
 * sandbox driver and a real LMDB store, with the ledger side INJECTED (an in-memory lease list, an
 * attestation source and a block writer the test controls), so that failures the ledger would only
 * produce in rare races can be produced on demand.
 */

const ME = 'aa'.repeat(32);
const NOW = () => BigInt(Date.now()) * 1_000_000n;

function leaseOf(n: number, over: Partial<LeaseRecord> = {}): LeaseRecord {
  return {
    lease_hash: n.toString(16).padStart(64, '0'),
    state: 'created',
    consumer: 'bb'.repeat(32),
    provider: ME,
    vcpus: 1n,
    memory_mb: 128n,
    disk_gb: 1n,
    duration: 600n,
    access_pub_key: generateKeyPair().pub_key,
    cost: 1000n,
    stake: 0n,
    start_time: 0n,
    certificate_hash: 'cc'.repeat(32),
    settled: false,
    renewal_count: 0,
    renewed_cost: 0n,
    renewal_emission: 0n,
    created_at: NOW(),
    ...over,
  };
}

describe('provider automation (component, injected ledger)', () => {
  const dir = tempDir('provider-component-');
  let store: Store;
  let driver: SandboxDriver;
  const running: Provider[] = [];

  beforeAll(() => {
    store = Store.open({ path: join(dir, 'store.lmdb') });
    driver = new SandboxDriver({ rootDir: join(dir, 'vms') });
  });

  afterAll(async () => {
    for (const p of running) {
      await p.destroyAll();
      await p.stop();
    }
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function provider(
    leases: Map<string, LeaseRecord>,
    over: Partial<ProviderDeps>,
    opts: ConstructorParameters<typeof Provider>[1] = {},
  ): Promise<{ p: Provider; writes: SignedBlock[] }> {
    const writes: SignedBlock[] = [];
    const p = new Provider(
      {
        address: ME,
        capacity: { vcpus: 4n, memory_mb: 4096n, disk_gb: 10n, max_concurrent_leases: 0n },
        driver,
        report: await driver.probe(),
        book: new VmBook(store.vms, store.durablePut(store.vms)),
        leases: {
          get: (h) => leases.get(h),
          list: (f) => ({
            leases: [...leases.values()].filter((l) => l.provider === f.provider && l.state === f.state),
          }),
        },
        certificateValid: () => true,
        opened: () => true,
        open: async () => {},
        balance: () => 10n ** 12n,
        stakeFor: () => 0n,
        lockedParamsAt: () => ({ locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n }),
        attest: async (h): Promise<Attestation[]> => [
          { public_key: 'dd'.repeat(32), timestamp: NOW(), signature: h.slice(0, 2).repeat(64) },
        ],
        threshold: () => 1,
        write: async (draft) => {
          const b = { ...draft(() => 0n), hash: 'ee'.repeat(32) } as unknown as SignedBlock;
          writes.push(b);
          const l = leases.get(b.source!);
          if (l && b.type === 'lease_accept')
            leases.set(l.lease_hash, { ...l, state: 'accepted', start_time: NOW() });
          return b;
        },
        timing: () => DEFAULT_LEASE_TIMING,
        now: NOW,
        ...over,
      },
      { watchMs: 100, retryBaseMs: 200, retryMaxMs: 400, ...opts },
    );
    running.push(p);
    p.start();
    return { p, writes };
  }

  it('LS-17: a failed attempt tears its VM down and is retried while the lease is open, one VM at a time', async () => {
    const l = leaseOf(1);
    const leases = new Map([[l.lease_hash, l]]);
    let calls = 0;
    const { p, writes } = await provider(leases, {
      attest: async (h) => {
        calls += 1;
        // The first gathering finds no timekeeper; later ones do.
        return calls === 1
          ? []
          : [{ public_key: 'dd'.repeat(32), timestamp: NOW(), signature: h.slice(0, 2).repeat(64) }];
      },
    });
    await waitFor(() => p.vm(l.lease_hash)?.status === 'error', 10_000, 'the failed attempt');
    const failed = p.vm(l.lease_hash)!;
    expect(failed.error).toMatch(/0 of 1 timekeeper attestations/);
    expect(failed.handle).toBeUndefined();
    await waitFor(() => writes.some((w) => w.type === 'lease_accept'), 10_000, 'the retried accept');
    expect(p.vm(l.lease_hash)).toMatchObject({ status: 'running', attempts: 2 });
    expect(writes.filter((w) => w.type === 'lease_accept')).toHaveLength(1);
    expect(await driver.alive(p.vm(l.lease_hash)!.handle!)).toBe(true);
    await p.stop();
  }, 30_000);

  it('LS-09: a failed duplicate accept never tears down the VM its own standing accept holds', async () => {
    const l = leaseOf(2);
    const leases = new Map([[l.lease_hash, l]]);
    const { p } = await provider(leases, {
      write: async (draft) => {
        draft(() => 0n);
        // Our accept stands (a copy was committed meanwhile), yet this submission is refused.
        leases.set(l.lease_hash, { ...l, state: 'accepted', start_time: NOW() });
        throw new Error('lease already accepted');
      },
    });
    await waitFor(() => leases.get(l.lease_hash)!.state === 'accepted', 10_000, 'the accept');
    await new Promise((r) => setTimeout(r, 500));
    const r = p.vm(l.lease_hash)!;
    expect(r.status).toBe('running');
    expect(await driver.alive(r.handle!)).toBe(true);
    await p.stop();
  }, 30_000);

  it('leaves leases outside the policy alone, and tears a VM down once its lease is cancelled', async () => {
    const short = leaseOf(3, { duration: 60n });
    const ok = leaseOf(4);
    const leases = new Map([
      [short.lease_hash, short],
      [ok.lease_hash, ok],
    ]);
    const { p } = await provider(leases, {}, { policy: { minDurationSecs: 120n } });
    await waitFor(
      () => p.vm(ok.lease_hash)?.status === 'running',
      10_000,
      'the VM of the lease inside the policy',
    );
    // The VM runs before its accept is written: cancelled in between, the injected write (which,
    // unlike the ledger, takes an accept of any lease) would set the lease back to accepted and the
    // VM would rightly stay. A CI run on a loaded machine hit that window.
    await waitFor(() => leases.get(ok.lease_hash)!.state === 'accepted', 10_000, 'the accept');
    expect(p.vm(short.lease_hash)).toBeUndefined();
    const handle = p.vm(ok.lease_hash)!.handle!;
    leases.set(ok.lease_hash, { ...leases.get(ok.lease_hash)!, state: 'cancelled' });
    p.poke();
    await waitFor(() => p.vm(ok.lease_hash)?.status === 'stopped', 20_000, 'the teardown');
    expect(await driver.alive(handle)).toBe(false);
    expect(existsSync(handle.dir)).toBe(false);
    await p.stop();
  }, 30_000);

  it('keeps a VM whose health check fails now and then; starts one whose process is gone again', async () => {
    const l = leaseOf(7);
    const leases = new Map([[l.lease_hash, l]]);
    let failNext = 0;
    let checks = 0;
    // The real driver, with health checks that fail on demand (an SSH server slow under load).
    const flaky = new Proxy(driver, {
      get(target, key) {
        if (key === 'alive')
          return async (h: Parameters<SandboxDriver['alive']>[0]) => {
            checks += 1;
            if (failNext > 0) {
              failNext -= 1;
              return false;
            }
            return target.alive(h);
          };
        const v: unknown = Reflect.get(target, key, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const { p } = await provider(leases, { driver: flaky }, { healthEveryMs: 100, goneAfterChecks: 3 });
    await waitFor(() => leases.get(l.lease_hash)!.state === 'accepted', 10_000, 'the accept');
    await waitFor(() => p.vm(l.lease_hash)?.status === 'running', 10_000, 'the running VM');
    const first = p.vm(l.lease_hash)!.handle!;
    failNext = 2;
    const before = checks;
    await waitFor(
      () => failNext === 0 && checks >= before + 4,
      10_000,
      'two failed checks and two good ones',
    );
    expect(p.vm(l.lease_hash)!.handle!.pid).toBe(first.pid);
    expect(await driver.alive(first)).toBe(true);
    // Now the VM really goes (a host that rebooted): it is started again for the running lease.
    process.kill(-first.pid, 'SIGKILL');
    await waitFor(
      () => {
        const r = p.vm(l.lease_hash);
        return r?.status === 'running' && r.handle !== undefined && r.handle.pid !== first.pid;
      },
      20_000,
      'the VM started again',
    );
    expect(await driver.alive(p.vm(l.lease_hash)!.handle!)).toBe(true);
    await p.stop();
  }, 40_000);

  it('counts accepted leases against capacity: a lease that does not fit waits', async () => {
    const big = (n: number) => leaseOf(n, { vcpus: 3n });
    const a = big(5);
    const b = big(6);
    const leases = new Map([
      [a.lease_hash, a],
      [b.lease_hash, b],
    ]);
    const { p, writes } = await provider(leases, {});
    await waitFor(() => writes.filter((w) => w.type === 'lease_accept').length >= 1, 10_000, 'one accept');
    await new Promise((r) => setTimeout(r, 800));
    const accepted = writes.filter((w) => w.type === 'lease_accept');
    expect(accepted).toHaveLength(1);
    const waiting = accepted[0]!.source === a.lease_hash ? b : a;
    expect(p.vm(waiting.lease_hash)?.error ?? '').toMatch(/no capacity/);
    expect(p.vm(waiting.lease_hash)?.handle).toBeUndefined();
    await p.stop();
  }, 30_000);
});
