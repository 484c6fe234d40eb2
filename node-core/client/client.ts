import type { Block } from '../protocol/block.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { type JsonValue, parseJson, stringifyJson } from '../protocol/json.ts';
import { parseDifficulty } from '../protocol/pow.ts';

/**
 * A typed HTTP client of the node's API (node form), for the renderer, local scripts and tests.
 * Isomorphic: uses `fetch` only. Responses are parsed losslessly, so 64-bit values arrive exact.
 */
export class ApiRequestError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** The node's `retryable` flag on block rejections (503 = true). */
  readonly retryable: boolean;

  constructor(status: number, body: unknown, method: string, path: string) {
    const msg =
      typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string'
        ? (body as { error: string }).error
        : `HTTP ${status}`;
    super(msg);
    this.name = 'ApiRequestError';
    this.status = status;
    this.body = body;
    this.retryable = (body as { retryable?: boolean } | null)?.retryable === true;
    this.stack = `${this.name}: ${msg} (${method} ${path})`;
  }
}

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
}

export class LedgerClient {
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly opts: ClientOptions;

  constructor(baseUrl: string, opts: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.fetchFn = opts.fetch ?? ((...a) => fetch(...a));
    this.opts = opts;
  }

  /** A raw request: status, headers and the lossless body (undefined when empty or not JSON). */
  async request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: JsonValue | undefined }> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers };
    if (this.opts.adminToken) headers.authorization = `Bearer ${this.opts.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.fetchFn(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body),
    });
    const text = await res.text();
    let parsed: JsonValue | undefined;
    try {
      parsed = text === '' ? undefined : parseJson(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  async get<T = JsonValue>(path: string): Promise<T> {
    const r = await this.request('GET', path);
    if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'GET', path);
    return r.body as T;
  }

  async post<T = JsonValue>(path: string, body: unknown): Promise<T> {
    const r = await this.request('POST', path, body);
    if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'POST', path);
    return r.body as T;
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
      raw,
    };
  }

  /** Non-zero balances by asset; an unknown account has none. */
  async balances(address: string): Promise<Record<string, bigint>> {
    const r = await this.request('GET', `/accounts/${address}/balance`);
    if (r.status === 404) return {};
    if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'GET', `/accounts/${address}/balance`);
    return Object.fromEntries(
      Object.entries(r.body as Record<string, string>).map(([k, v]) => [k, BigInt(v)]),
    );
  }

  /** A page of an account's chain, oldest first, and the chain length; undefined for an unknown account. */
  async chain(
    address: string,
    offset = 0,
    limit = 100,
  ): Promise<{ total: number; blocks: ChainBlock[] } | undefined> {
    const path = `/accounts/${address}/chain?offset=${offset}&limit=${limit}`;
    const r = await this.request('GET', path);
    if (r.status === 404) return undefined;
    if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'GET', path);
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
    if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'GET', `/blocks/${hash}`);
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
  async submit(block: Block): Promise<Block> {
    const echo = await this.post<Record<string, unknown>>(
      `/blocks/${block.type}`,
      blockToJson(block, 'node'),
    );
    return decodeBlock(echo);
  }
}
