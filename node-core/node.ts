import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  AdminTokenError,
  adminTokenFromEnv,
  checkAdminToken,
  ensureAdminTokenFile,
  readAdminTokenFile,
} from './admin-token.ts';
import type { ConnectionLimitOptions } from './api/connection-limits.ts';
import type { CompilerOptions } from './api/lazy-compilers.ts';
import type { RateLimitOptions } from './api/rate-limit.ts';
import { createApiServer } from './api/server.ts';
import { registerConsoleRoute } from './api/routes/console.ts';
import { buildRoutes } from './api/routes/index.ts';
import { registerUi, UI_PATH } from './api/ui-static.ts';
import { Consensus, type ConsensusTiming } from './consensus/consensus.ts';
import type { VoteThrottleOptions } from './consensus/vote-throttle.ts';
import { weightOf } from './consensus/weights.ts';
import { publicKeyFromSeedNode, signBytesNode, verifyBytesNode } from './fastpath/ed25519.ts';
import { VerifyPool } from './fastpath/verify-pool.ts';
import { ArrivalOrder } from './net/arrival-order.ts';
import { VotesAhead } from './net/votes-ahead.ts';
import { PreverifiedSignatures } from './net/preverified.ts';
import { countVoteBatch, countVotes } from './net/vote-intake.ts';
import {
  createDevnet,
  type DevnetOptions,
  type GenesisBundle,
  GenesisError,
  loadGenesisDir,
  writeDevnetKeys,
  writeFileAtomic,
  writeGenesisDir,
} from './genesis/genesis.ts';
import { CertificateBook } from './leasing/certificate-book.ts';
import type { ProviderCapacity } from './leasing/marketplace/capacity.ts';
import { type LeaseRequestOptions, LeaseRequests } from './leasing/marketplace/lease-requests.ts';
import { Marketplace, type MarketplaceOptions } from './leasing/marketplace/marketplace.ts';
import { leaseStake } from './leasing/pricing.ts';
import { OPEN_STATES } from './leasing/records.ts';
import { NodeWallet } from './node-wallet.ts';
import type { LeaseHolds } from './leasing/consumer/hold.ts';
import type { LeaseRenewals } from './leasing/consumer/renewals.ts';
import { consumerMarketDeps, startConsumer } from './leasing/consumer/wiring.ts';
import { lockedParamsFor } from './leasing/pricing.ts';
import type { LeasePolicy } from './leasing/provider/policy.ts';
import { Provider, type ProviderOptions } from './leasing/provider/provider.ts';
import { VmAccess } from './leasing/provider/vm-access.ts';
import { VmBook } from './leasing/provider/vm-book.ts';
import { chooseDriver, type DriverChoice } from './vm/choose-driver.ts';
import { ArchiveSweep } from './leasing/archive-sweep.ts';
import { AttestationGatherer } from './leasing/attestation-gatherer.ts';
import { AttestationResponder } from './leasing/attestation-responder.ts';
import { AttestationSlots } from './leasing/attestation-slots.ts';
import type { SubjectView } from './leasing/attestation-subject.ts';
import { localAttestation } from './leasing/local-attestation.ts';
import {
  OwnCertificate,
  OwnCertificateError,
  type OwnCertificateOptions,
} from './leasing/own-certificate.ts';
import { DEFAULT_LEASE_TIMING, type LeaseTiming, leaseTimingFromGenesis } from './leasing/timing.ts';
import { LedgerError, type LedgerErrorCode } from './ledger/errors.ts';
import { NetError } from './net/errors.ts';
import { Ledger } from './ledger/ledger.ts';
import { NETWORK_CREATED_META } from './ledger/network-start.ts';
import { Directory } from './net/directory.ts';
import { appStoreAreas, chatArea, directoryArea, leaseHoldsArea, NOT_COVERED } from './agent/areas.ts';
import { AppStore } from './app-store/app-store.ts';
import { Checkpoints } from './agent/checkpoints.ts';
import { ChatChallenges } from './chat/challenges.ts';
import { ChatEventHub } from './chat/chat-events.ts';
import { ChatOutbox, type ChatOutboxOptions, ChatDeliveryError } from './chat/chat-outbox.ts';
import { ChatService } from './chat/chat-service.ts';
import { chatEnvelopeJson, type ChatRetention, ChatStore, type StoredMessage } from './chat/chat-store.ts';
import { answerTunnel, openTunnel, TUNNEL_PROTOCOL } from './net/tunnel.ts';
import { vmLeaseJson } from './api/routes/vms.ts';
// The network modules (libp2p) are loaded only when peer-to-peer networking starts: they take a
// good part of a second to load, which a node without peers should not pay at start-up.
import type { ElectionPuller, ElectionPullOptions } from './net/election-pull.ts';
import type { CertificateExchange, CertificateExchangeOptions } from './net/certificate-exchange.ts';
import type { P2PHost, Verdict } from './net/host.ts';
import { gossipWindows } from './net/flush-pacer.ts';
import type { MessengerLimitOptions } from './net/request-limits.ts';
import type { SelfRegistration, SelfRegistrationOptions } from './net/self-registration.ts';
import type { Syncer } from './net/sync.ts';
import type { PeerLatency } from './net/peer-latency.ts';
import { P2PSwitch } from './net/p2p-switch.ts';
import { PEER_KEY_FILE, peerIdFromKeyFile } from './net/peer-id-text.ts';
import { preloadNetworkModules } from './net/preload.ts';
import { type ActivityOptions, ActivitySampler } from './metrics/activity.ts';
import { LogRing } from './metrics/log-ring.ts';
import { teeLogger } from './metrics/log-tee.ts';
import { StateChainError } from './statechain/statechain.ts';
import { type PerformanceCertificate, verifyCertificateContent } from './protocol/certificate.ts';
import type { Attestation } from './protocol/block.ts';
import { hexToBytes } from './protocol/hex.ts';
import { parseJson, stringifyJson } from './protocol/json.ts';
import { addressFromPublicKey, type KeyPair, randomSeed } from './protocol/keys.ts';
import { loadPowKernelSync } from './protocol/pow-wasm.ts';
import { StateChain } from './statechain/statechain.ts';
import { Store } from './store/store.ts';
import { StoreInUseError } from './store/owner-lock.ts';
import type { WriteBatchOptions } from './store/write-batch.ts';
import { NODE_VERSION } from './version.ts';

/**
 * The ledger node as a library: options in, modules wired together, a start/stop lifecycle. The CLI
 * and the Electron main process both run exactly this.
 */
export interface ChatOptions {
  retention?: Partial<ChatRetention>;
  outbox?: Partial<ChatOutboxOptions>;
  /** How often messages past the retention age are pruned, ms (default 1 h; also once at start). */
  pruneEveryMs?: number;
}

export interface NodeOptions {
  dataDir: string;
  /**
   * Answer block writes once journaled, with LMDB's commits unsynced behind checkpoints
   * (store/checkpoint.ts), rather than flushed by LMDB. On by default; LEDGER_NODE_JOURNAL=0 turns
   * it off.
   */
  journal?: boolean;
  /**
   * A journaled store's write batches (store/write-batch.ts). Default: from LEDGER_NODE_BATCH_MS and
   * LEDGER_NODE_BATCH_IDLE_MS when set (tests), else the store's defaults; `maxMs: 0` commits every
   * group.
   */
  writeBatch?: WriteBatchOptions;
  /** API port (default 8080; 0 picks a free port). */
  apiPort?: number;
  /** API bind address (default 127.0.0.1). */
  apiBind?: string;
  /** Proof-of-work difficulty of a NEW development network. */
  powDifficulty?: bigint;
  /**
   * Genesis overrides of a NEW development network (`--genesis-set`): the lease time windows and
   * the certificate workload.
   */
  genesisSet?: DevnetOptions['genesisSet'];
  /** Capacity this node offers as a provider (`--provide-*`); absent: it provides nothing. */
  provide?: ProviderCapacity;
  /**
   * How a provider runs its lease VMs (decisions D16). Without it (or with driver 'none') a node
   * with `provide` advertises and offers but runs no VMs and accepts nothing by itself.
   */
  vm?: VmOptions;
  /** Marketplace timings: ad interval and lifetime, the offer deadline of lease requests. */
  marketplace?: MarketplaceOptions & LeaseRequestOptions;
  /**
   * The node's own performance certificate (leasing/own-certificate.ts): made at start, renewed,
   * with this price multiplier (`--price-multiplier`). `false`: the node makes none.
   */
  ownCertificate?: OwnCertificateOptions | false;
  /** Pulling and re-broadcasting certificates between peers (default every 2 and 5 minutes). */
  certificateExchange?: CertificateExchangeOptions;
  /** Join the network defined by this genesis directory instead of a development network. */
  genesisDir?: string;
  /**
   * Admin token; overrides every other source. `false` disables the operator endpoints (403). Else
   * the token is read from `adminTokenFile`, the environment (ADMIN_TOKEN_ENV) or `<dataDir>/admin-token`.
   */
  adminToken?: string | false;
  /** A file holding the admin token (mode 0600: a file other users can open is refused). */
  adminTokenFile?: string;
  /**
   * Rate limits on (default, `true` or options: rates, a clock for tests) or off (`false`). Tests that
   * assert a bucket's exact count pass a clock they hold (test/helpers/limiter-clock.ts), so a slow
   * machine cannot refill it meanwhile.
   */
  rateLimit?: boolean | RateLimitOptions;
  /** API time limits and connection caps (defaults: see DEFAULT_CONNECTION_LIMITS). */
  apiConnections?: ConnectionLimitOptions;
  /** The API's route validators (api/server.ts `validators`): generation and tests only. */
  apiValidators?: CompilerOptions;
  /** Peer-to-peer networking (default on). */
  p2p?: boolean;
  /** Peer-to-peer TCP port (default 7075; 0 picks a free port). */
  p2pPort?: number;
  /** Peer-to-peer listen address (default 0.0.0.0: peers are on other machines). */
  p2pBind?: string;
  /** Multiaddrs of peers to keep connected to. */
  dial?: string[];
  /** Inbound peer-to-peer connections from one IPv4 address or IPv6 /56 (default 8). */
  p2pMaxInboundPerIp?: number;
  /** Inbound peer-to-peer connections in all (default 64). */
  p2pMaxInbound?: number;
  /**
   * Messenger (`/xe/msg/1.0.0`) rate limits and deadline (defaults: 50/s with burst 200 per peer,
   * 200/s with burst 400 in all, 30 s).
   */
  messengerLimits?: MessengerLimitOptions;
  /** Timings of the consensus liveness loops (re-affirm, fallback, ...); defaults per the spec. */
  consensusTiming?: ConsensusTiming;
  /** The per-election converge-vote throttle. */
  voteThrottle?: VoteThrottleOptions;
  /** Pulling votes of stalled elections and bodies of phantom hashes from peers. */
  electionPull?: ElectionPullOptions;
  /** Periodic sync rounds' interval and longest wait while blocks come in (tests; net/sync.ts). */
  syncRounds?: { roundEveryMs?: number; roundDeferMaxMs?: number };
  /** Re-registration of this node in the directory (default every 15 minutes). */
  selfRegistration?: SelfRegistrationOptions;
  /** Chat: retention per account, the outbox's retries, how often old messages are pruned. */
  chat?: ChatOptions;
  /**
   * Most signature-verification worker threads (default 2, 1 on one core; the second starts only
   * when submissions come in bursts); 0 verifies on the main thread.
   */
  verifyThreads?: number;
  /**
   * Under a steady stream, this node gossips the blocks and votes it publishes at most once per this
   * many ms, each batch carrying all gathered meanwhile (net/flush-pacer.ts); an item after a quiet
   * spell goes at once. Default DEFAULT_GOSSIP_WINDOW_MS; 0 sends every turn of the event loop.
   */
  gossipWindowMs?: number;
  /**
   * Under a heavy stream (about 1,600 blocks a second and more), the window is this long instead
   * (net/flush-pacer.ts): throughput near the machine's limit for latency. Default
   * DEFAULT_GOSSIP_HEAVY_WINDOW_MS, or 0 with a gossip window of 0; never shorter than the window.
   */
  gossipHeavyWindowMs?: number;
  /** Extra origins allowed by CORS besides the node's own. */
  corsOrigins?: string[];
  /**
   * Folder of the built GUI, served at `/ui/` (default: the checkout's renderer/dist, see
   * DEFAULT_UI_DIR). `false` serves no GUI. An unbuilt GUI is no error: `/ui/` then says how to build it.
   */
  uiDir?: string | false;
  logger?: Logger;
  /** Sampling of the activity history (`GET /node/activity`); tests sample faster. */
  activity?: ActivityOptions;
  /** Clock in Unix nanoseconds (tests may inject one). */
  now?: () => bigint;
}

export interface VmOptions {
  /**
   * 'auto': qemu where it works, else the sandbox on a development network; 'qemu'; 'sandbox'
   * (bubblewrap, no VM boundary: refused on other networks unless `allowSandbox`); 'none'.
   */
  driver?: DriverChoice | 'none';
  /** Run the sandbox driver on a network that is not a development network. */
  allowSandbox?: boolean;
  /** Folder of the qemu guest kernel and initramfs (default: where `npm run vm:image` puts them). */
  imageDir?: string;
  /** Leases this provider refuses (`--min/max-lease-duration`, `--min/max-lease-cost`). */
  policy?: LeasePolicy;
  /** Timings of the provider's automation and whether VMs outlive the node (tests). */
  provider?: Omit<ProviderOptions, 'policy'>;
}

export class NodeStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeStartError';
  }
}

export const NODE_KEY_FILE = 'node.key';
export const ADMIN_TOKEN_FILE = 'admin-token';
const GENESIS_META = 'genesis';

/** keyPairFromSeed through node:crypto (fastpath/ed25519.ts): the same key pair, without ~25 ms at start. */
function keyPairFromSeedNode(seed: Uint8Array): KeyPair {
  const pub = publicKeyFromSeedNode(seed);
  return {
    seed_hex: Buffer.from(seed).toString('hex'),
    pub_key: Buffer.from(pub).toString('hex'),
    address: addressFromPublicKey(pub),
  };
}

/** A port that is free on `host` right now. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * renderer/dist of the checkout or package this module belongs to: node-core/node.ts runs from the
 * sources, dist/node-core/node.js from the build, one folder deeper.
 */
export const DEFAULT_UI_DIR = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../renderer/dist' : '../../renderer/dist', import.meta.url),
);

/** Refusals that mean "a block this one depends on has not arrived": such a gossiped block waits. */
const WAITS_FOR_BLOCK: ReadonlySet<LedgerErrorCode> = new Set([
  'previous_not_found',
  'source_not_pending',
  'unopened_account',
  'lease_not_found',
]);

/** The messenger request that relays `GET /vms/{lease}` to the lease's provider (reference 1.6). */
const VM_STATUS_REQUEST = 'vm_status';

/** At most this many gossiped blocks wait for a missing dependency, each at most PARK_MS. */
const MAX_PARKED = 10_000;
const PARK_MS = 5_000;

/**
 * Wall-clock nanoseconds, never repeating or going back within a process: the sub-millisecond part
 * comes from a different clock than Date.now(), and a representative's successive votes must carry
 * rising timestamps (a newer converge vote replaces an older one by timestamp, 2.2).
 */
let lastNs = 0n;
const nowNs = (): bigint => {
  const t = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  lastNs = t > lastNs ? t : lastNs + 1n;
  return lastNs;
};

export class LedgerNode {
  readonly opts: NodeOptions;
  readonly dataDir: string;
  readonly now: () => bigint;
  readonly log: Logger | undefined;
  /** The recent log lines (`GET /node/log`): every line the node logs goes here too. */
  readonly logRing = new LogRing();
  /** Blocks and peers over time (`GET /node/activity`). */
  activity: ActivitySampler | undefined;
  /** Round trips to the connected peers (`GET /node/peers`). */
  peerLatency: PeerLatency | undefined;
  /** Stops and starts peer-to-peer networking at run time (`POST /node/p2p`). */
  p2pSwitch = new P2PSwitch({ host: undefined, listen: [] });
  /** The folder served at `/ui/`, or undefined when the node serves no GUI. */
  readonly uiDir: string | undefined;
  store!: Store;
  statechain!: StateChain;
  ledger!: Ledger;
  consensus!: Consensus;
  verifyPool!: VerifyPool;
  /** Signatures checked in worker threads ahead of consensus's own check (sync's final votes). */
  readonly preverified = new PreverifiedSignatures();
  api!: FastifyInstance;
  p2p: P2PHost | undefined;
  syncer: Syncer | undefined;
  electionPuller: ElectionPuller | undefined;
  /**
   * Which node serves which account (representatives included): registrations posted to the API
   * and, with peer-to-peer networking, learned from gossip.
   */
  directory!: Directory;
  selfRegistration: SelfRegistration | undefined;
  /** Blocks that arrived by gossip: they are relayed by gossip itself, not published again. */
  private readonly fromGossip = new Set<string>();
  /** Gossiped blocks between arrival and submission, so that they are submitted in order. */
  private readonly arriving = new ArrivalOrder();
  private readonly votesAhead = new VotesAhead();
  /** Gossiped blocks waiting for the block they depend on, by that block's hash. */
  private readonly parked = new Map<string, Parameters<Ledger['submit']>[0][]>();
  private parkedCount = 0;
  /** When the ledger last committed blocks (ms): sync's periodic rounds wait while it is busy. */
  private lastCommitAt = 0;
  /**
   * Gossiped blocks given up on: no room to wait, or what they waited for never came (N-08). Sync
   * rounds fetch them again; the count is in `GET /node` as `dropped_blocks`.
   */
  droppedBlocks = 0;
  /** Gossiped blocks that waited for a block they depend on (`parked_blocks` in `GET /node`). */
  parkedBlocks = 0;
  nodeKey!: KeyPair;
  adminToken: string | undefined;
  adminTokenFile: string | undefined;
  genesisHash = '';
  /** The network's lease time windows, from its ledger genesis (set once the genesis is known). */
  leaseTiming: LeaseTiming = DEFAULT_LEASE_TIMING;
  /** Performance certificates this node knows (its own and its peers'). */
  certificates!: CertificateBook;
  /** Provider ads, lease requests and offers on `xe/marketplace`. */
  marketplace!: Marketplace;
  /** The node's own account writing its own blocks (the operator's leases). */
  nodeWallet!: NodeWallet;
  leaseRequests!: LeaseRequests;
  /** Renewals of the node account's leases, and attestations for clients' lease blocks. */
  leaseRenewals!: LeaseRenewals;
  /** Holds: the node account's leases kept alive by renewals shortly before expiry. */
  leaseHolds: LeaseHolds | undefined;
  /** Expires accepted leases nobody settled once their escrow is past claiming (LS-04). */
  archiveSweep: ArchiveSweep | undefined;
  /** Timekeeper attestations from this node and its peers (with peer-to-peer networking). */
  attestations: AttestationGatherer | undefined;
  /** Answers peers' `attest_timestamp` as a listed timekeeper, one per peer per subject per 30 s. */
  attestationResponder: AttestationResponder | undefined;
  /** Makes and renews this node's own certificate (undefined when disabled). */
  ownCertificate: OwnCertificate | undefined;
  certificateExchange: CertificateExchange | undefined;
  /** Runs VMs for the leases addressed to this node (undefined when it runs none). */
  provider: Provider | undefined;
  /** The provider's start in the background (driver 'auto'). */
  private providerStarting: Promise<void> | undefined;
  /** Chat messages on disk, the ownership-proof challenges, and sending (chat/). */
  chatStore!: ChatStore;
  chatChallenges!: ChatChallenges;
  chat!: ChatService;
  /** Fans stored chat messages out to the `GET /chat/events` streams. */
  chatEvents!: ChatEventHub;
  /** Hands chat messages to the recipients' nodes, retrying until they take them. */
  chatOutbox!: ChatOutbox;
  private chatPruner: NodeJS.Timeout | undefined;
  /** Agent checkpoints of the local state: chat, directory, lease holds (agent/checkpoints.ts). */
  checkpoints!: Checkpoints;
  /** The window's own state: wallet, settings, address book, labels (app-store/app-store.ts). */
  appStore!: AppStore;
  /** The libp2p peer id while networking is off or still starting (see start). */
  private offlinePeerId: string | undefined;
  /** Peer-to-peer networking is starting: the API already answers (`GET /node` says so). */
  networkStarting = false;
  /** Who may reach a lease's VM, and the way there (here, or through its provider). */
  vmAccess!: VmAccess;
  startedAt = 0;
  private url_ = '';

  constructor(opts: NodeOptions) {
    this.opts = opts;
    this.dataDir = opts.dataDir;
    this.now = opts.now ?? nowNs;
    this.log = teeLogger(opts.logger, this.logRing);
    this.uiDir = opts.uiDir === false ? undefined : resolve(opts.uiDir ?? DEFAULT_UI_DIR);
  }

  get url(): string {
    return this.url_;
  }

  /** Address of the GUI (`<url>/ui/`) once the node listens, if it serves a built one. */
  get uiUrl(): string | undefined {
    if (this.url_ === '' || this.uiDir === undefined) return undefined;
    return existsSync(join(this.uiDir, 'index.html')) ? `${this.url_}${UI_PATH}` : undefined;
  }

  get version(): string {
    return NODE_VERSION;
  }

  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.prepareDataDir();
    // First: a token file others can read stops the start before anything is created.
    this.setupAdminToken();
    this.nodeKey = this.loadNodeKey();
    // Without peer-to-peer networking the node still has its libp2p identity (issue #14): `/node`
    // names a peer id, so a directory registration naming this node is valid, and the id is the one
    // the node will have once networking is turned on. It is read from the key file without libp2p
    // (peer-id-text.ts), so the API names it before networking has started; libp2p makes the key
    // the first time.
    this.offlinePeerId = peerIdFromKeyFile(this.dataDir, PEER_KEY_FILE);
    if (this.offlinePeerId === undefined) {
      const [{ loadPeerKey }, { peerIdFromPrivateKey }] = await Promise.all([
        import('./net/peer-key.ts'),
        import('@libp2p/peer-id'),
      ]);
      this.offlinePeerId = peerIdFromPrivateKey(await loadPeerKey(this.dataDir)).toString();
    }
    const journalOn = this.opts.journal ?? process.env.LEDGER_NODE_JOURNAL !== '0';
    try {
      this.store = Store.open({
        path: join(this.dataDir, 'ledger.lmdb'),
        journaled: journalOn,
        batch: this.opts.writeBatch ?? batchFromEnv(),
        onFailure: (e) => this.log?.error({ err: e.cause }, e.message),
      });
    } catch (e) {
      if (e instanceof StoreInUseError)
        throw new NodeStartError(
          `data directory ${this.dataDir} is in use by another node (process ${e.pid})`,
        );
      throw e;
    }
    const rewrite = this.store.rewrite;
    if (rewrite?.rewritten)
      this.log?.warn(
        rewrite,
        'store rewritten: an earlier version compacted it with a copy that later writes crash on',
      );
    else if (rewrite) this.log?.error(rewrite, 'store could not be rewritten; writes may crash the node');
    // The last stop was not clean: the store went back to its last checkpoint (store/checkpoint.ts),
    // and the journal replays what was acknowledged after it.
    if (this.store.restored === 'restored') this.log?.info('store back at its last checkpoint');
    else if (this.store.restored === 'other-file')
      this.log?.warn('a checkpoint of another data file was found and removed (the data file was replaced)');
    try {
      this.statechain = new StateChain({ store: this.store, verify: verifyBytesNode });
      this.statechain.start();
      this.certificates = new CertificateBook(this.store);
      // No worker until the first signature to check: a worker thread costs ~25 MB resident and its
      // start competes with the node's own; an idle or read-only node needs none.
      this.verifyPool = new VerifyPool({
        threads: this.opts.verifyThreads,
        initialThreads: 0,
        onWorkerLost: (loss) =>
          this.log?.warn({ worker: loss }, 'a signature-check worker died; its checks run here'),
      });
      // The WebAssembly kernel checks a nonce several times faster than the pure-JS digest; it is
      // compiled with the first proof of work to check, not at start-up (~10 ms). The scalar one:
      // a check is one nonce, which it hashes alone, where the SIMD kernel hashes three at once
      // (0.35 against 0.68 µs a check here).
      let kernel: ReturnType<typeof loadPowKernelSync> | undefined;
      this.ledger = new Ledger({
        store: this.store,
        statechain: this.statechain,
        verifier: this.verifyPool,
        verifySync: verifyBytesNode,
        powHash: (target, nonce) => (kernel ??= loadPowKernelSync({ kind: 'scalar' })).hash(target, nonce),
        now: this.now,
        certificates: this.certificates,
        leaseTiming: () => this.leaseTiming,
      });
      const { accountIndexBuilt } = this.ledger.start();
      if (accountIndexBuilt) this.log?.info(accountIndexBuilt, 'account index built');
      await this.ensureGenesis();
      this.leaseTiming = leaseTimingFromGenesis(this.ledger.getBlock(this.genesisHash)?.block);
      this.verifyPool.start();
      // Groups a crash left in the write-ahead journal but not in LMDB are replayed first (issue #18).
      const replay = await this.ledger.openJournal(join(this.dataDir, 'journal'), journalOn, (err) =>
        this.log?.error(
          { err },
          'the write-ahead journal failed: blocks are answered once LMDB has flushed them, until a restart',
        ),
      );
      if (replay.groups > 0 || replay.torn || replay.error)
        this.log?.info({ journal: replay }, 'journal replayed');
      this.consensus = new Consensus({
        ledger: this.ledger,
        statechain: this.statechain,
        localRep: {
          seed: hexToBytes(this.nodeKey.seed_hex),
          pubKey: this.nodeKey.pub_key,
          address: this.nodeKey.address,
        },
        now: this.now,
        // Votes sync verified in worker threads pass here without a second check (net/preverified.ts).
        verify: this.preverified.verify,
        sign: signBytesNode,
        onError: (err) => this.log?.error({ err }, 'finalization failed'),
        timing: this.opts.consensusTiming,
        throttle: this.opts.voteThrottle,
      });
      this.consensus.start(this.ledger.unfinalizedAccounts());
      // A settled conflict keeps how its candidates stood (the vote book forgets settled votes).
      this.ledger.setConflictTally((hash, at) => {
        const weights = this.consensus.weights();
        const voters = this.consensus.votersFor(hash, at);
        return { votes: voters.length, weight: weightOf(voters, weights) };
      });
      this.archiveSweep = new ArchiveSweep({
        leases: this.ledger.leases,
        archive: (hashes, now) => this.ledger.archiveLeases(hashes, now),
        now: this.now,
        timing: () => this.leaseTiming,
        log: this.log,
      });
      this.archiveSweep.start();
      this.directory = new Directory({ now: this.now, verify: verifyBytesNode });
      this.directory.start();
      this.startChat();
      this.startMarketplace();
      this.startCheckpoints();
      this.vmAccess = new VmAccess({
        address: this.nodeKey.address,
        lease: (h) => this.ledger.leases.get(h),
        now: this.now,
        verify: verifyBytesNode,
        connectLocal: async (lease) => {
          if (!this.provider) throw new Error('this node runs no VMs');
          return this.provider.connect(lease);
        },
        providerPeer: (provider) => this.directory.lookup(provider)?.node_peer,
        dialTunnel: async (peer, lease) => {
          if (!this.p2p) throw new Error('peer-to-peer networking is off');
          const stream = await this.p2p.openStream(peer, TUNNEL_PROTOCOL, AbortSignal.timeout(30_000));
          return openTunnel(stream, lease);
        },
      });
      this.activity = new ActivitySampler(
        {
          blocks: () => this.ledger.counters.current.blocks,
          peers: () => this.p2p?.peers().length ?? 0,
          now: this.now,
        },
        this.opts.activity,
      );
      this.activity.start();
      await this.listen();
      // The API answers while networking starts (loading libp2p is a good part of a start-up); the
      // start still fails if networking cannot start. A block committed meanwhile is not gossiped,
      // like one committed before any peer connects: peers pull it by sync when they connect.
      if (this.opts.p2p !== false) {
        this.networkStarting = true;
        await this.loadNetwork();
        await this.startP2P();
        this.networkStarting = false;
      }
      // After the network: what the outbox held at the last stop is retried as nodes connect.
      this.chatOutbox.start();
      this.startOwnCertificate();
      // 'auto' probes the host (qemu may try a KVM boot for seconds) after the start, never holding
      // it up; a driver asked for by name is checked before the start completes, so it can refuse.
      if ((this.opts.vm?.driver ?? 'none') === 'auto')
        this.providerStarting = this.startProvider().catch((e: unknown) =>
          this.log?.error({ err: e }, 'the provider could not start'),
        );
      else await this.startProvider();
    } catch (e) {
      await this.stop().catch(() => {});
      throw e;
    }
  }

  async stop(): Promise<void> {
    // First: a running benchmark's worker is terminated, and nothing is stored after the store closes.
    await this.ownCertificate?.stop();
    await this.providerStarting;
    await this.provider?.stop();
    this.certificateExchange?.stop();
    await this.api?.close();
    clearInterval(this.chatPruner);
    await this.chatOutbox?.stop();
    this.electionPuller?.stop();
    this.selfRegistration?.stop();
    this.directory?.stop();
    await this.leaseHolds?.stop();
    this.marketplace?.stop();
    await this.nodeWallet?.stop();
    this.syncer?.stop();
    this.activity?.stop();
    this.peerLatency?.stop();
    await this.p2p?.stop();
    await this.consensus?.stop();
    await this.archiveSweep?.stop();
    // Writes already queued finish and are answered before the store closes under them.
    await this.ledger?.idle();
    await this.ledger?.closeJournal();
    await this.verifyPool?.stop();
    // Closing may first rewrite the store compacted (Store.compactOnClose: its account pages together).
    await this.store?.close();
    const compaction = this.store?.compaction;
    if (compaction?.compacted) this.log?.info(compaction, 'store compacted at stop');
    else if (compaction?.reason.startsWith('failed')) this.log?.warn(compaction, 'store compaction failed');
  }

  /** Creates the data directory, refusing one that exists but is not a writable directory. */
  private prepareDataDir(): void {
    try {
      if (existsSync(this.dataDir) && !statSync(this.dataDir).isDirectory()) {
        throw new NodeStartError(`data directory ${this.dataDir} is not a directory`);
      }
      mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
      accessSync(this.dataDir, constants.W_OK | constants.R_OK);
    } catch (e) {
      if (e instanceof NodeStartError) throw e;
      throw new NodeStartError(
        `data directory ${this.dataDir} is not usable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  }

  /** The node's own key (representative, timekeeper), created once, private to the owner. */
  private loadNodeKey(): KeyPair {
    const path = join(this.dataDir, NODE_KEY_FILE);
    if (existsSync(path)) {
      const hex = readFileSync(path, 'utf8').trim();
      if (!/^[0-9a-f]{64}$/.test(hex)) throw new NodeStartError(`${path} does not hold a 64-hex seed`);
      return keyPairFromSeedNode(hexToBytes(hex));
    }
    // node:crypto's key derivation: the isomorphic one builds a 25 ms table of base-point multiples
    // that would stay in the heap for this one key.
    const kp = keyPairFromSeedNode(randomSeed());
    writeFileAtomic(path, `${kp.seed_hex}\n`, 0o600);
    return kp;
  }

  /**
   * An empty store gets a genesis: the one in --genesis-dir, else the development network recorded in
   * the data directory, else a new development network. A store created for another genesis refuses.
   */
  private async ensureGenesis(): Promise<void> {
    const joined = this.opts.genesisDir ? this.loadBundle(this.opts.genesisDir) : undefined;
    const recorded = this.store.getJson<{ ledger: string; statechain: string; network_id: string }>(
      this.store.meta,
      GENESIS_META,
    );
    if (recorded) {
      if (joined && (joined.ledger.hash !== recorded.ledger || joined.state.hash !== recorded.statechain)) {
        throw new NodeStartError(
          `data directory ${this.dataDir} belongs to network ${recorded.network_id} (ledger genesis ${recorded.ledger.slice(0, 16)}…), ` +
            `not to the genesis in ${this.opts.genesisDir} (network ${joined.networkId}, ledger genesis ${joined.ledger.hash.slice(0, 16)}…); ` +
            'use another --data-dir',
        );
      }
      this.genesisHash = recorded.ledger;
      if (this.opts.genesisSet && Object.keys(this.opts.genesisSet).length > 0)
        this.log?.warn(
          '--genesis-set only shapes a new development network: this data directory has one already',
        );
      return;
    }
    let bundle = joined;
    const ownGenesis = join(this.dataDir, 'genesis');
    if (!bundle && existsSync(join(ownGenesis, 'ledger-genesis.json'))) bundle = this.loadBundle(ownGenesis);
    if (!bundle) {
      let devnet: ReturnType<typeof createDevnet>;
      try {
        devnet = createDevnet({
          powDifficulty: this.opts.powDifficulty,
          nodeKey: this.nodeKey,
          genesisSet: this.opts.genesisSet,
        });
      } catch (e) {
        if (e instanceof GenesisError) throw new NodeStartError(`--genesis-set: ${e.message}`);
        throw e;
      }
      const { keys, bundle: created } = devnet;
      writeDevnetKeys(this.dataDir, keys);
      writeGenesisDir(ownGenesis, created);
      bundle = created;
      this.log?.info({ network_id: created.networkId }, 'created a development network');
      // Its genesis says timestamp 0 (the protocol's): people are told when it really began.
      this.store.meta.putSync(NETWORK_CREATED_META, this.now().toString());
    }
    if (!this.statechain.tip) await this.statechain.applyGenesis(bundle.state);
    if (!this.ledger.hasGenesis) await this.ledger.applyGenesis(bundle.ledger);
    this.store.meta.putSync(
      GENESIS_META,
      stringifyJson({
        ledger: bundle.ledger.hash,
        statechain: bundle.state.hash,
        network_id: bundle.networkId,
      }),
    );
    this.genesisHash = bundle.ledger.hash;
  }

  private loadBundle(dir: string): GenesisBundle {
    try {
      return loadGenesisDir(dir);
    } catch (e) {
      if (e instanceof GenesisError) throw new NodeStartError(e.message);
      throw e;
    }
  }

  /**
   * Admin token: the option, else the given token file, else the environment, else the data
   * directory's token file, created at first start (0600). A token file open to other users stops
   * the start (see admin-token.ts).
   */
  private setupAdminToken(): void {
    const { adminToken, adminTokenFile } = this.opts;
    try {
      if (adminToken === false) this.adminToken = undefined;
      else if (adminToken !== undefined) this.adminToken = checkAdminToken(adminToken, 'adminToken');
      else if (adminTokenFile !== undefined) {
        this.adminTokenFile = adminTokenFile;
        this.adminToken = readAdminTokenFile(adminTokenFile);
      } else {
        this.adminToken = adminTokenFromEnv();
        if (this.adminToken !== undefined) return;
        this.adminTokenFile = join(this.dataDir, ADMIN_TOKEN_FILE);
        this.adminToken = ensureAdminTokenFile(this.adminTokenFile);
      }
    } catch (e) {
      if (e instanceof AdminTokenError) throw new NodeStartError(e.message);
      throw e;
    }
  }

  private async listen(): Promise<void> {
    const host = this.opts.apiBind ?? '127.0.0.1';
    const port = this.opts.apiPort ?? 8080;
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
      this.log?.warn(
        { bind: host },
        'the API is bound to a non-loopback address: anyone who can reach it can use it',
      );
    }
    // CORS origins name the port, so a random port (0) is chosen before the server is built.
    const actualPort = port === 0 ? await freePort(host) : port;
    const corsOrigins = [
      `http://127.0.0.1:${actualPort}`,
      `http://localhost:${actualPort}`,
      ...(this.opts.corsOrigins ?? []),
    ];
    this.api = createApiServer({
      routes: buildRoutes(this),
      logger: this.log ?? false,
      rateLimit: this.opts.rateLimit,
      connections: this.opts.apiConnections,
      validators: this.opts.apiValidators,
      security: { bindAddress: host, corsOrigins, adminToken: this.adminToken },
      agent: { store: this.store },
      info: { name: 'ledger-node', version: NODE_VERSION },
      manifestExtra: () => ({
        network_id: this.statechain.networkId,
        address: this.nodeKey.address,
        node_id: this.nodeId,
      }),
    });
    // The VM console (a WebSocket, node-core/client/console-protocol.ts): SSH over the lease's tunnel.
    registerConsoleRoute(this.api, {
      leases: this.ledger.leases,
      openTunnel: async (hash) => {
        const lease = this.ledger.leases.get(hash);
        if (lease === undefined) throw new Error('lease not found');
        return this.vmAccess.open(lease);
      },
      now: this.now,
      verify: verifyBytesNode,
      log: this.log,
      allowedOrigins: corsOrigins,
    });
    if (this.uiDir !== undefined) {
      if (existsSync(this.uiDir) && !statSync(this.uiDir).isDirectory()) {
        throw new NodeStartError(`GUI folder ${this.uiDir} is not a directory (--ui-dir)`);
      }
      registerUi(this.api, this.uiDir);
    }
    try {
      await this.api.listen({ host, port: actualPort });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new NodeStartError(`port ${actualPort} on ${host} is already in use (--api-port)`);
      if (code === 'EADDRNOTAVAIL')
        throw new NodeStartError(`cannot bind ${host}: no such local address (--api-bind)`);
      if (code === 'EACCES')
        throw new NodeStartError(`not allowed to bind ${host}:${actualPort} (--api-port)`);
      throw e;
    }
    this.url_ = host.includes(':') ? `http://[${host}]:${actualPort}` : `http://${host}:${actualPort}`;
  }

  /** Content verification of a certificate for this network: its id and the workload it pins. */
  verifyCertificate(cert: PerformanceCertificate): void {
    verifyCertificateContent(cert, this.statechain.networkId, {
      workload: this.statechain.certificateWorkload,
      verify: verifyBytesNode,
    });
  }

  /** Starts making the own certificate once the node is up, on a timer: it never holds up the start. */
  private startOwnCertificate(): void {
    if (this.opts.ownCertificate === false) return;
    const key = {
      seed: hexToBytes(this.nodeKey.seed_hex),
      pubKey: this.nodeKey.pub_key,
      address: this.nodeKey.address,
    };
    try {
      this.ownCertificate = new OwnCertificate(
        {
          key,
          networkId: () => this.statechain.networkId,
          workload: () => this.statechain.certificateWorkload,
          timekeepers: () => this.statechain.timekeepers,
          maxSkewNs: () => this.leaseTiming.max_attestation_skew_ns,
          book: this.certificates,
          // Its own attestation when this node is a listed timekeeper; peers' would join here.
          attest: async (subject) =>
            this.statechain.timekeepers?.keys.includes(key.pubKey)
              ? [localAttestation(subject, this.now(), key)]
              : [],
          now: this.now,
          sign: signBytesNode,
          verify: verifyBytesNode,
          onCertificate: (cert) => this.certificateExchange?.publish(cert),
          log: this.log,
        },
        this.opts.ownCertificate,
      );
    } catch (e) {
      if (e instanceof OwnCertificateError) throw new NodeStartError(`--price-multiplier: ${e.message}`);
      throw e;
    }
    this.ownCertificate.start();
  }

  /**
   * The marketplace (a provider when `provide` is set and its own certificate is valid), and the
   * operator's lease requests, paid from the node's own account.
   */
  private startMarketplace(): void {
    const k = this.nodeKey;
    // Offers only what it can serve: with a VM driver, once the provider runs.
    const vmDriver = this.opts.vm?.driver ?? 'none';
    const offered = () => (vmDriver === 'none' || this.provider ? this.opts.provide : undefined);
    const seed = hexToBytes(k.seed_hex);
    const xusd = () => this.ledger.getAccount(k.address)?.balances.XUSD ?? 0n;
    this.marketplace = new Marketplace(
      {
        key: { seed, pubKey: k.pub_key, address: k.address },
        networkId: () => this.statechain.networkId,
        now: this.now,
        publish: (m) => void this.p2p?.publishMarketplace(m),
        subscribes: (peer) => this.p2p?.subscribesTo('marketplace', peer) ?? false,
        certificates: this.certificates,
        // Capacity counts the leases still open; a provider's settled history is not read.
        leasesOf: (provider) =>
          OPEN_STATES.flatMap(
            (state) => this.ledger.leases.list({ provider, state }, 0, Number.MAX_SAFE_INTEGER).leases,
          ),
        get capacity() {
          return offered();
        },
        canStake: (cost) => leaseStake(cost, BigInt(this.statechain.lease.stake_milli)) <= xusd(),
        ...consumerMarketDeps(this),
        sign: signBytesNode,
        verify: verifyBytesNode,
      },
      this.opts.marketplace,
    );
    this.marketplace.start();
    this.nodeWallet = new NodeWallet({
      seed,
      address: k.address,
      networkId: () => this.statechain.networkId,
      difficulty: () => this.statechain.pow.block,
      account: (a) => this.ledger.getAccount(a),
      submit: (b) => this.ledger.submit(b, { live: true }),
      now: this.now,
    });
    const market = this.marketplace;
    this.leaseRequests = new LeaseRequests(
      {
        findOffer: (want, o) => market.findOffer(want, o),
        canAsk: () => market.canAsk(k.address),
        minDurationSecs: () => this.leaseTiming.min_duration_secs,
        wallet: this.nodeWallet,
      },
      this.opts.marketplace,
    );
    ({ renewals: this.leaseRenewals, holds: this.leaseHolds } = startConsumer(
      this,
      this.opts.marketplace?.hold,
    ));
  }

  /**
   * The provider's automation, when `provide` is set and a VM driver works here. 'auto' falls back
   * from qemu to the sandbox on a development network; a driver asked for by name that cannot run
   * stops the start with the reason.
   */
  private async startProvider(): Promise<void> {
    const choice = this.opts.vm?.driver ?? 'none';
    const capacity = this.opts.provide;
    if (!capacity || choice === 'none') return;
    const devnet = !this.opts.genesisDir;
    const picked = await chooseDriver(choice, {
      dataDir: this.dataDir,
      imageDir: this.opts.vm?.imageDir,
      allowSandbox: devnet || this.opts.vm?.allowSandbox === true,
      log: this.log,
    });
    if (!picked.driver) {
      if (choice === 'auto') {
        this.log?.warn({ reason: picked.reason }, 'no VM driver works here: this node does not provide');
        return;
      }
      throw new NodeStartError(`--vm-driver ${choice}: ${picked.reason}`);
    }
    const k = this.nodeKey;
    this.provider = new Provider(
      {
        address: k.address,
        capacity,
        driver: picked.driver,
        report: picked.report,
        book: new VmBook(this.store.vms, this.store.durablePut(this.store.vms)),
        leases: this.ledger.leases,
        certificateValid: (hash) => {
          const c = this.certificates.get(hash);
          return c !== undefined && c.provider === k.address && c.expires_at > this.now();
        },
        opened: () => this.ledger.getAccount(k.address) !== undefined,
        open: async () => {
          const faucet = this.statechain.faucet;
          if (!faucet)
            throw new Error(`the node account ${k.address} has no chain yet: send it funds to open it`);
          const amount = faucet.amount < 1_000_000n ? faucet.amount : 1_000_000n;
          await this.nodeWallet.write(() => ({ type: 'claim', asset: 'XE', amount, balance: amount }));
        },
        balance: (asset) => this.nodeWallet.balance(asset),
        stakeFor: (cost) => leaseStake(cost, BigInt(this.statechain.lease.stake_milli)),
        lockedParamsAt: (t) => lockedParamsFor(this.ledger.leasing.epochCandidates(t)?.[0]),
        attest: (lease) => this.gatherAttestations(lease),
        threshold: () => this.statechain.timekeepers?.threshold ?? 1,
        write: (draft) => this.nodeWallet.write(draft),
        timing: () => this.leaseTiming,
        now: this.now,
        log: this.log,
      },
      { ...this.opts.vm?.provider, policy: this.opts.vm?.policy },
    );
    const provider = this.provider;
    this.ledger.onCommitted((batch) => {
      if (batch.some((c) => c.block.type.startsWith('lease') && this.concernsProvider(c.block)))
        provider.poke();
    });
    provider.start();
  }

  /** Whether a committed lease-family block names this node's account as the provider. */
  private concernsProvider(block: { type: string; destination?: string; source?: string }): boolean {
    if (block.type === 'lease') return block.destination === this.nodeKey.address;
    return (
      block.source !== undefined && this.ledger.leases.get(block.source)?.provider === this.nodeKey.address
    );
  }

  /** The VM of a lease this node does not provide, asked of its provider (`vm_status`, 10 s). */
  async remoteVmStatus(lease: string): Promise<unknown> {
    const record = this.ledger.leases.get(lease);
    const p2p = this.p2p;
    if (!record || !p2p || record.provider === this.nodeKey.address) return undefined;
    const peer = this.directory.lookup(record.provider)?.node_peer;
    if (!peer) return undefined;
    try {
      const answer = await p2p.request<Record<string, unknown>>(
        peer,
        VM_STATUS_REQUEST,
        { lease_hash: lease },
        {
          timeoutMs: 10_000,
        },
      );
      return typeof answer === 'object' && answer !== null && answer.lease_hash === lease
        ? answer
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** A peer's `vm_status` request: the lease-oriented VM shape of a lease this node provides. */
  private answerVmStatus(type: string, payload: unknown): Promise<unknown> | undefined {
    if (type !== VM_STATUS_REQUEST) return undefined;
    const lease = (payload as { lease_hash?: unknown } | null)?.lease_hash;
    const r = typeof lease === 'string' ? this.provider?.vm(lease) : undefined;
    if (!r || !this.provider) return Promise.reject(new Error('vm not found'));
    return Promise.resolve(vmLeaseJson(r, this.provider.report.vmBoundary));
  }

  /**
   * Chat (issue #13): messages kept in LMDB; one to a recipient registered here is stored, one to a
   * recipient on another node is stored as the sender's copy and handed to that node by the outbox
   * (libp2p `account_chat`, acknowledged, retried until taken).
   */
  private startChat(): void {
    const chat = this.opts.chat ?? {};
    this.chatStore = new ChatStore(
      {
        messages: this.store.chatMessages,
        index: this.store.chatIndex,
        seqs: this.store.chatSeq,
        deliveries: this.store.chatDelivery,
        transaction: (fn) => this.store.transaction(fn),
      },
      chat.retention,
    );
    this.chatEvents = new ChatEventHub(this.chatStore);
    this.chatChallenges = new ChatChallenges({ now: this.now, verify: verifyBytesNode });
    this.chatOutbox = new ChatOutbox(
      {
        store: this.chatStore,
        now: this.now,
        resolve: (key) => {
          const peer = this.directory.lookup(key)?.node_peer;
          return peer === this.nodeId ? 'self' : peer;
        },
        send: (peer, m) => this.deliverChat(peer, m),
        onChange: (m, d) => this.chatEvents.publishDelivery(m, d),
        log: this.log,
      },
      chat.outbox,
    );
    this.chat = new ChatService({
      store: this.chatStore,
      now: this.now,
      verify: verifyBytesNode,
      powDifficulty: () => this.statechain.pow.chat,
      recipient: (key) => {
        const entry = this.directory.lookup(key);
        if (!entry) return 'unknown';
        return entry.node_peer === this.nodeId ? 'here' : 'elsewhere';
      },
      onStored: (m) => this.chatEvents.publish(m),
      outbox: this.opts.p2p === false ? undefined : this.chatOutbox,
      relayWindowNs: this.chatOutbox.options.maxAgeNs,
    });
    const prune = () =>
      void this.chatStore
        .pruneOlderThan(this.now())
        .then((n) => n > 0 && this.log?.info({ pruned: n }, 'chat messages past retention pruned'))
        .catch((err: Error) => this.log?.warn({ err: err.message }, 'chat pruning failed'));
    prune();
    this.chatPruner = setInterval(prune, chat.pruneEveryMs ?? 3_600_000);
    this.chatPruner.unref();
  }

  /**
   * Agent checkpoints over the local state that lives in the node: the chat store, the directory
   * cache, the lease holds, and the window's settings, address book and account labels (the app
   * store, which starts here too: checkpoints read it). Messages a rollback puts back go to the
   * event streams (as new) and, when still pending, to the outbox.
   */
  private startCheckpoints(): void {
    this.appStore = new AppStore({
      db: this.store.appStore,
      transaction: (fn) => this.store.transaction(fn),
    });
    this.checkpoints = new Checkpoints({
      db: this.store.agentCheckpoints,
      transaction: (fn) => this.store.transaction(fn),
      now: this.now,
      notCovered: NOT_COVERED,
      areas: [
        chatArea(this.chatStore, (restored) => {
          for (const m of restored) {
            this.chatEvents.publish(m);
            if (this.opts.p2p !== false && this.chatStore.delivery(m.id)?.state === 'pending')
              this.chatOutbox
                .deliverNow(m, 0)
                .catch((err: Error) => this.log?.warn({ err: err.message }, 'chat outbox: restored message'));
          }
        }),
        directoryArea(this.directory),
        leaseHoldsArea(this.store.leaseHolds, () => this.leaseHolds?.reload()),
        ...appStoreAreas(this.appStore),
      ],
    });
  }

  /** The libp2p door of chat: a message from another node's outbox (undefined: not a chat request). */
  private answerChat(type: string, payload: unknown): Promise<unknown> | undefined {
    if (type !== 'account_chat') return undefined;
    return this.chat.receive(payload);
  }

  /** One outbox attempt: the message to the recipient's node, resolved once it acknowledged. */
  private async deliverChat(peer: string, m: StoredMessage): Promise<void> {
    const p2p = this.p2p;
    if (!p2p) throw new ChatDeliveryError('unreachable', 'peer-to-peer networking is off');
    if (!p2p.isVerified(peer)) {
      // Dialled in the background: once connected, onPeer has the outbox try again at once.
      p2p.connect(peer);
      throw new ChatDeliveryError(
        'unreachable',
        `their node is offline (not connected to this one); retrying until it is back (node ${peer})`,
      );
    }
    try {
      await p2p.request(peer, 'account_chat', chatEnvelopeJson(m), { timeoutMs: 10_000 });
    } catch (e) {
      const msg = (e as Error).message;
      // The node answered, and what it said is about the message itself: trying again cannot help.
      if (e instanceof NetError && e.code === 'ERR_PEER_ANSWER' && /invalid envelope/.test(msg))
        throw new ChatDeliveryError('refused', msg);
      throw new ChatDeliveryError('unreachable', msg);
    }
  }

  /** The node's libp2p peer id; its public key when peer-to-peer networking is off. */
  get nodeId(): string {
    return this.p2p?.peerId || this.offlinePeerId || this.nodeKey.pub_key;
  }

  /** Loads the peer-to-peer modules while the API answers (net/preload.ts); tests hold it to look in. */
  protected async loadNetwork(): Promise<void> {
    await preloadNetworkModules();
  }

  /**
   * Joins the peer-to-peer network: blocks, votes and state-chain blocks from peers take the same
   * validation path as those from the API (one pipeline, two doors); what this node accepts or votes
   * is announced to its peers.
   */
  private async startP2P(): Promise<void> {
    const [
      { P2PHost },
      { loadPeerKey },
      { Syncer },
      { NETCHECK_VERSION, NODE_FEATURES },
      { ElectionPuller },
      { SelfRegistration },
    ] = await Promise.all([
      import('./net/host.ts'),
      import('./net/peer-key.ts'),
      import('./net/sync.ts'),
      import('./net/netcheck.ts'),
      import('./net/election-pull.ts'),
      import('./net/self-registration.ts'),
    ]);
    const directory = this.directory;
    const host = this.opts.p2pBind ?? '0.0.0.0';
    const port = this.opts.p2pPort ?? 7075;
    const family = host.includes(':') ? 'ip6' : 'ip4';
    // Kept: the switch pins a port 0 to the port the host got, so a restarted host keeps its address.
    const listen = [`/${family}/${host}/tcp/${port}`];
    this.p2p = new P2PHost(
      {
        privateKey: await loadPeerKey(this.dataDir),
        listen,
        dial: this.opts.dial ?? [],
        hello: {
          network_id: this.statechain.networkId,
          version: NETCHECK_VERSION,
          features: [...NODE_FEATURES],
          genesis_hash: this.genesisHash,
        },
        log: this.log,
        maxInboundPerIp: this.opts.p2pMaxInboundPerIp,
        maxInbound: this.opts.p2pMaxInbound,
        messenger: this.opts.messengerLimits,
        // This node's votes go out batch-signed, one signature per commit's votes (protocol/vote-batch.ts).
        voteSigner: {
          pubKey: this.nodeKey.pub_key,
          sign: (m) => signBytesNode(m, hexToBytes(this.nodeKey.seed_hex)),
        },
        verifier: this.verifyPool,
        ...gossipWindows(this.opts.gossipWindowMs, this.opts.gossipHeavyWindowMs),
      },
      {
        onBlock: (block) => this.blockFromPeer(block),
        onVote: (vote) => this.consensus.onVote(vote),
        // A gossiped batch: its blocks' signatures reach the verify pool together; its votes are
        // checked there too, then counted in short slices (net/vote-intake.ts).
        onBlocks: (blocks) => Promise.all(blocks.map((b) => this.blockFromPeer(b))),
        onVotes: (votes) =>
          this.votesAhead.track(
            countVotes(votes, {
              consensus: this.consensus,
              verifier: this.verifyPool,
              preverified: this.preverified,
            }),
          ),
        onVoteBatch: (batch) =>
          this.votesAhead.track(
            countVoteBatch(batch, { consensus: this.consensus, verifier: this.verifyPool }),
          ),
        onPeer: (peer) => {
          this.syncer?.request(peer);
          this.certificateExchange?.peerConnected(peer);
          this.selfRegistration?.peerConnected(peer);
          this.marketplace.peerConnected(peer);
          this.chatOutbox.peerConnected(peer);
        },
        onRegistration: (r) => directory.offer(r),
        onMarketplace: (m) => this.marketplace.receive(m),
        onCertificate: async (cert) => (await this.certificateExchange?.offer(cert)) ?? 'ignore',
        onRequest: async (type, payload, from, channel) =>
          channel === 'sync'
            ? this.syncer?.answer(type, payload)
            : (this.certificateExchange?.answer(type, payload) ??
              this.electionPuller?.answer(type, payload) ??
              this.attestationResponder?.answer(type, payload, from) ??
              this.answerChat(type, payload) ??
              this.answerVmStatus(type, payload)),
        onTunnel: (stream) =>
          void answerTunnel(stream, (lease) => this.vmAccess.answer(lease)).catch((e: unknown) =>
            this.log?.debug({ err: (e as Error).message }, 'tunnel from a peer failed'),
          ),
        onStateBlock: async (block) => {
          try {
            const r = await this.statechain.submit(block);
            return r.duplicate ? 'ignore' : 'accept';
          } catch (e) {
            if (e instanceof StateChainError) return e.retryable ? 'ignore' : 'reject';
            throw e;
          }
        },
      },
    );
    try {
      await this.p2p.start();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new NodeStartError(`peer-to-peer port ${port} is already in use (--p2p-port)`);
      throw e;
    }
    const p2p = this.p2p;
    this.syncer = new Syncer({
      host: p2p,
      ledger: this.ledger,
      statechain: this.statechain,
      consensus: this.consensus,
      now: this.now,
      log: this.log,
      verifier: this.verifyPool,
      preverified: this.preverified,
      busy: () => Date.now() - this.lastCommitAt < 1000,
      ...this.opts.syncRounds,
    });
    this.syncer.start();
    for (const peer of p2p.peers()) this.syncer.request(peer.id);
    this.electionPuller = new ElectionPuller(
      { host: p2p, consensus: this.consensus, ledger: this.ledger, log: this.log },
      { stalledAfterMs: this.opts.consensusTiming?.fallbackMs, ...this.opts.electionPull },
    );
    this.electionPuller.start();
    const { PeerLatency, messengerProbe } = await import('./net/peer-latency.ts');
    this.peerLatency = new PeerLatency({
      peers: () => p2p.peers().map((x) => x.id),
      probe: messengerProbe(p2p),
    });
    this.peerLatency.start();
    this.p2pSwitch = new P2PSwitch({ host: p2p, listen, log: this.log });
    this.attestationResponder = new AttestationResponder({
      subjects: this.attestationSubjects,
      isTimekeeper: () => this.isTimekeeper(),
      attest: (id) => this.attest(id),
      slots: new AttestationSlots(),
    });
    this.attestations = new AttestationGatherer({
      host: p2p,
      timekeepers: () => this.statechain.timekeepers,
      self: (id) => (this.isTimekeeper() ? this.attest(id) : undefined),
      verify: verifyBytesNode,
    });
    this.selfRegistration = new SelfRegistration(
      {
        directory,
        publish: (r) => void p2p.publishRegistration(r),
        seed: hexToBytes(this.nodeKey.seed_hex),
        pubKey: this.nodeKey.pub_key,
        nodePeer: p2p.peerId,
        now: this.now,
        subscribes: (peer) => p2p.subscribesTo('directory', peer),
        sign: signBytesNode,
      },
      this.opts.selfRegistration,
    );
    this.selfRegistration.start();
    const { CertificateExchange } = await import('./net/certificate-exchange.ts');
    this.certificateExchange = new CertificateExchange(
      {
        book: this.certificates,
        verify: (cert) => this.verifyCertificate(cert),
        host: p2p,
        ownAddress: this.nodeKey.address,
        now: this.now,
        log: this.log,
      },
      this.opts.certificateExchange,
    );
    this.certificateExchange.start();
    for (const peer of p2p.peers()) this.certificateExchange.peerConnected(peer.id);
    this.consensus.setSink({ broadcast: (vote, weight) => void p2p.publishVote(vote, weight) });
    this.ledger.onCommitted((batch) => {
      this.lastCommitAt = Date.now();
      for (const c of batch) {
        if (this.fromGossip.delete(c.block.hash)) continue;
        // History pulled by sync is not news: its peers hold it (relaying it cost more than the pull).
        if (this.syncer?.isApplying(c.block.hash)) continue;
        void p2p.publishBlock(c.block);
      }
      if (this.parkedCount > 0) this.unpark(batch.map((c) => c.block.hash));
    });
    this.statechain.onCommitted((block) => void p2p.publishStateBlock(block));
  }

  /**
   * A block from a peer. It is relayed once it passes the checks that need no ledger state but its
   * signer's key (hash, proof of work, clock, signature): waiting for the durable commit here would
   * make the gossip validator, and so every message behind it, as slow as a disk flush. The block is
   * then applied like any other; deterministic failures lower the sender's score.
   */
  private async blockFromPeer(block: Parameters<Ledger['submit']>[0]): Promise<Verdict> {
    if (!block.hash || this.ledger.hasBlock(block.hash)) return 'ignore';
    const hash = block.hash;
    const handedOver = this.arriving.arrive(hash);
    // The votes that came before it (its window's, sent ahead of it) are counted before it is applied.
    const votesAhead = this.votesAhead.now();
    try {
      await this.ledger.precheck(block, { live: true });
    } catch (e) {
      handedOver();
      // A block this node cannot judge yet is no fault of the relaying peer (L-19): ignored, neither
      // relayed nor penalised; one missing a block it depends on waits for that block.
      if (e instanceof LedgerError && e.retryable) {
        if (WAITS_FOR_BLOCK.has(e.code)) this.park(block);
        return 'ignore';
      }
      return 'reject';
    }
    this.fromGossip.add(hash);
    void this.submitFromPeer(block, handedOver, votesAhead);
    return 'accept';
  }

  /**
   * Submits a gossiped block after the blocks it builds on that arrived before it (ArrivalOrder) and
   * once the votes that arrived before it are counted (VotesAhead).
   */
  private async submitFromPeer(
    block: Parameters<Ledger['submit']>[0],
    handedOver: () => void,
    votesAhead: Promise<unknown> | undefined,
  ): Promise<void> {
    let outcome: ReturnType<Ledger['submit']>;
    try {
      if (votesAhead) await votesAhead;
      await this.arriving.after([block.previous, block.source]);
      // Queued now: those handed over before it were queued in as many turns, so before it.
      outcome = this.ledger.submit(block, { live: true });
    } finally {
      handedOver();
    }
    outcome.then(
      (r) => {
        if (r.status !== 'accepted') this.fromGossip.delete(block.hash!);
      },
      (e: unknown) => {
        this.fromGossip.delete(block.hash!);
        // Only a missing block is worth waiting for here; other transient refusals (a certificate
        // not seen yet, a lease not accepted yet) are left to later gossip and sync rounds.
        if (e instanceof LedgerError && WAITS_FOR_BLOCK.has(e.code)) this.park(block);
        else this.log?.debug({ hash: block.hash, err: (e as Error).message }, 'gossiped block refused');
      },
    );
  }

  /**
   * Gossip delivers blocks out of order: one whose previous block (or, for a receive, whose source)
   * has not arrived yet waits here, keyed by that missing hash, and is tried again the moment the
   * block it needs is committed. Only what stays missing is left to a sync round.
   */
  private park(block: Parameters<Ledger['submit']>[0]): void {
    // A receive waits for its send, a lease-family block for its lease, once its previous is here.
    const needs = block.source && this.ledger.hasBlock(block.previous) ? block.source : block.previous;
    if (this.parkedCount >= MAX_PARKED) {
      this.droppedBlocks += 1;
      this.syncer?.requestAny();
      return;
    }
    const list = this.parked.get(needs) ?? [];
    if (list.some((b) => b.hash === block.hash)) return;
    // The block it needs may have been committed while this one was being checked.
    if (this.ledger.hasBlock(needs)) {
      queueMicrotask(() => void this.blockFromPeer(block));
      return;
    }
    list.push(block);
    this.parked.set(needs, list);
    this.parkedCount += 1;
    this.parkedBlocks += 1;
    setTimeout(() => {
      const still = this.parked.get(needs);
      if (!still?.includes(block)) return;
      still.splice(still.indexOf(block), 1);
      if (still.length === 0) this.parked.delete(needs);
      this.parkedCount -= 1;
      this.droppedBlocks += 1;
      this.syncer?.requestAny(); // what it waited for never came by gossip
    }, PARK_MS).unref();
  }

  /** Releases the blocks that waited for these committed ones. */
  private unpark(hashes: string[]): void {
    for (const h of hashes) {
      const list = this.parked.get(h);
      if (!list) continue;
      this.parked.delete(h);
      this.parkedCount -= list.length;
      for (const b of list) void this.blockFromPeer(b);
    }
  }

  /** What this node attests (leasing/attestation-subject.ts), over HTTP and the messenger alike. */
  get attestationSubjects(): SubjectView {
    return { leases: this.ledger.leases, directory: this.directory, ownAddress: this.nodeKey.address };
  }

  /** Whether this node's key is listed in `sys.timekeepers`: only then does its attestation count. */
  isTimekeeper(): boolean {
    return this.statechain.timekeepers?.keys.includes(this.nodeKey.pub_key) === true;
  }

  /**
   * Timekeeper attestations of `subject` (a lease hash) now: every connected peer's that answers
   * (with peer-to-peer networking) and this node's own when its key is listed.
   */
  async gatherAttestations(subject: string): Promise<Attestation[]> {
    if (this.attestations) return this.attestations.gatherAttestations(subject);
    return this.isTimekeeper() ? [this.attest(subject)] : [];
  }

  /** This node's timekeeper attestation of `subject` now. */
  private attest(subject: string): Attestation {
    return localAttestation(subject, this.now(), {
      seed: hexToBytes(this.nodeKey.seed_hex),
      pubKey: this.nodeKey.pub_key,
    });
  }

  /** Parsed JSON of a state-chain value, or undefined. */
  stateValue(key: string): unknown {
    const t = this.statechain.kvGet(key);
    return t === undefined ? undefined : parseJson(t);
  }
}

/** Write-batch settings from LEDGER_NODE_BATCH_MS and LEDGER_NODE_BATCH_IDLE_MS (milliseconds), if set. */
function batchFromEnv(): WriteBatchOptions | undefined {
  const ms = (name: string) => {
    const v = process.env[name];
    return v !== undefined && /^\d{1,7}$/.test(v) ? Number(v) : undefined;
  };
  const maxMs = ms('LEDGER_NODE_BATCH_MS');
  const idleMs = ms('LEDGER_NODE_BATCH_IDLE_MS');
  return maxMs === undefined && idleMs === undefined ? undefined : { maxMs, idleMs };
}
