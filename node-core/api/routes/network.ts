import type { LedgerNode } from '../../node.ts';
import { formatDifficulty } from '../../protocol/pow.ts';
import { computeSupply, type SupplyReport } from '../../ledger/supply.ts';
import type { Conflict, ResolvedConflict } from '../../ledger/conflict-book.ts';
import type { PendingEntry } from '../../ledger/reads.ts';
import { hasQuorum, weightOf } from '../../consensus/weights.ts';
import { NETCHECK_VERSION, NODE_FEATURES } from '../../net/netcheck.ts';
import { type Capabilities, repReadiness } from '../../net/rep-readiness.ts';
import { networkStartedAt } from '../../ledger/network-start.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type RouteDef } from '../route-table.ts';
import { addressParams, balanceMap, hex64, lower, page, type Page, paged, pageQuery } from './common.ts';

/** The contract's Node and network table (node form). */

const PROTOCOL_VERSION = '1.0.0';
const KNOWN_FEATURES = NODE_FEATURES;
const SUPPLY_CACHE_MS = 2000;
const FINALITY_STALL_S = 90;
/** `synced` needs a sync round that succeeded within this long (reference-behavior.md 1.2). */
const SYNC_FRESH_S = 180;

/** Amounts as digit strings (decisions D3), counts as integers. */
function supplyJson(r: SupplyReport) {
  const assets: Record<string, Record<string, unknown>> = {};
  for (const [asset, a] of Object.entries(r.assets)) {
    assets[asset] = Object.fromEntries(
      Object.entries(a).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]),
    );
  }
  return {
    genesis_supply: r.genesis_supply.toString(),
    assets,
    accounts: r.accounts,
    blocks: r.blocks,
    pending: r.pending,
    conserved: r.conserved,
    notes: [],
    stable: r.stable,
    attempts: r.attempts,
    computed_at: r.computed_at,
    duration_ms: r.duration_ms,
  };
}

/**
 * A pending send: the contract's fields, plus `source` (the send's hash, the name a receive block
 * gives it) and `destination`, which clients of the protocol read (issue #14; additive).
 */
function pendingJson(p: PendingEntry) {
  return {
    hash: p.hash,
    from: p.from,
    amount: p.amount.toString(),
    asset: p.asset,
    timestamp: p.timestamp,
    source: p.hash,
    destination: p.destination,
  };
}

export function networkRoutes(node: LedgerNode): RouteDef[] {
  /**
   * A conflict as the contract shows it: candidates with their votes and weight so far; a settled
   * one (kept an hour) is `resolved` with its winner (null: the position itself was undone).
   */
  const conflictJson = (c: Conflict | ResolvedConflict) => {
    const w = node.consensus.weights();
    return {
      account: c.account,
      previous: c.previous,
      blocks: [...c.candidates].map((hash) => {
        // A settled one shows the votes that decided it (kept when it settled).
        const kept = 'tally' in c ? c.tally?.get(hash) : undefined;
        if (kept) return { hash, votes: kept.votes, weight: kept.weight.toString() };
        const voters = node.consensus.votersFor(hash, c);
        const weight = weightOf(voters, w);
        return { hash, votes: voters.length, weight: weight.toString() };
      }),
      detected_at: c.detected_at,
      ...('resolved_at' in c
        ? { status: 'resolved', winner: c.winner, resolved_at: c.resolved_at }
        : { status: 'voting' }),
    };
  };
  /** Open conflicts first, then those settled in the last hour. */
  const allConflicts = () => [...node.ledger.listConflicts(), ...node.ledger.listResolvedConflicts()];

  let supplyCache: { at: number; body: ReturnType<typeof supplyJson> } | undefined;

  /** Sync progress; a node without peers has nothing to catch up on. */
  const syncProgress = () =>
    node.syncer?.progress ?? { state: 'idle', blocks_known: 0, blocks_left: 0, estimate_seconds: null };

  const readiness = () => {
    const w = node.consensus.weights();
    const unfinalized = node.ledger.unfinalizedCount();
    const stats = node.consensus.stats;
    const local = w.weight(node.nodeKey.address);
    // Representatives heard from in the last 10 minutes, this node's own included.
    const active = node.consensus.activeWeight();
    // A node whose own representative holds the quorum needs no peer; any other needs one at least.
    const minPeers = hasQuorum(local, w.total) ? 0 : 1;
    const peerCount = node.p2p?.peers().length ?? 0;
    const lastSync = node.syncer?.progress.last_ok_at ?? 0n;
    const syncAge = lastSync === 0n ? undefined : Number(node.now() - lastSync) / 1e9;
    const lastAdvance =
      stats.last_finality_ns === 0n ? undefined : Number(node.now() - stats.last_finality_ns) / 1e9;
    let storeOk = true;
    try {
      node.store.meta.get('genesis');
    } catch {
      storeOk = false;
    }
    const checks = [
      { name: 'live', ok: true, evaluated: true },
      { name: 'store_readable', ok: storeOk, evaluated: true },
      {
        name: 'peers',
        ok: peerCount >= minPeers,
        evaluated: true,
        detail:
          `${peerCount} peer${peerCount === 1 ? '' : 's'}, ${minPeers} required` +
          (node.p2p
            ? ''
            : node.networkStarting
              ? ' (peer-to-peer networking starting)'
              : ' (peer-to-peer networking off)'),
      },
      node.p2p === undefined || (minPeers === 0 && peerCount === 0)
        ? { name: 'synced', ok: true, evaluated: true, detail: 'no peers to sync from' }
        : {
            name: 'synced',
            ok: syncAge !== undefined && syncAge <= SYNC_FRESH_S,
            evaluated: true,
            detail:
              syncAge === undefined
                ? 'no sync round has succeeded yet'
                : `last successful sync round ${Math.round(syncAge)} s ago`,
          },
      { name: 'delegated_weight', ok: w.total > 0n, evaluated: true },
      {
        name: 'quorum_reachable',
        ok: unfinalized === 0 || hasQuorum(active.weight, w.total),
        evaluated: true,
        detail: `representatives heard from in the last 10 minutes hold ${w.total === 0n ? 0 : Number((active.weight * 10000n) / w.total) / 100}% of eligible weight`,
      },
      {
        name: 'finality_advancing',
        ok: unfinalized === 0 || (lastAdvance !== undefined && lastAdvance <= FINALITY_STALL_S),
        evaluated: true,
      },
    ];
    return {
      checks,
      ready: checks.every((c) => c.ok),
      total: w.total,
      active,
      peerCount,
      unfinalized,
      stall: unfinalized === 0 || lastAdvance === undefined ? 0 : lastAdvance,
      reps: node.consensus.eligibleReps(),
    };
  };

  /** When the network began, read at most once a minute (it looks at the store's first blocks). */
  let started: { at: number; value: bigint | null } | undefined;
  const networkStart = (): bigint | null => {
    if (started === undefined || (started.value === null && Date.now() - started.at > 60_000))
      started = { at: Date.now(), value: networkStartedAt(node.store) };
    return started.value;
  };

  /** LS-14: whether this node holds an unexpired certificate of its own. */
  const certificateStatus = () => {
    const own = node.certificates.newestValid(node.nodeKey.address, node.now());
    return own ? { valid: true, hash: own.hash, expires_at: own.expires_at } : { valid: false };
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/node',
      description: 'node identity, network, counts, finality and proof-of-work settings',
      auth: 'none',
      async handler() {
        const w = node.consensus.weights();
        const c = node.ledger.counters.current;
        const pow = node.statechain.pow;
        return {
          id: node.nodeId,
          address: node.nodeKey.address,
          // The identity this node signs with as timekeeper and provider (its key's address).
          account: node.nodeKey.address,
          public_key: node.nodeKey.pub_key,
          version: `xe/${node.version}`,
          network_id: node.statechain.networkId,
          genesis_hash: node.genesisHash,
          // Unix ns; genesis blocks say 0 (ledger/network-start.ts). Null: nothing to tell yet.
          network_started_at: networkStart(),
          // 'starting' while the API already answers and networking is still starting (node.ts).
          p2p: node.networkStarting ? 'starting' : node.p2pSwitch.state,
          peers: node.p2p?.peers() ?? [],
          peer_count: node.p2p?.peers().length ?? 0,
          listen_addrs: (node.p2p?.listenAddrs ?? []).map((a) =>
            a.includes('/p2p/') ? a : `${a}/p2p/${node.nodeId}`,
          ),
          accounts: c.accounts,
          block_count: c.blocks,
          dropped_blocks: node.droppedBlocks,
          // Gossiped blocks that arrived before a block they build on and waited for it.
          parked_blocks: node.parkedBlocks,
          delegation_underflows: c.delegation_underflows,
          total_delegated_weight: w.total.toString(),
          representatives: node.consensus.eligibleReps(),
          finality_advances: node.consensus.stats.finality_advances,
          last_finality_ns: node.consensus.stats.last_finality_ns,
          consensus: {
            final_on_apply: node.consensus.stats.final_on_apply,
            votes_throttled: node.consensus.votesThrottled,
            votes_reaffirmed: node.consensus.stats.votes_reaffirmed,
            laggards_answered: node.consensus.stats.laggards_answered,
            records_swept: node.consensus.stats.records_swept,
            phantoms_dropped: node.consensus.stats.phantoms_dropped,
          },
          election_pull: node.electionPuller?.stats ?? null,
          inbound_connections: node.p2p?.inboundStats ?? null,
          messenger: node.p2p?.messengerStats ?? null,
          // Gossip this node published: batch messages, the items in them, items sent alone.
          gossip_published: node.p2p?.gossipBatching ?? null,
          pow_difficulty: formatDifficulty(pow.block),
          chat_pow_difficulty: formatDifficulty(pow.chat),
          // The effective genesis-pinned windows (defaults where the genesis pins none).
          lease_timing: node.leaseTiming,
          certificate: certificateStatus(),
          // The own certificate's benchmark: idle, running (with progress), done or failed (retrying).
          benchmark: node.ownCertificate?.status ?? { state: 'idle', progress: 0 },
          // The VM side of providing: which driver runs lease VMs, and whether it is a real VM boundary.
          provider: providerStatus(node),
          statechain_height: node.statechain.blockCount,
          sync: syncProgress(),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/network/activations',
      description: 'feature activations scheduled on the state chain and whether each is active',
      auth: 'none',
      async handler() {
        const tip = node.statechain.tip;
        const features = [...node.statechain.activations].map(([name, a]) => {
          const active =
            tip !== undefined &&
            (a.at_index === undefined || tip.index >= a.at_index) &&
            (a.not_before_ns === undefined || tip.timestamp >= a.not_before_ns);
          return {
            name,
            at_index: a.at_index,
            not_before_ns: a.not_before_ns,
            active,
            known_to_binary: KNOWN_FEATURES.includes(name),
          };
        });
        const min = node.statechain.kvGet('sys.min_protocol_version');
        return {
          tip_index: tip?.index ?? 0n,
          tip_timestamp: tip?.timestamp ?? 0n,
          features,
          known_features: KNOWN_FEATURES,
          gated_block_types: {},
          unsupported_active: features.filter((f) => f.active && !f.known_to_binary).map((f) => f.name),
          unsupported_pending: features.filter((f) => !f.active && !f.known_to_binary).map((f) => f.name),
          min_protocol_version: min === undefined ? undefined : (JSON.parse(min) as string),
          protocol_version: PROTOCOL_VERSION,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/network/readiness',
      description: 'representative weight by software version and by known feature',
      auth: 'none',
      async handler() {
        const w = node.consensus.weightListing();
        const peers = new Map((node.p2p?.peers() ?? []).map((p) => [p.id, p]));
        // This node's own representative runs this binary; any other is followed through the
        // directory to the peer serving it and what that peer announced in netcheck.
        const resolve = (rep: string): Capabilities | undefined => {
          if (rep === node.nodeKey.address) return { version: NETCHECK_VERSION, features: KNOWN_FEATURES };
          const peer = peers.get(node.directory?.lookup(rep)?.node_peer ?? '');
          return peer && { version: peer.version, features: peer.features };
        };
        return repReadiness({ weights: w.weights, total: w.total, features: KNOWN_FEATURES, resolve });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/health',
      description: 'liveness of the process (never depends on peers or consensus)',
      auth: 'none',
      pretty: true,
      noStore: true,
      async handler(_req, reply) {
        let storeOk = true;
        try {
          node.store.meta.get('genesis');
        } catch {
          storeOk = false;
        }
        if (!storeOk) reply.code(503);
        return {
          status: storeOk ? 'ok' : 'unhealthy',
          ok: storeOk,
          version: node.version,
          network_id: node.statechain.networkId,
          node_id: node.nodeId,
          uptime_seconds: (Date.now() - node.startedAt) / 1000,
          checks: [
            { name: 'serving', ok: true, evaluated: true },
            { name: 'store_readable', ok: storeOk, evaluated: true },
          ],
          note: 'liveness only: see /ready for consensus and sync checks',
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/ready',
      description: 'readiness: store, peers, sync, delegated weight, quorum and finality checks',
      auth: 'none',
      pretty: true,
      noStore: true,
      async handler(_req, reply) {
        const r = readiness();
        if (!r.ready) reply.code(503);
        return {
          status: r.ready ? 'ready' : 'not_ready',
          ready: r.ready,
          checks: r.checks,
          peer_count: r.peerCount,
          delegated_weight_micro_xe: r.total.toString(),
          active_representative_weight_micro_xe: r.active.weight.toString(),
          representatives: r.reps,
          active_representatives: r.active.reps,
          quorum_margin_ratio:
            r.total === 0n ? -0.67 : Number((r.active.weight * 10000n) / r.total) / 10000 - 0.67,
          finality_stall_seconds: r.stall,
          finality_advances: node.consensus.stats.finality_advances,
          unfinalized_positions: r.unfinalized,
          conflicts_open: node.ledger.conflictCount(),
          sync: syncProgress(),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/supply',
      description: 'supply per asset and whether the conservation identity holds',
      auth: 'none',
      async handler() {
        const now = Date.now();
        if (!supplyCache || now - supplyCache.at > SUPPLY_CACHE_MS) {
          supplyCache = { at: now, body: supplyJson(computeSupply(node.ledger, node.now)) };
        }
        return supplyCache.body;
      },
    }),
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/pending',
      description: 'all pending sends',
      auth: 'none',
      schema: { querystring: pageQuery },
      async handler(req) {
        const { offset, limit } = page(req.query);
        return node.ledger.listPending(offset, limit).map((p) => ({
          ...pendingJson(p),
          // Kept from before `destination` was added.
          to: p.destination,
        }));
      },
    }),
    defineRoute<{ params: { address: string }; query: Page }>({
      method: 'GET',
      path: '/pending/:address',
      description: 'pending sends waiting for an account to receive them',
      auth: 'none',
      schema: { params: addressParams, querystring: pageQuery },
      async handler(req) {
        const { offset, limit } = page(req.query);
        return node.ledger.pendingFor(lower(req.params.address), offset, limit).map(pendingJson);
      },
    }),
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/frontiers',
      description: 'map of account address to frontier block hash, sorted by address',
      auth: 'none',
      schema: { querystring: pageQuery },
      async handler(req) {
        const { offset, limit } = page(req.query);
        const out: Record<string, string> = {};
        for (const { address, account } of node.ledger.listAccounts(offset, limit))
          out[address] = account.frontier;
        return out;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/delegation',
      description: 'delegated weight per eligible representative',
      auth: 'none',
      async handler() {
        const w = node.consensus.weightListing();
        return {
          weights: balanceMap(Object.fromEntries(w.weights)),
          total_weight: w.total.toString(),
          ineligible_weights: balanceMap(Object.fromEntries(w.ineligible)),
          ineligible_weight: w.ineligibleTotal.toString(),
          eligibility_restricted: w.restricted,
          eligibility_failed_open: w.failedOpen,
        };
      },
    }),
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/conflicts',
      description:
        'conflicts (two blocks on one chain position) and their candidates: open ones (voting), then those resolved in the last hour with their winner',
      auth: 'none',
      schema: { querystring: pageQuery },
      async handler(req) {
        return paged(allConflicts(), req.query).map(conflictJson);
      },
    }),
    defineRoute<{ params: { account: string } }>({
      method: 'GET',
      path: '/conflicts/:account',
      description: 'conflicts of one account; 404 when it has none',
      auth: 'none',
      schema: { params: { type: 'object', properties: { account: hex64 }, required: ['account'] } },
      async handler(req) {
        const account = lower(req.params.account);
        const list = allConflicts().filter((c) => c.account === account);
        if (list.length === 0) throw ApiError.notFound('no conflicts for this account');
        return list.map(conflictJson);
      },
    }),
  ];
}

/** `GET /node` `provider`: whether this node runs lease VMs, with which driver and capacity. */
function providerStatus(node: LedgerNode) {
  const p = node.provider;
  if (!p) return { enabled: false };
  return {
    enabled: true,
    driver: p.report.driver,
    vm_boundary: p.report.vmBoundary,
    detail: p.report.detail,
    ...(p.report.accel ? { accel: p.report.accel } : {}),
    capacity: { vcpus: p.capacity.vcpus, memory_mb: p.capacity.memory_mb, disk_gb: p.capacity.disk_gb },
    vms: p.vms().filter((v) => v.status === 'running' || v.status === 'creating').length,
  };
}
