import { get as httpGet, type ClientRequest, type IncomingMessage } from 'node:http';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson } from '../../node-core/protocol/json.ts';
import type { KeyPair } from '../../node-core/protocol/keys.ts';
import {
  type ChatEnvelope,
  chatEnvelopeIdBytes,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
} from '../../node-core/protocol/payloads.ts';
import { powValid } from '../../node-core/protocol/pow.ts';
import { http, type HttpResult, nowNs } from './ledger-kit.ts';

/**
 * Helpers shared by the chat tests (issue #13): signed envelopes with their proof of work, directory
 * registration, the ownership proof's query parameters, and a Server-Sent Events reader for
 * `GET /chat/events`.
 */

/** A message from `from` to `to` signed as the chat store keeps it (no proof of work: the store's tests). */
export function signedMessage(from: KeyPair, to: KeyPair, text: string, timestamp: bigint) {
  return signChatEnvelope(
    { from: from.pub_key, to: to.pub_key, message: text, timestamp },
    hexToBytes(from.seed_hex),
  );
}

/** A signed chat envelope with its proof of work, as `POST /chat/send` takes it. */
export type SignedChatEnvelope = ChatEnvelope & { signature: string; pow_nonce: bigint };

/**
 * A signed envelope from `from` to `to` with proof of work at `difficulty` (the network's chat
 * difficulty, `node.statechain.pow.chat`; 0 accepts any nonce). The search counts up from 0: meant
 * for the tiny difficulties of test networks.
 */
export function chatEnvelope(
  from: KeyPair,
  to: KeyPair | string,
  message: string,
  opts: { timestamp?: bigint; difficulty: bigint },
): SignedChatEnvelope {
  const env: ChatEnvelope = {
    from: from.pub_key,
    to: typeof to === 'string' ? to : to.pub_key,
    message,
    timestamp: opts.timestamp ?? nowNs(),
  };
  const id = chatEnvelopeIdBytes(env);
  let nonce = 0n;
  while (!powValid(id, nonce, opts.difficulty)) nonce += 1n;
  return { ...signChatEnvelope(env, hexToBytes(from.seed_hex)), pow_nonce: nonce };
}

/**
 * Registers `key`'s account in the directory of the node at `url` as living on node `nodePeer`
 * (a peer id: `node.nodeId`); returns the answer (200 on success).
 */
export function registerAccount(
  url: string,
  key: KeyPair,
  nodePeer: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const reg = signDirectoryRegistration(
    { account: key.pub_key, node_peer: nodePeer, timestamp: nowNs() },
    hexToBytes(key.seed_hex),
  );
  return http(url, 'POST', '/directory/register', reg, headers);
}

/**
 * The ownership proof of `account` (default: `key`'s own public key) signed by `key`, over a fresh
 * challenge from `GET /chat/auth/challenge`: the query string `account=…&pub_key=…&challenge=…&sig=…`
 * (no leading `?`). Single use.
 */
export async function chatProof(
  url: string,
  key: KeyPair,
  account: string = key.pub_key,
  headers: Record<string, string> = {},
): Promise<string> {
  const r = await http(url, 'GET', '/chat/auth/challenge', undefined, headers);
  if (r.status !== 200) throw new Error(`GET /chat/auth/challenge answered ${r.status}: ${r.text}`);
  const { challenge } = r.body as { challenge: string };
  const sig = signChatReadAuth(challenge, hexToBytes(key.seed_hex));
  return `account=${account}&pub_key=${key.pub_key}&challenge=${challenge}&sig=${sig}`;
}

/** One SSE frame as parsed: `event` is 'message' when the frame names none. */
export interface ChatEventFrame {
  id?: string;
  event: string;
  data: string;
}

/** An open `GET /chat/events` stream. */
export interface ChatEvents {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Every frame received so far (comments excluded), in order. */
  readonly frames: ChatEventFrame[];
  /** Comment lines received (`connected`, `ping`), without the colon. */
  readonly comments: string[];
  /** The raw body, for a non-200 answer (a JSON error). */
  readonly text: () => string;
  /** Whether the server ended the stream. */
  readonly ended: () => boolean;
  /** The `event: message` frames so far. */
  messages(): ChatEventFrame[];
  /** The `event: message` frames' data, parsed (lossless JSON: bigint for big integers). */
  envelopes(): Record<string, unknown>[];
  /** Resolves with the n-th `event: message` frame (1-based) once it arrived; throws after `ms`. */
  nthMessage(n: number, ms?: number): Promise<ChatEventFrame>;
  /** Resolves once `pred` holds; throws after `ms`, or when the stream ended first. */
  until(pred: () => boolean, ms?: number, what?: string): Promise<void>;
  /** Closes the stream from the client side. */
  close(): void;
}

/**
 * Opens `GET /chat/events?<query>` (query without `?`; '' for the admin's stream, with its bearer
 * token in `headers`) and parses frames as they arrive. Resolves once the answer's headers are in.
 */
export function openChatEvents(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<ChatEvents> {
  const path = query === '' ? '/chat/events' : `/chat/events?${query}`;
  return new Promise((resolve, reject) => {
    const req: ClientRequest = httpGet(`${url}${path}`, { headers }, (res) => {
      const frames: ChatEventFrame[] = [];
      const comments: string[] = [];
      let buf = '';
      let body = '';
      let ended = false;
      let waiters: (() => void)[] = [];
      const wake = () => {
        const w = waiters;
        waiters = [];
        for (const f of w) f();
      };
      const onEnd = () => {
        ended = true;
        wake();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (res.statusCode !== 200) {
          body += chunk;
          return;
        }
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const frame: ChatEventFrame = { event: 'message', data: '' };
          let fields = 0;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              continue;
            }
            fields += 1;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') frame.id = value;
            else if (field === 'event') frame.event = value;
            else if (field === 'data') frame.data += frame.data === '' ? value : `\n${value}`;
          }
          if (fields > 0) frames.push(frame);
        }
        wake();
      });
      res.on('end', onEnd);
      res.on('close', onEnd);
      res.on('error', onEnd);
      const messages = () => frames.filter((f) => f.event === 'message');
      const until = async (pred: () => boolean, ms = 10_000, what = 'condition') => {
        const deadline = Date.now() + ms;
        while (!pred()) {
          if (ended) throw new Error(`chat event stream ended before ${what}`);
          const left = deadline - Date.now();
          if (left <= 0) throw new Error(`timed out waiting for ${what}`);
          await new Promise<void>((done) => {
            const t = setTimeout(done, Math.min(left, 200));
            waiters.push(() => {
              clearTimeout(t);
              done();
            });
          });
        }
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        comments,
        text: () => body,
        ended: () => ended,
        messages,
        envelopes: () => messages().map((f) => parseJson(f.data) as Record<string, unknown>),
        async nthMessage(n, ms = 10_000) {
          await until(() => messages().length >= n, ms, `chat event message #${n}`);
          return messages()[n - 1]!;
        },
        until,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
