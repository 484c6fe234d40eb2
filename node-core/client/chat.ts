import type { ChatEnvelope } from '../protocol/payloads.ts';
import { parseJson } from '../protocol/json.ts';
import type { LedgerClient } from './client.ts';
import { apiErrorOf } from './errors.ts';
import { bigOf } from './leasing.ts';

/**
 * Typed calls of the chat routes, isomorphic (the GUI and scripts): send, the ownership-proof
 * challenge, reads with a proof, retry, directory registration, and the event stream read with
 * fetch (an EventSource cannot be given a fresh proof on each reconnect). Signing stays with the
 * caller: `prove` turns a challenge into the query of an ownership proof.
 */

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface ChatDelivery {
  state: DeliveryState;
  attempts: number;
  updated_at: bigint;
  error?: string;
}

export interface ChatMessage {
  id: string;
  from: string;
  to: string;
  message: string;
  timestamp: bigint;
  /** Set for a message this node hands to the recipient's node. */
  delivery?: ChatDelivery;
}

export interface SendAnswer {
  id: string;
  /** local: stored for a recipient on this node; delivered: their node took it; queued: in the outbox. */
  delivery: 'local' | 'delivered' | 'queued' | 'failed';
  error?: string;
}

/** The query of an ownership proof (protocol.md 8.2), built by the caller from a challenge. */
export type Prove = (challenge: string) => Promise<string> | string;

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function deliveryOf(v: unknown): ChatDelivery | undefined {
  const o = obj(v);
  if (o.state !== 'pending' && o.state !== 'delivered' && o.state !== 'failed') return undefined;
  return {
    state: o.state,
    attempts: Number(bigOf(o.attempts) ?? 0n),
    updated_at: bigOf(o.updated_at) ?? 0n,
    ...(typeof o.error === 'string' ? { error: o.error } : {}),
  };
}

export function chatMessageOf(v: unknown): ChatMessage | undefined {
  const o = obj(v);
  const ts = bigOf(o.timestamp);
  if (typeof o.id !== 'string' || typeof o.from !== 'string' || typeof o.to !== 'string' || ts === undefined)
    return undefined;
  const delivery = deliveryOf(o.delivery);
  return {
    id: o.id,
    from: o.from,
    to: o.to,
    message: typeof o.message === 'string' ? o.message : '',
    timestamp: ts,
    ...(delivery ? { delivery } : {}),
  };
}

/** One frame of the event stream: a stored message (with its id), or a delivery change. */
export type ChatEvent =
  | { kind: 'message'; id: string; message: ChatMessage }
  | { kind: 'delivery'; id: string; from: string; to: string; delivery: ChatDelivery }
  | { kind: 'overflow' };

export class ChatApi {
  private readonly client: LedgerClient;

  constructor(client: LedgerClient) {
    this.client = client;
  }

  async send(envelope: ChatEnvelope & { signature: string }): Promise<SendAnswer> {
    const r = obj(await this.client.post('/chat/send', envelope));
    const d = r.delivery;
    return {
      id: typeof r.id === 'string' ? r.id : '',
      delivery: d === 'delivered' || d === 'queued' || d === 'failed' ? d : 'local',
      ...(typeof r.error === 'string' ? { error: r.error } : {}),
    };
  }

  async challenge(): Promise<string> {
    const r = obj(await this.client.get('/chat/auth/challenge'));
    if (typeof r.challenge !== 'string') throw new Error('the node answered no challenge');
    return r.challenge;
  }

  /** An account's messages, newest first, with a fresh proof. */
  async messages(prove: Prove, opts: { since?: bigint; offset?: number; limit?: number } = {}) {
    const q = await prove(await this.challenge());
    const extra = [
      opts.since !== undefined ? `&since=${opts.since}` : '',
      opts.offset !== undefined ? `&offset=${opts.offset}` : '',
      opts.limit !== undefined ? `&limit=${opts.limit}` : '',
    ].join('');
    const path = `/chat/messages?${q}${extra}`;
    const r = await this.client.request('GET', path);
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', '/chat/messages', r.headers);
    const list = Array.isArray(r.body) ? r.body : [];
    return {
      messages: list.map(chatMessageOf).filter((m): m is ChatMessage => m !== undefined),
      total: Number(r.headers.get('x-total-count') ?? list.length),
    };
  }

  /** The keys an account exchanged messages with, latest first. */
  async contacts(prove: Prove): Promise<string[]> {
    const q = await prove(await this.challenge());
    const r = await this.client.get<unknown[]>(`/chat/contacts?${q}`);
    return (Array.isArray(r) ? r : []).filter((k): k is string => typeof k === 'string');
  }

  /** Puts a failed message back in the outbox (the sender's proof). */
  async retry(id: string, prove: Prove): Promise<SendAnswer> {
    const q = await prove(await this.challenge());
    const path = `/chat/messages/${id}/retry?${q}`;
    const r = await this.client.request('POST', path);
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'POST', `/chat/messages/${id}/retry`, r.headers);
    const o = obj(r.body);
    const d = o.delivery;
    return {
      id,
      delivery: d === 'delivered' || d === 'failed' ? d : 'queued',
      ...(typeof o.error === 'string' ? { error: o.error } : {}),
    };
  }

  /**
   * Reads the event stream of one account until `signal` aborts or the stream ends (resolves with
   * the last event id seen, for the next connect). The caller reconnects, with a fresh proof.
   */
  async stream(
    prove: Prove,
    onEvent: (e: ChatEvent) => void,
    opts: { lastEventId?: string; signal?: AbortSignal; fetch?: typeof fetch } = {},
  ): Promise<string | undefined> {
    const q = await prove(await this.challenge());
    const resume = opts.lastEventId ? `&last_event_id=${opts.lastEventId}` : '';
    const res = await (opts.fetch ?? fetch)(`${this.client.baseUrl}/chat/events?${q}${resume}`, {
      headers: { accept: 'text/event-stream' },
      signal: opts.signal,
    });
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '');
      let body: unknown;
      try {
        body = parseJson(text);
      } catch {
        body = undefined;
      }
      throw apiErrorOf(res.status, body, 'GET', '/chat/events', res.headers);
    }
    let last = opts.lastEventId;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return last;
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const e = parseFrame(frame);
        if (!e) continue;
        if (e.kind === 'message') last = e.id;
        onEvent(e);
      }
    }
  }

  /** Registers an account with this node in the directory (a signed registration). */
  async register(registration: {
    account: string;
    node_peer: string;
    timestamp: bigint;
    signature: string;
  }): Promise<void> {
    await this.client.post('/directory/register', registration);
  }

  /** The public key an account (address or key) is registered under, or undefined (404). */
  async lookup(account: string): Promise<{ pub_key: string; node_peer: string } | undefined> {
    const r = await this.client.request('GET', `/directory/${account}`);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', '/directory', r.headers);
    const o = obj(r.body);
    const key = typeof o.pub_key === 'string' ? o.pub_key : typeof o.account === 'string' ? o.account : '';
    return { pub_key: key, node_peer: typeof o.node_peer === 'string' ? o.node_peer : '' };
  }
}

/** One SSE frame (comments and pings give undefined). */
export function parseFrame(frame: string): ChatEvent | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (event === 'overflow') return { kind: 'overflow' };
  if (data.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJson(data.join('\n'));
  } catch {
    return undefined;
  }
  if (event === 'delivery') {
    const o = obj(parsed);
    const delivery = deliveryOf(parsed);
    if (!delivery || typeof o.id !== 'string') return undefined;
    return { kind: 'delivery', id: o.id, from: String(o.from ?? ''), to: String(o.to ?? ''), delivery };
  }
  const message = chatMessageOf(parsed);
  return message && id !== undefined ? { kind: 'message', id, message } : undefined;
}
