import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DevnetKeys } from '../node-core/genesis/genesis.ts';
import { cappedR, leaseCost, leaseEmission } from '../node-core/leasing/pricing.ts';
import { type Block, ZERO_HASH } from '../node-core/protocol/block.ts';
import { blockToJson } from '../node-core/protocol/block-json.ts';
import {
  certificateToJson,
  EMPTY_ATTESTATION_ROOT,
  signCertificate,
} from '../node-core/protocol/certificate.ts';
import { bytesToHex, hexToBytes } from '../node-core/protocol/hex.ts';
import { stringifyJson } from '../node-core/protocol/json.ts';
import { attestationPayload } from '../node-core/protocol/payloads.ts';
import { signBytesNode } from '../node-core/fastpath/ed25519.ts';
import { driveIngest } from './ingest-client.ts';
import { fmtRate, nowNs, ratio } from './measure.ts';
import { fastKey, type Key, seal } from './node.ts';

/**
 * Lease benchmark (issue #11): lease blocks validated per second, against plain sends in the same
 * run on the same node. One node in a child process (bench/lease-node.ts: a development network with
 * short lease windows, certificates added to its book); every block pre-built, signed and solved.
 *
 * Each lease block depends on earlier ones (an accept on its lease, a settle on its accept), so the
 * types go in phases, each timed alone, all over HTTP with the same clients:
 *   sends (the baseline) → lease (escrow) → lease_accept (attested start) → lease_settle (attested
 *   at expiry). Accept and settle carry one attestation by the devnet's timekeeper (the node's key),
 *   which the node checks (signature, trust, skew, lower median) on top of the block signature.
 */

const DIFFICULTY = 0xf000000000000000n;
const SECOND_NS = 1_000_000_000n;
const MINUTE_NS = 60n * SECOND_NS;
const TERMS = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 60n };
/** Epoch 0 of a development network (sys.oracle): the fallback rate, no cap, no TWAP. */
const LOCKED = { locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n };

interface Child {
  proc: ChildProcess;
  url: string;
  request<T>(msg: unknown): Promise<T>;
  stop(): Promise<void>;
}

function startLeaseNode(dataDir: string): Promise<Child> {
  const proc = fork(
    fileURLToPath(new URL('./lease-node.ts', import.meta.url)),
    [dataDir, DIFFICULTY.toString(16)],
    {
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    },
  );
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const next = <T>() => new Promise<T>((resolve) => proc.once('message', (m) => resolve(m as T)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`lease node did not start: ${err}`)), 60_000);
    proc.once('exit', (code) => reject(new Error(`lease node exited with ${code}: ${err}`)));
    void next<{ url: string }>().then(({ url }) => {
      clearTimeout(timer);
      resolve({
        proc,
        url,
        request: <T>(msg: unknown) => {
          const answer = next<T>();
          proc.send(msg as object);
          return answer;
        },
        stop: () =>
          new Promise<void>((res) => {
            if (proc.exitCode !== null) return res();
            proc.once('exit', () => res());
            proc.disconnect();
          }),
      });
    });
  });
}

/** An account's chain, built block by block (pre-built: nothing is submitted here). */
class Chain {
  readonly key: Key;
  private readonly networkId: string;
  private previous = ZERO_HASH;
  private t: bigint;
  readonly balances: Record<string, bigint> = {};
  constructor(key: Key, networkId: string, t0: bigint) {
    this.key = key;
    this.networkId = networkId;
    this.t = t0;
  }
  get address(): string {
    return this.key.address;
  }
  add(fields: Omit<Block, 'account' | 'previous' | 'timestamp' | 'balance'>, delta: bigint): Block {
    const balance = (this.balances[fields.asset] ?? 0n) + delta;
    const b = seal(
      {
        ...fields,
        balance,
        account: this.key.address,
        previous: this.previous,
        timestamp: this.t++,
        ...(this.previous === ZERO_HASH ? { pub_key: this.key.pub } : {}),
      } as Block,
      this.key,
      this.networkId,
      DIFFICULTY,
    );
    this.previous = b.hash!;
    this.balances[fields.asset] = balance;
    return b;
  }
}

const text = (b: Block) => stringifyJson(blockToJson(b));

/** Splits items round-robin into `n` streams (each account's blocks stay in order in one stream). */
function streamsOf<T>(n: number, items: T[][]): T[][] {
  const out: T[][] = Array.from({ length: n }, () => []);
  items.forEach((chain, i) => out[i % n]!.push(...chain));
  return out.filter((s) => s.length > 0);
}

export default async function benchLeasing(log: (line: string) => void): Promise<Record<string, number>> {
  const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
  /** Leases in all (one per consumer); providers = CLIENTS, each accepting and settling its share. */
  const LEASES = Number(process.env.BENCH_LEASES ?? 1600);
  /** Rounds the run is cut into, each type timed in every round (BENCH_LEASE_ROUNDS). */
  const ROUNDS = Number(process.env.BENCH_LEASE_ROUNDS ?? 4);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-lease-'));
  const node = await startLeaseNode(join(dir, 'node'));
  try {
    const keys = JSON.parse(readFileSync(join(dir, 'node', 'devnet-keys.json'), 'utf8')) as DevnetKeys;
    const networkId = keys.network_id;
    const tk = keys.timekeepers[0]!;
    const tkSeed = hexToBytes(tk.seed_hex);
    const attest = (subject: string, at: bigint) => ({
      public_key: tk.pub_key,
      timestamp: at,
      signature: bytesToHex(signBytesNode(attestationPayload(subject, at), tkSeed)),
    });
    const built = performance.now();
    const now = nowNs();
    const t0 = now - 10n * MINUTE_NS;
    // Providers, each with a certificate (price x1000) in the node's book.
    const providers = Array.from({ length: CLIENTS }, () => new Chain(fastKey(), networkId, t0));
    const certs = providers.map((p) =>
      signCertificate(
        {
          provider: p.address,
          provider_pub_key: p.key.pub,
          seed: 'ab'.repeat(32),
          workload_version: 3n,
          iterations: 375_000_000n,
          work_proof: 'cd'.repeat(32),
          score: 0.25,
          start_attestation_root: EMPTY_ATTESTATION_ROOT,
          end_attestation_root: EMPTY_ATTESTATION_ROOT,
          start_median: now - 60n * MINUTE_NS,
          end_median: now - 60n * MINUTE_NS,
          issued_at: now - 60n * MINUTE_NS,
          expires_at: now + 24n * 60n * MINUTE_NS,
          price_multiplier_milli: 1000n,
        },
        networkId,
        p.key.seed,
      ),
    );
    const { added } = await node.request<{ added: number }>({
      certificates: certs.map((c) => stringifyJson(certificateToJson(c))),
    });
    if (added !== certs.length) throw new Error(`only ${added} of ${certs.length} certificates added`);
    const cost = leaseCost(TERMS, 1000n);
    const emission = leaseEmission(cost, cappedR(LOCKED));

    // Setup (untimed): providers open; the minter funds every consumer with XUSD for one lease.
    const minter = new Chain(fastKey(hexToBytes(keys.minter.seed_hex)), networkId, t0);
    const minterChain = [
      minter.add({ type: 'mint', asset: 'XUSD', amount: cost * BigInt(LEASES) }, cost * BigInt(LEASES)),
    ];
    const providerOpen = providers.map((p) => [
      p.add({ type: 'claim', asset: 'XE', amount: 1_000_000n }, 1_000_000n),
    ]);
    const consumers = Array.from({ length: LEASES }, () => new Chain(fastKey(), networkId, t0));
    const consumerSetup: Block[][] = consumers.map((c) => {
      const send = minter.add({ type: 'send', asset: 'XUSD', destination: c.address, amount: cost }, -cost);
      minterChain.push(send);
      return [
        c.add({ type: 'claim', asset: 'XE', amount: 1_000_000n }, 1_000_000n),
        c.add({ type: 'receive', asset: 'XUSD', source: send.hash! }, cost),
      ];
    });
    // Rounds: each round has its own consumers and, per type, its own phase; a type's rate is its
    // blocks over the time of its phases in all rounds, so every type sees the same stretch of the
    // run (the machine is shared: a rate measured once, early or late, drifts with the load).
    const perRound = Math.ceil(LEASES / ROUNDS);
    // Accepts attested 5 minutes ago (inside the 10-minute skew), so the leases have expired by
    // now and each settle is attested one second after its lease's expiry (inside the 1-minute grace).
    const start = now - 5n * MINUTE_NS;
    const expiry = start + TERMS.duration * SECOND_NS;
    const TYPES = ['send', 'lease', 'lease_accept', 'lease_settle'] as const;
    type Kind = (typeof TYPES)[number];
    const rounds: Record<Kind, Block[][]>[] = [];
    for (let r = 0; r * perRound < LEASES; r++) {
      const group = consumers.slice(r * perRound, (r + 1) * perRound);
      // The baseline: a plain send of 1 micro-XE to a fresh address from each consumer.
      const sends = group.map((c) => [
        c.add({ type: 'send', asset: 'XE', destination: bytesToHex(randomBytes(32)), amount: 1n }, -1n),
      ]);
      // Consumer i leases from provider i mod CLIENTS.
      const leases = group.map((c, i) =>
        c.add(
          {
            type: 'lease',
            asset: 'XUSD',
            destination: providers[i % CLIENTS]!.address,
            amount: cost,
            ...TERMS,
            access_pub_key: 'ef'.repeat(32),
            certificate_hash: certs[i % CLIENTS]!.hash,
          },
          -cost,
        ),
      );
      const ofProvider = (p: number) => leases.filter((_l, i) => i % CLIENTS === p);
      const accepts = providers.map((p, i) =>
        ofProvider(i).map((l) =>
          p.add(
            {
              type: 'lease_accept',
              asset: 'XUSD',
              source: l.hash!,
              amount: 0n,
              attestations: [attest(l.hash!, start)],
              certificate_hash: l.certificate_hash!,
              ...LOCKED,
            },
            0n,
          ),
        ),
      );
      const settles = providers.map((p, i) =>
        ofProvider(i).map((l) =>
          p.add(
            {
              type: 'lease_settle',
              asset: 'XE',
              source: l.hash!,
              amount: emission,
              attestations: [attest(l.hash!, expiry + SECOND_NS)],
            },
            emission,
          ),
        ),
      );
      rounds.push({
        send: streamsOf(CLIENTS, sends),
        lease: streamsOf(
          CLIENTS,
          leases.map((l) => [l]),
        ),
        lease_accept: accepts.filter((x) => x.length > 0),
        lease_settle: settles.filter((x) => x.length > 0),
      });
    }
    const toText = (s: Block[][]) => s.map((x) => x.map(text));
    log(
      `leasing: pre-built ${LEASES} consumers' sends and leases, ${CLIENTS} providers' accepts and settles` +
        ` (${LEASES * 4} blocks, ${LEASES * 7 + CLIENTS + 1} with setup) in ${((performance.now() - built) / 1000).toFixed(1)} s`,
    );

    const setup = async (what: string, streams: Block[][]) => {
      const r = await driveIngest(node.url, toText(streams));
      if (r.failed)
        throw new Error(`leasing: setup (${what}) failed ${r.failed} blocks, first: ${r.firstError}`);
    };
    await setup('mint and sends', [minterChain]);
    await setup('opening claims', providerOpen);
    await setup('consumer claims and receives', streamsOf(CLIENTS, consumerSetup));

    const totals = Object.fromEntries(
      TYPES.map((k) => [k, { blocks: 0, seconds: 0, failed: 0, firstError: '' }]),
    ) as Record<Kind, { blocks: number; seconds: number; failed: number; firstError: string }>;
    for (const round of rounds) {
      for (const kind of TYPES) {
        // Every phase starts on a quiet node: the finality work of the one before is done.
        const { idle } = await node.request<{ idle: boolean }>({ idle: true });
        if (!idle) log('leasing: the node did not finalize everything within 60 s');
        const streams = toText(round[kind]);
        const blocks = streams.reduce((n, x) => n + x.length, 0);
        const r = await driveIngest(node.url, streams);
        const t = totals[kind];
        t.blocks += blocks;
        t.seconds += blocks / r.rate;
        t.failed += r.failed;
        t.firstError ||= r.firstError;
      }
    }
    const rate = (k: Kind) => totals[k].blocks / totals[k].seconds;
    const failed = (k: Kind) =>
      totals[k].failed ? `; ${totals[k].failed} FAILED, first: ${totals[k].firstError}` : '';
    const figures: Record<string, number> = {};
    const baseline = rate('send');
    figures.send_per_s = baseline;
    log(
      `baseline: plain send: ${totals.send.blocks} blocks in ${rounds.length} rounds, ${CLIENTS} clients: ${fmtRate(baseline)} blocks${failed('send')}`,
    );
    for (const kind of TYPES.slice(1)) {
      figures[`${kind}_per_s`] = rate(kind);
      figures[`${kind}_ratio`] = rate(kind) / baseline;
      if (totals[kind].failed) figures[`${kind}_failed`] = totals[kind].failed;
      log(
        `${kind}: ${totals[kind].blocks} blocks, ${kind === 'lease' ? CLIENTS : providers.length} clients:` +
          ` ${fmtRate(rate(kind))} blocks (${ratio(rate(kind), baseline)} of plain sends)${failed(kind)}`,
      );
    }
    if (totals.send.failed) figures.send_failed = totals.send.failed;
    return figures;
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
