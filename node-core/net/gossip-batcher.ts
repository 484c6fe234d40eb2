import { everyTurn } from './flush-pacer.ts';

/**
 * Gathers what the node publishes in one turn of the event loop (under a steady stream, in one
 * gossip window: net/flush-pacer.ts) into batch messages (issue #18): the blocks its commits
 * accepted, the votes they produced. A GossipSub message costs each hop the same framing,
 * encryption, id hash, duplicate filter, IDONTWANT and score bookkeeping whatever it carries; in the
 * three-node benchmark one message per block and per vote was over half of what a receiving node's
 * thread did per block. Batches go out only while every peer subscribes to the
 * batch topic (so takes them); otherwise every item goes out as its own message on the old topic,
 * as nodes that do not know batches expect.
 */
export interface BatchOutlet {
  /** Publishes a message on a topic. */
  publish(topic: string, data: Uint8Array): void;
  /** True while every connected peer subscribes to `topic`. */
  welcomes(topic: string): boolean;
}

export interface BatchTopic {
  /** The topic batches go to. */
  batchTopic: string;
  /** The topic single messages go to. */
  singleTopic: string;
  /** A batch message of encoded items (gossip.ts encodeBatchMessage). */
  encodeBatch(items: readonly Uint8Array[]): Uint8Array;
  maxItems: number;
  maxBytes: number;
}

interface Queued {
  /**
   * The item as it stands in a batch, as UTF-8: under a steady stream an item waits a gossip window
   * (100 ms), and its JSON text (a tree of concatenated strings) outlived the young generation's
   * collections and was copied by each; bytes outside the heap are not.
   */
  bytes: Uint8Array;
  /** The item's own message, for peers without batches. */
  single: () => Uint8Array;
}

export class GossipBatcher {
  private readonly outlet: BatchOutlet;
  private readonly t: BatchTopic;
  private readonly requestFlush: () => void;
  private queue: Queued[] = [];
  /** Messages sent: batches, and items sent alone (diagnostics, tests). */
  readonly sent = { batches: 0, batched_items: 0, singles: 0 };

  /**
   * `requestFlush` asks for `flush` to be called (a FlushPacer the node shares between its gossip
   * batchers, so a window's blocks and the votes for them go out together); by default at the end
   * of the turn.
   */
  constructor(outlet: BatchOutlet, topic: BatchTopic, requestFlush?: () => void) {
    this.outlet = outlet;
    this.t = topic;
    this.requestFlush = requestFlush ?? everyTurn(() => this.flush());
  }

  /** Queues an item: its JSON text in a batch, `single` its own message for peers without batches. */
  add(json: string, single: () => Uint8Array): void {
    this.queue.push({ bytes: Buffer.from(json), single });
    this.requestFlush();
  }

  /** Sends what is queued now; returns how many items that was. */
  flush(): number {
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return 0;
    if (items.length === 1 || !this.outlet.welcomes(this.t.batchTopic)) {
      for (const it of items) this.outlet.publish(this.t.singleTopic, it.single());
      this.sent.singles += items.length;
      return items.length;
    }
    let chunk: Uint8Array[] = [];
    let bytes = 0;
    const send = () => {
      this.outlet.publish(this.t.batchTopic, this.t.encodeBatch(chunk));
      this.sent.batches += 1;
      this.sent.batched_items += chunk.length;
      chunk = [];
      bytes = 0;
    };
    for (const it of items) {
      if (
        chunk.length > 0 &&
        (chunk.length >= this.t.maxItems || bytes + it.bytes.length + 1 > this.t.maxBytes)
      )
        send();
      chunk.push(it.bytes);
      bytes += it.bytes.length + 1;
    }
    send();
    return items.length;
  }
}
