import type { Block } from '../protocol/block.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { type JsonValue, parseJson, stringifyJson } from '../protocol/json.ts';
import { parseDifficulty } from '../protocol/pow.ts';
import type { NodeRoutes, ProxyRoutes } from './api-routes.generated.ts';
import { apiErrorOf, NodeUnreachable } from './errors.ts';
import { DEFAULT_RETRY, NO_RETRY, type RetryPolicy, retryDelay } from './retry.ts';

/**
 * A typed HTTP client of the node's API, for the renderer, local scripts and tests. Isomorphic: uses
 * `fetch` only. Responses are parsed losslessly, so 64-bit values arrive exact. Errors are typed
 * (errors.ts), retryable refusals and 429s are retried within limits (retry.ts), and every mutating
 * call can carry an Idempotency-Key. `call` and `callProxy` reach every route of the node and proxy
 * forms with the types generated from the route table (api-routes.generated.ts).
 */
export { ApiRequestError } from './errors.ts';

export interface NodeInfo {
  id: string;
  address: string;
  public_key: string;
  version: string;
  network_id: string;
  genesis_hash: string;
  peer_count: number;
  accounts: number;
  block_count: number;
  pow_difficulty: bigint;
  chat_pow_difficulty: bigint;
  /** When the network began, Unix ns (genesis blocks say 0); null when the node cannot tell yet. */
  network_started_at: bigint | null;
  raw: Record<string, unknown>;
}

export interface ChainBlock {
  block: Block;
  finalized: boolean;
}

export interface PendingSend {
  hash: string;
  from: string;
  amount: bigint;
  asset: string;
  timestamp: bigint;
}

export interface ClientOptions {
  fetch?: typeof fetch;
  adminToken?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Automatic retries (retry.ts); false: none. Default DEFAULT_RETRY. */
  retry?: Partial<RetryPolicy> | false;
  /** How the client waits between tries (tests pass a recording one). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The window's session (a page served by the node): sends `X-Ledger-App: 1` and the session
   * cookie (`credentials: 'include'`), which the node accepts on operator routes in place of the
   * admin token (POST /app/session opens it).
   */
  appSession?: boolean;
}

export interface RequestOptions {
  /**
   * Sent as Idempotency-Key: the node runs the request once and answers a repeat with the first
   * answer (24 h). With a key, the client may also retry a mutating request that is not a block.
   */
  idempotencyKey?: string;
  /** Extra headers of this request. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** This request's retries, over the client's. */
  retry?: Partial<RetryPolicy> | false;
}

/** A fresh Idempotency-Key (a random UUID). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Path parameters, query and body of a route, as its generated type asks for them. */
export type CallArgs<R extends { params: unknown; query: unknown; body: unknown }> =
  (R['params'] extends Record<string, never> ? { params?: R['params'] } : { params: R['params'] }) & {
    query?: Partial<R['query']>;
  } & (R['body'] extends undefined ? { body?: undefined } : { body: R['body'] | string });

/** The proxy form's base path (decisions D11). */
export const PROXY_PREFIX = '/api/v1';

/** `/accounts/{address}/chain` with params and query filled in, each part URL-encoded. */
export function fillPath(template: string, params: object = {}, query: object = {}): string {
  const p = params as Record<string, unknown>;
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = p[name];
    if (v === undefined || v === null) throw new TypeError(`missing path parameter ${name} of ${template}`);
    return encodeURIComponent(String(v));
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (v !== undefined && v !== null) q.set(k, String(v));
  }
  const qs = q.toString();
  return qs === '' ? path : `${path}?${qs}`;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class LedgerClient {
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly opts: ClientOptions;
  /** Whether the node answers the proxy form of an account's chain (undefined: not asked yet). */
  private proxyChain: boolean | undefined;

  constructor(baseUrl: string, opts: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.fetchFn = opts.fetch ?? ((...a) => fetch(...a));
    this.opts = opts;
  }

  /** A raw request: status, headers and the lossless body (undefined when empty or not JSON). */
  /**
   * A raw request, once, with no retry: status, headers and the lossless body (undefined when empty
   * or not JSON). Rejects with NodeUnreachable when nothing answers.
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<{ status: number; headers: Headers; body: JsonValue | undefined }> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.opts.headers,
      ...opts.headers,
    };
    if (this.opts.adminToken) headers.authorization = `Bearer ${this.opts.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    if (this.opts.appSession) headers['x-ledger-app'] = '1';
    let res: Response;
    try {
      res = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(this.opts.appSession ? { credentials: 'include' as const } : {}),
      });
    } catch (e) {
      if (e instanceof Error && e.name === 'AbortError') throw e;
      throw new NodeUnreachable(this.baseUrl, e);
    }
    const text = await res.text();
    let parsed: JsonValue | undefined;
    try {
      parsed = text === '' ? undefined : parseJson(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /**
   * A request that throws the typed error of an error answer (errors.ts) and retries what the retry
   * policy allows; resolves with the answer of a 2xx.
   */
  async send(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<{ status: number; headers: Headers; body: JsonValue | undefined }> {
    const policy = this.policy(opts.retry);
    const sleep = this.opts.sleep ?? realSleep;
    for (let attempt = 1; ; attempt++) {
      const r = await this.request(method, path, body, opts);
      if (r.status < 400) return r;
      const err = apiErrorOf(r.status, r.body, method, path, r.headers);
      const wait = retryDelay(policy, err, attempt, {
        method,
        path,
        idempotent: opts.idempotencyKey !== undefined,
      });
      if (wait === undefined) throw err;
      await sleep(wait);
    }
  }

  private policy(own: Partial<RetryPolicy> | false | undefined): RetryPolicy {
    if (own === false || (own === undefined && this.opts.retry === false)) return NO_RETRY;
    const base = this.opts.retry === false ? NO_RETRY : { ...DEFAULT_RETRY, ...this.opts.retry };
    return own === undefined ? base : { ...DEFAULT_RETRY, ...own };
  }

  async get<T = JsonValue>(path: string, opts?: RequestOptions): Promise<T> {
    return (await this.send('GET', path, undefined, opts)).body as T;
  }

  async post<T = JsonValue>(path: string, body: unknown, opts?: RequestOptions): Promise<T> {
    return (await this.send('POST', path, body, opts)).body as T;
  }

  /** Any route of the node form, typed from the route table: `call('GET /accounts/{address}/balance', ...)`. */
  async call<K extends keyof NodeRoutes>(
    route: K,
    args: CallArgs<NodeRoutes[K]>,
    opts?: RequestOptions,
  ): Promise<NodeRoutes[K]['response']> {
    return (await this.callRaw('', route, args, opts)).body as NodeRoutes[K]['response'];
  }

  /** Any route of the proxy form (under /api/v1), typed from the route table. */
  async callProxy<K extends keyof ProxyRoutes>(
    route: K,
    args: CallArgs<ProxyRoutes[K]>,
    opts?: RequestOptions,
  ): Promise<ProxyRoutes[K]['response']> {
    return (await this.callRaw(PROXY_PREFIX, route, args, opts)).body as ProxyRoutes[K]['response'];
  }

  private callRaw(
    prefix: string,
    route: string,
    args: { params?: object; query?: object; body?: unknown },
    opts?: RequestOptions,
  ): Promise<{ status: number; headers: Headers; body: JsonValue | undefined }> {
    const space = route.indexOf(' ');
    const method = route.slice(0, space) as 'GET' | 'POST';
    const path = fillPath(route.slice(space + 1), args.params, args.query);
    return this.send(method, `${prefix}${path === '/' && prefix !== '' ? '' : path}`, args.body, opts);
  }

  async node(): Promise<NodeInfo> {
    const raw = await this.get<Record<string, unknown>>('/node');
    return {
      id: raw.id as string,
      address: raw.address as string,
      public_key: raw.public_key as string,
      version: raw.version as string,
      network_id: raw.network_id as string,
      genesis_hash: raw.genesis_hash as string,
      peer_count: Number(raw.peer_count),
      accounts: Number(raw.accounts),
      block_count: Number(raw.block_count),
      pow_difficulty: parseDifficulty(raw.pow_difficulty as string),
      chat_pow_difficulty: parseDifficulty(raw.chat_pow_difficulty as string),
      network_started_at:
        typeof raw.network_started_at === 'number' || typeof raw.network_started_at === 'bigint'
          ? BigInt(raw.network_started_at)
          : null,
      raw,
    };
  }

  /** Non-zero balances by asset; an unknown account has none. */
  async balances(address: string): Promise<Record<string, bigint>> {
    const r = await this.request('GET', `/accounts/${address}/balance`);
    if (r.status === 404) return {};
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', `/accounts/${address}/balance`, r.headers);
    return Object.fromEntries(
      // Typed from the route table: a change of the route's schema breaks this line at compile time.
      Object.entries(r.body as NodeRoutes['GET /accounts/{address}/balance']['response']).map(([k, v]) => [
        k,
        BigInt(v),
      ]),
    );
  }

  /** A page of an account's chain, oldest first, and the chain length; undefined for an unknown account. */
  async chain(
    address: string,
    offset = 0,
    limit = 100,
  ): Promise<{ total: number; blocks: ChainBlock[] } | undefined> {
    const path = `/accounts/${address}/chain?offset=${offset}&limit=${limit}`;
    // The proxy form first: it answers an account nobody has opened yet with an empty chain (200)
    // where the node form says 404, which a browser logs as an error for every new account. A node
    // without the proxy form (404 there) is asked in the node form from then on.
    if (this.proxyChain !== false) {
      const proxied = await this.request('GET', `/api/v1${path}`);
      if (proxied.status !== 404) {
        this.proxyChain = true;
        if (proxied.status >= 400)
          throw apiErrorOf(proxied.status, proxied.body, 'GET', `/api/v1${path}`, proxied.headers);
        const body = proxied.body as { total: number | string; blocks: Record<string, unknown>[] };
        const total = Number(body.total);
        if (total === 0) return undefined;
        return {
          total,
          blocks: body.blocks.map((b) => ({ block: decodeBlock(b), finalized: b.finalized === true })),
        };
      }
      if (this.proxyChain === undefined) this.proxyChain = false;
    }
    const r = await this.request('GET', path);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', path, r.headers);
    const total = Number(r.headers.get('x-total-count') ?? '0');
    const blocks = (r.body as Record<string, unknown>[]).map((b) => ({
      block: decodeBlock(b),
      finalized: b.finalized === true,
    }));
    return { total, blocks };
  }

  async block(hash: string): Promise<ChainBlock | undefined> {
    const r = await this.request('GET', `/blocks/${hash}`);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw apiErrorOf(r.status, r.body, 'GET', `/blocks/${hash}`, r.headers);
    const b = r.body as Record<string, unknown>;
    return { block: decodeBlock(b), finalized: b.finalized === true };
  }

  async pending(address: string): Promise<PendingSend[]> {
    const list = await this.get<Record<string, unknown>[]>(`/pending/${address}`);
    return list.map((p) => ({
      hash: p.hash as string,
      from: p.from as string,
      amount: BigInt(p.amount as string),
      asset: p.asset as string,
      timestamp: BigInt(p.timestamp as bigint | number),
    }));
  }

  /** Submits a signed, proof-of-work-solved block; resolves with the node's echo. */
  async submit(block: Block, opts?: RequestOptions): Promise<Block> {
    const echo = await this.post<Record<string, unknown>>(
      `/blocks/${block.type}`,
      blockToJson(block, 'node'),
      opts,
    );
    return decodeBlock(echo);
  }
}
