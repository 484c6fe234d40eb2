import { gossipsub, type GossipSub, TopicValidatorResult } from '@libp2p/gossipsub';
import { createPeerScoreParams, createTopicScoreParams } from '@libp2p/gossipsub/score';
import { identify } from '@libp2p/identify';
import type { Connection, Libp2p, MultiaddrConnection, PeerId, PrivateKey, Stream } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { peerIdFromString } from '@libp2p/peer-id';
import { createLibp2p } from 'libp2p';
import type { Logger } from 'pino';
import type { Block } from '../protocol/block.ts';
import type { PerformanceCertificate } from '../protocol/certificate.ts';
import type { MarketplaceGossip } from '../protocol/marketplace.ts';
import type { Registration } from '../protocol/registration.ts';
import { sha256Node } from '../fastpath/block-hash.ts';
import type { JsonPath } from '../protocol/json.ts';
import type { StateBlock } from '../protocol/statechain.ts';
import type { Vote } from '../protocol/vote.ts';
import { nodeConnectionEncrypter, nodeStreamMuxer } from './connection-stack.ts';
import {
  blockJson,
  decodeBlockBatch,
  decodeBlockMessage,
  decodeVoteBatch,
  encodeBatchMessage,
  MAX_BATCH_BYTES,
  MAX_BATCH_ITEMS,
  voteJson,
  decodeMarketplaceMessage,
  encodeMarketplaceMessage,
  decodeCertificateMessage,
  encodeCertificateMessage,
  unknownBlockType,
  decodeStateMessage,
  decodeVoteMessage,
  encodeBlockMessage,
  encodeStateMessage,
  encodeVoteMessage,
  MAX_GOSSIP_BYTES,
  TOPICS,
} from './gossip.ts';
import { decodeSignedVoteBatch, type SignedVoteBatch } from '../protocol/vote-batch.ts';
import { verifyVote } from '../protocol/vote.ts';
import { verifyBytesNode } from '../fastpath/ed25519.ts';
import { VoteBatchSigner } from './vote-batch-signer.ts';
import { voteCheckBytes } from './vote-intake.ts';
import { decodeRegistration, encodeRegistration } from './directory.ts';
import { GossipBatcher } from './gossip-batcher.ts';
import { FlushPacer } from './flush-pacer.ts';
import { NetError } from './errors.ts';
import { TUNNEL_PROTOCOL } from './tunnel.ts';
import { InboundLimiter } from './inbound-limits.ts';
import {
  decodeHello,
  encodeHello,
  incompatibility,
  NETCHECK_PROTOCOL,
  type NetcheckHello,
} from './netcheck.ts';
import type { MessengerLimitOptions } from './request-limits.ts';
import {
  MAX_INBOUND_REQUEST_STREAMS,
  type MessengerStats,
  type RequestChannel,
  RequestService,
  type SyncLimitOptions,
} from './requests.ts';

/**
 * The node's libp2p host (issue "The network"): TCP, Noise, yamux, identify and GossipSub; the
 * netcheck handshake on every connection; gossip of blocks, votes and state-chain blocks, each
 * validated by the node before it is relayed. A peer on another network is disconnected and kept
 * out for a while, so it is not redialled in a loop.
 */
export type Verdict = 'accept' | 'reject' | 'ignore';

export interface P2PHandlers {
  onBlock(block: Block, from: string): Promise<Verdict>;
  onVote(vote: Vote & { signature: string }, from: string): Verdict;
  /**
   * The blocks of one batch message (`xe/block-batches`), in order, a verdict for each; without it
   * each goes to onBlock.
   */
  onBlocks?(blocks: Block[], from: string): Promise<Verdict[]>;
  /** The votes of one batch message (`xe/vote-batches`); without it each goes to onVote. */
  onVotes?(votes: (Vote & { signature: string })[], from: string): Promise<Verdict[]>;
  /**
   * A batch-signed vote batch (`xe/vote-batches-signed`, protocol/vote-batch.ts), decoded but its
   * signature unchecked: a verdict per vote, or undefined when the batch signature is bad (nothing
   * counted). Without it the topic is not joined.
   */
  onVoteBatch?(batch: SignedVoteBatch, from: string): Promise<Verdict[] | undefined>;
  onStateBlock(block: StateBlock, from: string): Promise<Verdict>;
  /** A directory registration (`xe/directory`); ignored when absent. */
  onRegistration?(registration: Registration, from: string): Verdict;
  /** A performance certificate (`xe/certificates`); ignored when absent. */
  onCertificate?(certificate: PerformanceCertificate, from: string): Promise<Verdict>;
  /** A marketplace ad, request or offer (`xe/marketplace`), decoded; ignored when absent. */
  onMarketplace?(msg: MarketplaceGossip, from: string): Verdict;
  /** A peer passed netcheck (a new connection to a compatible node). */
  onPeer?(peer: string): void;
  /**
   * Answers a request/response message (requests.ts: the messenger or sync protocol, one JSON
   * request `{type, payload}`, one JSON answer `{type, error?, payload}`); undefined = unknown type.
   */
  onRequest?(type: string, payload: unknown, from: string, channel: RequestChannel): Promise<unknown>;
  /** A peer opened a VM tunnel (`/xe/tunnel/2.0.0`, tunnel.ts); the stream is reset when absent. */
  onTunnel?(stream: Stream, from: string): void;
}

export interface P2POptions {
  privateKey: PrivateKey;
  /** Multiaddrs to listen on, e.g. /ip4/127.0.0.1/tcp/7075 */
  listen: string[];
  /** Multiaddrs of peers to keep connected to. */
  dial: string[];
  hello: NetcheckHello;
  log?: Logger;
  /** How long a peer on another network stays refused (ms). */
  banMs?: number;
  /** Inbound connections from one IPv4 address or IPv6 /56 (default 8; N-09). */
  maxInboundPerIp?: number;
  /** Inbound connections in all (default 64; N-09). */
  maxInbound?: number;
  /** Messenger rate limits and deadline (defaults per spec 5.7). */
  messenger?: MessengerLimitOptions;
  /** Limits of the sync protocol (defaults DEFAULT_SYNC_LIMITS). */
  sync?: SyncLimitOptions;
  /**
   * This node's representative key and a signer with it: its own votes then go out batch-signed
   * (protocol/vote-batch.ts) while every peer takes that.
   */
  voteSigner?: { pubKey: string; sign(message: Uint8Array): Uint8Array };
  /** Signature checks off the node's thread (the verify pool), for votes passed on singly. */
  verifier?: { verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> };
  /** Gossip batches go out at most once a window under a steady stream (net/flush-pacer.ts); default 0. */
  gossipWindowMs?: number;
  /** ... and at most once this window under a heavy one (net/flush-pacer.ts); default gossipWindowMs. */
  gossipHeavyWindowMs?: number;
}

export interface PeerInfo {
  id: string;
  address: string;
  version: string;
  /** Features the peer announced in netcheck. */
  features: string[];
  connected_at: bigint;
}

const NETCHECK_TIMEOUT_MS = 5000;
const REDIAL_MS = 3000;
/** Gossip messages this large or larger are announced with IDONTWANT to the other mesh peers. */
const IDONTWANT_MIN_BYTES = 16 * 1024;

const VERDICTS: Record<Verdict, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  reject: TopicValidatorResult.Reject,
  ignore: TopicValidatorResult.Ignore,
};

/**
 * A batch's verdict: rejected when any item is (the sender vouched for each), accepted (relayed)
 * when any item was news, else ignored.
 */
function batchVerdict(verdicts: Verdict[]): TopicValidatorResult {
  if (verdicts.includes('reject')) return TopicValidatorResult.Reject;
  return verdicts.includes('accept') ? TopicValidatorResult.Accept : TopicValidatorResult.Ignore;
}

async function readOnce(stream: Stream, limit: number): Promise<Uint8Array | undefined> {
  let buf = new Uint8Array(0);
  for await (const chunk of stream) {
    const part = chunk.subarray();
    const next = new Uint8Array(buf.length + part.length);
    next.set(buf);
    next.set(part, buf.length);
    buf = next;
    if (buf.length > limit) return undefined;
    // A hello is one JSON object: complete once it parses.
    try {
      JSON.parse(new TextDecoder().decode(buf));
      return buf;
    } catch {
      // wait for more bytes
    }
  }
  return buf.length > 0 ? buf : undefined;
}

export class P2PHost {
  private readonly opts: P2POptions;
  private readonly handlers: P2PHandlers;
  private node: Libp2p<{ pubsub: GossipSub }> | undefined;
  /** Peers that passed netcheck: peer id -> info. */
  private readonly verified = new Map<string, PeerInfo>();
  /** Peers on another network -> until when they are refused (ms). */
  private readonly banned = new Map<string, number>();
  private redialTimer: NodeJS.Timeout | undefined;
  private readonly inbound: InboundLimiter;
  private lastCapWarning = 0;
  private readonly requests: RequestService;
  private readonly blockBatcher: GossipBatcher;
  private readonly voteBatcher: GossipBatcher;
  private batching = true;
  /** False once leaveSignedVoteBatches (or leaveBatchTopics) ran, or without a handler for them. */
  private signedVotes = true;
  private readonly voteBatchSigner: VoteBatchSigner | undefined;
  /** Batch-signed vote batches whose signature held, and their votes (diagnostics, tests). */
  readonly signedVotesIn = { batches: 0, votes: 0 };

  constructor(opts: P2POptions, handlers: P2PHandlers) {
    this.opts = opts;
    this.handlers = handlers;
    this.inbound = new InboundLimiter({ perIp: opts.maxInboundPerIp, total: opts.maxInbound });
    this.requests = new RequestService({
      messenger: opts.messenger,
      sync: opts.sync,
      log: opts.log,
      verified: (peer) => this.verified.has(peer),
      onRequest: async (type, payload, from, channel) => handlers.onRequest?.(type, payload, from, channel),
    });
    const outlet = {
      publish: (topic: string, data: Uint8Array) => void this.publish(topic, data),
      welcomes: (topic: string) => this.batching && this.allSubscribe(topic),
    };
    // One pacer for all three: a window's votes of this node go out together with the blocks they
    // are for, votes first. A receiver then counts the votes (one signature check per batch, queued
    // ahead of the blocks') before it applies the blocks, and finalizes them in that same write.
    // Paced apart, a fifth of a receiver's blocks took a second write; blocks first, a tenth.
    const pacer = new FlushPacer(
      () => (this.voteBatchSigner?.flush() ?? 0) + this.voteBatcher.flush() + this.blockBatcher.flush(),
      { windowMs: opts.gossipWindowMs ?? 0, heavyWindowMs: opts.gossipHeavyWindowMs },
    );
    const requestFlush = () => pacer.request();
    const batcher = (batchTopic: string, singleTopic: string, key: 'blocks' | 'votes') =>
      new GossipBatcher(
        outlet,
        {
          batchTopic,
          singleTopic,
          encodeBatch: (items) => encodeBatchMessage(key, items),
          maxItems: MAX_BATCH_ITEMS,
          maxBytes: MAX_BATCH_BYTES,
        },
        requestFlush,
      );
    this.blockBatcher = batcher(TOPICS.blockBatches, TOPICS.blocks, 'blocks');
    this.voteBatcher = batcher(TOPICS.voteBatches, TOPICS.votes, 'votes');
    this.signedVotes = handlers.onVoteBatch !== undefined;
    if (opts.voteSigner)
      this.voteBatchSigner = new VoteBatchSigner(
        {
          publish: (data) => void this.publish(TOPICS.signedVoteBatches, data),
          welcomes: () => this.signedVotes && this.batching && this.allSubscribe(TOPICS.signedVoteBatches),
          fallback: (vote, weight) =>
            this.voteBatcher.add(voteJson(vote, weight), () => encodeVoteMessage(vote, weight)),
        },
        opts.voteSigner.pubKey,
        (m) => opts.voteSigner!.sign(m),
        requestFlush,
      );
  }

  /**
   * Leaves `xe/vote-batches-signed` only: from then on this node gossips votes as one that does
   * not know batch-signed votes (its peers sign theirs singly for it). For tests of mixed networks.
   */
  leaveSignedVoteBatches(): void {
    this.signedVotes = false;
    this.node?.services.pubsub.unsubscribe(TOPICS.signedVoteBatches);
  }

  /**
   * Leaves the batch topics: from then on this node gossips as one that does not know them (its
   * peers send it single messages only). For tests of mixed networks, and a switch should batches
   * ever misbehave.
   */
  leaveBatchTopics(): void {
    const pubsub = this.node?.services.pubsub;
    this.batching = false;
    pubsub?.unsubscribe(TOPICS.blockBatches);
    pubsub?.unsubscribe(TOPICS.voteBatches);
    this.leaveSignedVoteBatches();
  }

  /** Batch messages and single ones this node published (diagnostics, tests). */
  get gossipBatching(): {
    blocks: GossipBatcher['sent'];
    votes: GossipBatcher['sent'];
    signedVotes: VoteBatchSigner['sent'] | undefined;
  } {
    return {
      blocks: this.blockBatcher.sent,
      votes: this.voteBatcher.sent,
      signedVotes: this.voteBatchSigner?.sent,
    };
  }

  /**
   * True when there are peers and every one that passed netcheck subscribes to `topic`: a batch
   * topic is used only then, so no peer misses an item (a node that does not know batches does not
   * subscribe to them).
   */
  allSubscribe(topic: string): boolean {
    const pubsub = this.node?.services.pubsub;
    if (!pubsub || this.verified.size === 0) return false;
    const subs = new Set(pubsub.getSubscribers(topic).map((p) => p.toString()));
    for (const id of this.verified.keys()) if (!subs.has(id)) return false;
    return true;
  }

  /** Whether `peer` subscribes to a topic now, as far as this node has heard. */
  subscribesTo(topic: keyof typeof TOPICS, peer: string): boolean {
    const pubsub = this.node?.services.pubsub;
    return pubsub?.getSubscribers(TOPICS[topic]).some((p) => p.toString() === peer) ?? false;
  }

  /** Messenger requests refused by the limits so far, and the limits themselves (spec 5.7, N-09). */
  get messengerStats(): MessengerStats {
    return this.requests.messengerStats;
  }

  /** Inbound connections open now and refused so far by the caps (N-09). */
  get inboundStats(): { open: number; refused: number; max_per_ip: number; max_total: number } {
    return {
      open: this.inbound.count,
      refused: this.inbound.refused,
      max_per_ip: this.inbound.perIp,
      max_total: this.inbound.total,
    };
  }

  /**
   * The gater's inbound check, straight after a socket is accepted and before any handshake work:
   * over a cap the socket is dropped; otherwise it is counted until it closes.
   */
  private denyInbound(maConn: MultiaddrConnection): boolean {
    const ip = maConn.remoteAddr.getComponents().find((c) => c.name === 'ip4' || c.name === 'ip6')?.value;
    const release = this.inbound.admit(ip);
    if (!release) {
      // Once per 10 s at most: a flood must not become a flood of log lines.
      if (Date.now() - this.lastCapWarning > 10_000) {
        this.lastCapWarning = Date.now();
        this.opts.log?.warn(
          { addr: maConn.remoteAddr.toString(), refused: this.inbound.refused },
          'inbound connections refused: cap reached',
        );
      }
      return true;
    }
    maConn.addEventListener('close', release, { once: true });
    return false;
  }

  get peerId(): string {
    return this.node?.peerId.toString() ?? '';
  }

  get listenAddrs(): string[] {
    return this.node?.getMultiaddrs().map((m) => m.toString()) ?? [];
  }

  peers(): PeerInfo[] {
    return [...this.verified.values()];
  }

  /** A peer's gossip score (negative once it sent invalid messages). */
  score(peer: string): number {
    // The score is public on the implementation but not on its published interface.
    const pubsub = this.node?.services.pubsub as unknown as { getScore?: (id: string) => number } | undefined;
    return pubsub?.getScore?.(peer) ?? 0;
  }

  isBanned(peer: string): boolean {
    const until = this.banned.get(peer);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.banned.delete(peer);
    return false;
  }

  async start(): Promise<void> {
    const denied = (peerId: PeerId) => this.isBanned(peerId.toString());
    this.node = await createLibp2p({
      privateKey: this.opts.privateKey,
      nodeInfo: { name: 'xe', version: this.opts.hello.version, userAgent: `xe/${this.opts.hello.version}` },
      addresses: { listen: this.opts.listen },
      transports: [tcp()],
      connectionEncrypters: [nodeConnectionEncrypter()],
      streamMuxers: [nodeStreamMuxer()],
      connectionManager: {
        // The gater below enforces the caps; libp2p's own total must leave room for them plus the
        // peers this node dials itself.
        maxConnections: this.inbound.total + 64,
      },
      connectionGater: {
        denyInboundConnection: (maConn) => this.denyInbound(maConn),
        denyDialPeer: denied,
        denyInboundEncryptedConnection: denied,
        denyOutboundEncryptedConnection: denied,
      },
      services: {
        identify: identify(),
        // Payloads authenticate themselves (blocks by their accounts' keys, votes by their
        // representatives'), so gossip messages are not signed again per hop: signing and checking
        // every message at every node cost more than the ledger work. A message's id is its
        // content's hash, so the same block or vote from two peers is one message.
        pubsub: gossipsub({
          allowPublishToZeroTopicPeers: true,
          emitSelf: false,
          globalSignaturePolicy: 'StrictNoSign',
          msgIdFn: (msg) => sha256Node(msg.data),
          maxInboundDataLength: MAX_GOSSIP_BYTES + 1024,
          // IDONTWANT (gossipsub 1.2) tells every other mesh peer, for each message received, not to
          // send it again: a control message to each (its own encryption, frame and write) that
          // only saves them a duplicate costing about as much, unless the message is large. From
          // the default 512 bytes, every block batch sent one: the three-node benchmark's nodes
          // spent 1,252-1,360 µs a block together with it, 1,205-1,242 with it only for messages
          // of 16 KiB and more (alternating runs).
          idontwantMinDataSize: IDONTWANT_MIN_BYTES,
          // A peer that sends invalid messages loses score quadratically with their number; below
          // the graylist threshold everything it sends is dropped unread.
          scoreParams: createPeerScoreParams({
            topics: Object.fromEntries(
              Object.values(TOPICS).map((t) => [
                t,
                createTopicScoreParams({
                  topicWeight: 1,
                  invalidMessageDeliveriesWeight: -100,
                  invalidMessageDeliveriesDecay: 0.99,
                }),
              ]),
            ),
          }),
          scoreThresholds: { gossipThreshold: -100, publishThreshold: -500, graylistThreshold: -1000 },
        }),
      },
    });
    await this.node.handle(NETCHECK_PROTOCOL, (stream, connection) =>
      this.answerNetcheck(stream, connection),
    );
    for (const [channel, protocol] of this.requests.protocols) {
      await this.node.handle(
        protocol,
        (stream, connection) => this.requests.answer(stream, connection, channel),
        { maxInboundStreams: MAX_INBOUND_REQUEST_STREAMS },
      );
    }
    await this.node.handle(
      TUNNEL_PROTOCOL,
      (stream, connection) => {
        const from = connection.remotePeer.toString();
        if (!this.handlers.onTunnel || !this.verified.has(from)) stream.abort(new Error('no tunnel'));
        else this.handlers.onTunnel(stream, from);
      },
      { maxInboundStreams: 64 },
    );
    this.node.addEventListener('connection:open', (e) => {
      const conn = e.detail;
      if (conn.direction === 'outbound') void this.initiateNetcheck(conn);
    });
    this.node.addEventListener('peer:disconnect', (e) => {
      const id = e.detail.toString();
      if (!this.node?.getConnections(e.detail).length) this.verified.delete(id);
    });
    const pubsub = this.node.services.pubsub;
    pubsub.topicValidators.set(TOPICS.blocks, async (peer, msg) => {
      if (!this.verified.has(peer.toString())) return TopicValidatorResult.Ignore;
      const block = decodeBlockMessage(msg.data);
      if (!block) {
        // A type of a newer network is not the relaying peer's fault: not relayed, not penalised.
        return unknownBlockType(msg.data) === undefined
          ? TopicValidatorResult.Reject
          : TopicValidatorResult.Ignore;
      }
      return VERDICTS[await this.handlers.onBlock(block, peer.toString())];
    });
    pubsub.topicValidators.set(TOPICS.votes, (peer, msg) => {
      if (!this.verified.has(peer.toString())) return TopicValidatorResult.Ignore;
      const vote = decodeVoteMessage(msg.data);
      if (!vote) return TopicValidatorResult.Reject;
      return VERDICTS[this.handlers.onVote(vote, peer.toString())];
    });
    pubsub.topicValidators.set(TOPICS.blockBatches, async (peer, msg) => {
      const from = peer.toString();
      if (!this.verified.has(from)) return TopicValidatorResult.Ignore;
      const batch = decodeBlockBatch(msg.data);
      if (!batch) return TopicValidatorResult.Reject;
      if (batch.blocks.length === 0) return TopicValidatorResult.Ignore;
      // All in one turn: their signatures reach the verify pool as one batch.
      const verdicts = this.handlers.onBlocks
        ? await this.handlers.onBlocks(batch.blocks, from)
        : await Promise.all(batch.blocks.map((b) => this.handlers.onBlock(b, from)));
      // A peer that does not take batches gets what was news here as single messages.
      if (!this.allSubscribe(TOPICS.blockBatches))
        batch.blocks.forEach((b, i) => verdicts[i] === 'accept' && this.publishSingle(TOPICS.blocks, b));
      return batchVerdict(verdicts);
    });
    pubsub.topicValidators.set(TOPICS.voteBatches, async (peer, msg) => {
      const from = peer.toString();
      if (!this.verified.has(from)) return TopicValidatorResult.Ignore;
      const items = decodeVoteBatch(msg.data);
      if (!items) return TopicValidatorResult.Reject;
      const votes = items.map((i) => i.vote);
      const verdicts = this.handlers.onVotes
        ? await this.handlers.onVotes(votes, from)
        : votes.map((v) => this.handlers.onVote(v, from));
      if (!this.allSubscribe(TOPICS.voteBatches))
        items.forEach(
          (it, i) =>
            verdicts[i] === 'accept' &&
            void this.publish(TOPICS.votes, encodeVoteMessage(it.vote, it.weight)),
        );
      return batchVerdict(verdicts);
    });
    pubsub.topicValidators.set(TOPICS.signedVoteBatches, async (peer, msg) => {
      const from = peer.toString();
      if (!this.verified.has(from) || !this.handlers.onVoteBatch) return TopicValidatorResult.Ignore;
      let batch: SignedVoteBatch;
      try {
        batch = decodeSignedVoteBatch(msg.data, sha256Node);
      } catch {
        return TopicValidatorResult.Reject; // malformed, oversized, a foreign key or a vote twice
      }
      const verdicts = await this.handlers.onVoteBatch(batch, from);
      if (!verdicts) return TopicValidatorResult.Reject; // bad batch signature: nothing counted
      this.signedVotesIn.batches += 1;
      this.signedVotesIn.votes += batch.votes.length;
      // A peer that does not take this format gets the news with each vote's own signature. Those
      // were not checked here (the batch's was): checked now, so no peer is sent a forged one.
      // In the verify pool when there is one (a batch of 256 is ~25 ms of checks), and not waited
      // for: the batch goes on to the peers that take it meanwhile.
      if (!this.allSubscribe(TOPICS.signedVoteBatches)) {
        const news = batch.votes.filter((_, i) => verdicts[i] === 'accept');
        void Promise.all(news.map((v) => this.checkVote(v))).then((ok) =>
          news.forEach((v, i) => {
            if (ok[i])
              this.voteBatcher.add(voteJson(v, batch.weight), () => encodeVoteMessage(v, batch.weight));
          }),
        );
      }
      return batchVerdict(verdicts);
    });
    pubsub.topicValidators.set(TOPICS.statechain, async (peer, msg) => {
      if (!this.verified.has(peer.toString())) return TopicValidatorResult.Ignore;
      const block = decodeStateMessage(msg.data);
      if (!block) return TopicValidatorResult.Reject;
      return VERDICTS[await this.handlers.onStateBlock(block, peer.toString())];
    });
    pubsub.topicValidators.set(TOPICS.directory, (peer, msg) => {
      if (!this.verified.has(peer.toString()) || !this.handlers.onRegistration)
        return TopicValidatorResult.Ignore;
      const reg = decodeRegistration(msg.data);
      if (!reg) return TopicValidatorResult.Reject;
      return VERDICTS[this.handlers.onRegistration(reg, peer.toString())];
    });
    pubsub.topicValidators.set(TOPICS.certificates, async (peer, msg) => {
      if (!this.verified.has(peer.toString()) || !this.handlers.onCertificate)
        return TopicValidatorResult.Ignore;
      const cert = decodeCertificateMessage(msg.data);
      if (!cert) return TopicValidatorResult.Reject;
      return VERDICTS[await this.handlers.onCertificate(cert, peer.toString())];
    });
    pubsub.topicValidators.set(TOPICS.marketplace, (peer, msg) => {
      if (!this.verified.has(peer.toString()) || !this.handlers.onMarketplace)
        return TopicValidatorResult.Ignore;
      const m = decodeMarketplaceMessage(msg.data);
      if (!m) return TopicValidatorResult.Reject;
      return VERDICTS[this.handlers.onMarketplace(m, peer.toString())];
    });
    for (const t of Object.values(TOPICS)) {
      if (t === TOPICS.signedVoteBatches && !this.signedVotes) continue;
      if (
        this.batching ||
        (t !== TOPICS.blockBatches && t !== TOPICS.voteBatches && t !== TOPICS.signedVoteBatches)
      )
        pubsub.subscribe(t);
    }
    this.redial();
    this.redialTimer = setInterval(() => this.redial(), REDIAL_MS);
    this.redialTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.redialTimer) clearInterval(this.redialTimer);
    await this.node?.stop();
    this.verified.clear();
  }

  /** Keeps the configured peers connected (libp2p does not redial addresses on its own). */
  private redial(): void {
    const node = this.node;
    if (!node) return;
    for (const addr of this.opts.dial) {
      let ma;
      try {
        ma = multiaddr(addr);
      } catch {
        this.opts.log?.warn({ addr }, 'not a multiaddr: not dialled');
        continue;
      }
      const peer = ma.getComponents().find((c) => c.name === 'p2p')?.value;
      if (peer && (this.isBanned(peer) || this.verified.has(peer))) continue;
      if (!peer && node.getConnections().some((c) => c.remoteAddr.toString().startsWith(addr))) continue;
      node.dial(ma).catch((err: Error) => this.opts.log?.debug({ addr, err: err.message }, 'dial failed'));
    }
  }

  private async initiateNetcheck(conn: Connection): Promise<void> {
    const peer = conn.remotePeer.toString();
    try {
      const stream = await conn.newStream(NETCHECK_PROTOCOL, {
        signal: AbortSignal.timeout(NETCHECK_TIMEOUT_MS),
      });
      stream.send(encodeHello(this.opts.hello));
      const bytes = await readOnce(stream, 4096);
      await stream.close().catch(() => {});
      const remote = bytes && decodeHello(bytes);
      this.settle(
        conn,
        remote ? incompatibility(this.opts.hello, remote) : 'no valid netcheck answer',
        remote,
      );
    } catch (err) {
      this.opts.log?.debug({ peer, err: (err as Error).message }, 'netcheck failed');
      await conn.close().catch(() => {});
    }
  }

  private async answerNetcheck(stream: Stream, conn: Connection): Promise<void> {
    const bytes = await readOnce(stream, 4096);
    const remote = bytes && decodeHello(bytes);
    stream.send(encodeHello(this.opts.hello));
    await stream.close().catch(() => {});
    this.settle(conn, remote ? incompatibility(this.opts.hello, remote) : 'no valid netcheck hello', remote);
  }

  /** Records a verified peer, or refuses one on another network for `banMs`. */
  private settle(conn: Connection, problem: string | undefined, remote: NetcheckHello | undefined): void {
    const peer = conn.remotePeer.toString();
    if (problem !== undefined) {
      this.opts.log?.warn({ peer, reason: problem }, 'peer refused');
      this.banned.set(peer, Date.now() + (this.opts.banMs ?? 10 * 60_000));
      this.verified.delete(peer);
      void conn.close().catch(() => {});
      return;
    }
    if (!this.verified.has(peer)) {
      this.verified.set(peer, {
        id: peer,
        address: conn.remoteAddr.toString(),
        version: remote!.version,
        features: remote!.features.slice(0, 64),
        connected_at: BigInt(Date.now()) * 1_000_000n,
      });
      this.opts.log?.info({ peer, addr: conn.remoteAddr.toString() }, 'peer connected');
      this.handlers.onPeer?.(peer);
    }
  }

  /**
   * Dialable addresses of the verified peers (as they announced them through identify), for peer
   * exchange: a node learns of peers beyond the ones it was told to dial.
   */
  async knownAddrs(): Promise<string[]> {
    const node = this.node;
    if (!node) return [];
    const out: string[] = node.getMultiaddrs().map((m) => m.toString());
    for (const id of this.verified.keys()) {
      const conn = node.getConnections().find((c) => c.remotePeer.toString() === id);
      if (!conn) continue;
      try {
        const peer = await node.peerStore.get(conn.remotePeer);
        for (const a of peer.addresses) {
          const s = a.multiaddr.toString();
          out.push(s.includes('/p2p/') ? s : `${s}/p2p/${id}`);
        }
      } catch {
        // not in the store (yet): skip
      }
    }
    return [...new Set(out)];
  }

  /** Dials addresses learned from peers, up to `maxPeers` connected peers. */
  discover(addrs: string[], maxPeers = 16): void {
    const node = this.node;
    if (!node) return;
    for (const addr of addrs) {
      if (this.verified.size >= maxPeers) return;
      const id = /\/p2p\/(\w+)$/.exec(addr)?.[1];
      if (!id || id === this.peerId || this.verified.has(id) || this.isBanned(id)) continue;
      let ma;
      try {
        ma = multiaddr(addr);
      } catch {
        continue;
      }
      node.dial(ma).catch(() => {});
    }
  }

  /**
   * Sends a request to a verified peer and returns its answer's payload. Throws a NetError: the
   * peer's error answer (ERR_PEER_ANSWER), or a request that could not be made or finished.
   */
  request<T>(
    peer: string,
    type: string,
    payload: unknown,
    opts: { raw?: (path: JsonPath) => boolean; channel?: RequestChannel; timeoutMs?: number } = {},
  ): Promise<T> {
    const node = this.node;
    if (!node || !this.verified.has(peer))
      return Promise.reject(new NetError('ERR_NOT_CONNECTED', `not connected to ${peer}`));
    return this.requests.ask<T>(peer, type, payload, opts, () =>
      node.getConnections().find((c) => c.remotePeer.toString() === peer && c.status === 'open'),
    );
  }

  /** Whether `peer` is connected and passed netcheck (requests to it can be made). */
  isVerified(peer: string): boolean {
    return this.verified.has(peer);
  }

  /**
   * Dials a peer known by id only (its addresses from the peer store), in the background: once it
   * passes netcheck, `onPeer` reports it. For senders that wait for a given node (the chat outbox).
   */
  connect(peer: string): void {
    const node = this.node;
    if (!node || this.verified.has(peer) || this.isBanned(peer) || peer === this.peerId) return;
    let id;
    try {
      id = peerIdFromString(peer);
    } catch {
      return;
    }
    node
      .dial(id, { signal: AbortSignal.timeout(10_000) })
      .catch((err: Error) => this.opts.log?.debug({ peer, err: err.message }, 'dial failed'));
  }

  /**
   * A new stream of `protocol` to a verified peer (the VM tunnel), over its open connection or a
   * new dial when there is none (the provider may not be a direct peer yet, but it is known).
   */
  async openStream(peer: string, protocol: string, signal?: AbortSignal): Promise<Stream> {
    const node = this.node;
    if (!node) throw new NetError('ERR_NOT_CONNECTED', 'peer-to-peer networking is not running');
    const conn =
      node.getConnections().find((c) => c.remotePeer.toString() === peer && c.status === 'open') ??
      (await node.dial(peerIdFromString(peer), { signal }));
    return conn.newStream(protocol, { signal });
  }

  /** A vote's own signature, in the verify pool when the node gave one. */
  private checkVote(v: Vote & { signature: string }): Promise<boolean> {
    const pool = this.opts.verifier;
    if (!pool) return Promise.resolve(verifyVote(v, verifyBytesNode));
    const b = voteCheckBytes(v);
    return b ? pool.verify(b.sig, b.msg, b.pub).catch(() => false) : Promise.resolve(false);
  }

  /** Queued for this turn's batch (gossip-batcher.ts), or its own message where batches are not taken. */
  publishBlock(block: Block): Promise<void> {
    this.blockBatcher.add(blockJson(block), () => encodeBlockMessage(block));
    return Promise.resolve();
  }

  publishVote(vote: Vote & { signature: string }, weight: bigint): Promise<void> {
    // This node's own votes: batch-signed while every peer takes that (vote-batch-signer.ts).
    if (this.voteBatchSigner?.add(vote, weight)) return Promise.resolve();
    this.voteBatcher.add(voteJson(vote, weight), () => encodeVoteMessage(vote, weight));
    return Promise.resolve();
  }

  private publishSingle(topic: string, block: Block): void {
    void this.publish(topic, encodeBlockMessage(block));
  }

  async publishRegistration(r: Registration): Promise<void> {
    await this.publish(TOPICS.directory, encodeRegistration(r));
  }

  async publishCertificate(cert: PerformanceCertificate): Promise<void> {
    await this.publish(TOPICS.certificates, encodeCertificateMessage(cert));
  }

  async publishMarketplace(msg: MarketplaceGossip): Promise<void> {
    await this.publish(TOPICS.marketplace, encodeMarketplaceMessage(msg));
  }

  async publishStateBlock(block: StateBlock): Promise<void> {
    await this.publish(TOPICS.statechain, encodeStateMessage(block));
  }

  private async publish(topic: string, data: Uint8Array): Promise<void> {
    try {
      await this.node?.services.pubsub.publish(topic, data);
    } catch (err) {
      // A message already seen (a duplicate) or no peers: nothing to do.
      this.opts.log?.debug({ topic, err: (err as Error).message }, 'publish failed');
    }
  }
}
