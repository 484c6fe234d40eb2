import type { Duplex } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import {
  CONSOLE_CLOSE,
  CONSOLE_DEFAULT_SIZE,
  type ConsoleErrorCode,
  type ConsoleServerMessage,
  type ConsoleState,
} from '../../client/console-protocol.ts';
import type { LeaseState } from '../../leasing/records.ts';
import { bytesToHex, hexToBytes } from '../../protocol/hex.ts';
import type { Verifier } from '../../protocol/keys.ts';
import { LEASE_SIGNATURE_WINDOW_NS, verifyLeaseAccess } from '../../protocol/payloads.ts';
import type { SshShell } from '../../vm/ssh-console.ts';
import { MAX_PTY_CELLS, SshConsoleError } from '../../vm/ssh-console-errors.ts';
import { ApiError } from '../errors.ts';
import { isUpgrade, routeUpgrades } from '../ws-upgrade.ts';

/**
 * `GET /vms/:lease/console`: the VM console WebSocket (client/console-protocol.ts). The holder of the
 * lease's access key proves it with the D12 lease signature in the query; the node then opens the
 * lease's tunnel to the VM's SSH server and logs in as root, relaying the SSH user-auth signature to
 * the browser, which holds the key. Terminal bytes then flow both ways in binary frames.
 *
 * Not a route-table route: the table serves JSON answers, this is an upgrade. It still runs behind the
 * server's onRequest checks (connection caps, Host, rate limits), since the upgrade request goes
 * through fastify's routing before it is upgraded (ws-upgrade.ts); and a browser page from a foreign
 * Origin is refused with an HTTP 403 before any upgrade, because browsers apply no CORS to WebSockets.
 */

export const CONSOLE_PATH = '/vms/:lease/console';
export const DEFAULT_SIGN_TIMEOUT_MS = 30_000;
/** Frames are keystrokes, pastes and small JSON: 1 MiB is a generous paste. */
export const CONSOLE_MAX_FRAME_BYTES = 1024 * 1024;
/** Keystrokes typed before the shell is open are kept up to this much, then dropped. */
const EARLY_INPUT_CAP = 64 * 1024;
/** Output is paused while more than this waits to be sent to a slow browser. */
const OUTPUT_HIGH_WATER = 1024 * 1024;

/** What the console reads of a lease (a LeaseRecord has both). */
export interface ConsoleLease {
  readonly state: LeaseState;
  readonly access_pub_key?: string;
}

/** pino's call shape, so the node's logger fits as it is. */
export interface ConsoleLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ConsoleDeps {
  leases: { get(hash: string): ConsoleLease | undefined };
  /** A stream to the lease's VM SSH server: the provider's loopback port, or `/xe/tunnel/2.0.0`. */
  openTunnel(leaseHash: string): Promise<Duplex>;
  /** Unix nanoseconds (the lease signature's window is checked against it). */
  now(): bigint;
  /** Ed25519 verifier for the lease signature (default: the isomorphic one). */
  verify?: Verifier;
  log?: ConsoleLog;
  /**
   * Origins whose pages may open a console (the node's own UI origins and `corsOrigins`). A request
   * with no Origin (a script, not a browser page) is let through: only pages can be made to connect
   * by someone else, and they always send one.
   */
  allowedOrigins: readonly string[];
  /** How long the browser has to answer a `sign` request (default 30 s). */
  signTimeoutMs?: number;
}

/** The close code for each error code (CONSOLE_CLOSE). */
export function consoleCloseCode(code: ConsoleErrorCode): number {
  if (code === 'forbidden') return CONSOLE_CLOSE.forbidden;
  if (code === 'lease_not_found') return CONSOLE_CLOSE.notFound;
  return CONSOLE_CLOSE.error;
}

/** A refusal or failure the socket reports as `{type:'error'}` and closes with. */
export class ConsoleError extends Error {
  readonly code: ConsoleErrorCode;
  constructor(code: ConsoleErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ConsoleError';
    this.code = code;
  }
}

/** The query as sent: fastify gives strings, or arrays for repeated names (refused). */
interface ConsoleQuery {
  ts?: unknown;
  sig?: unknown;
  cols?: unknown;
  rows?: unknown;
}

export interface ConsoleRequest {
  lease: string;
  ts: bigint;
  sig: string;
  cols: number;
  rows: number;
}

/** Format checks of the path and query; nothing is looked up yet. */
export function parseConsoleRequest(leaseParam: unknown, query: ConsoleQuery): ConsoleRequest {
  if (typeof leaseParam !== 'string' || !/^[0-9a-fA-F]{64}$/.test(leaseParam)) {
    throw new ConsoleError('bad_request', 'invalid lease hash');
  }
  // A Unix ns timestamp fits in 19 digits; more is no time the window could accept.
  if (typeof query.ts !== 'string' || !/^[0-9]{1,19}$/.test(query.ts)) {
    throw new ConsoleError('bad_request', 'ts must be a Unix timestamp in nanoseconds');
  }
  if (typeof query.sig !== 'string' || !/^[0-9a-fA-F]{128}$/.test(query.sig)) {
    throw new ConsoleError('bad_request', 'sig must be a 64-byte signature in hex');
  }
  return {
    lease: leaseParam.toLowerCase(),
    ts: BigInt(query.ts),
    sig: query.sig,
    cols: cellsParam(query.cols, 'cols', CONSOLE_DEFAULT_SIZE.cols),
    rows: cellsParam(query.rows, 'rows', CONSOLE_DEFAULT_SIZE.rows),
  };
}

function cellsParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^[0-9]{1,4}$/.test(value)) {
    throw new ConsoleError('bad_request', `${name} must be an integer from 1 to ${MAX_PTY_CELLS}`);
  }
  return cellsOrThrow(Number(value), name);
}

function cellsOrThrow(n: unknown, name: string): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PTY_CELLS) {
    throw new ConsoleError('bad_request', `${name} must be an integer from 1 to ${MAX_PTY_CELLS}`);
  }
  return n;
}

/**
 * The lease checks, in the order of the tunnel's (reference-behavior 1.6), with the replay-proof
 * signature of D12: known, accepted with an access key, then signed by that key within 60 s of now.
 */
export function authorizeConsole(req: ConsoleRequest, deps: ConsoleDeps): string {
  const lease = deps.leases.get(req.lease);
  if (lease === undefined) throw new ConsoleError('lease_not_found', 'lease not found');
  const key = lease.access_pub_key;
  if (lease.state !== 'accepted' || key === undefined || key === '') {
    throw new ConsoleError('lease_not_active', 'lease not active');
  }
  const skew = deps.now() - req.ts;
  if (skew > LEASE_SIGNATURE_WINDOW_NS || skew < -LEASE_SIGNATURE_WINDOW_NS) {
    throw new ConsoleError('forbidden', 'signature expired: ts is more than 60 s from the node clock');
  }
  if (!verifyLeaseAccess(req.lease, key, req.sig, req.ts, deps.verify)) {
    throw new ConsoleError('forbidden', 'signature verification failed');
  }
  return key;
}

/**
 * Registers the console route, and the routing of upgrade requests, on the API server (before it
 * listens). The server's own hooks run first; then the Origin check; then the upgrade and the session.
 */
export function registerConsoleRoute(app: FastifyInstance, deps: ConsoleDeps): void {
  const origins = new Set(deps.allowedOrigins);
  const log = deps.log ?? app.log;
  const acceptUpgrade = routeUpgrades(app, { maxPayload: CONSOLE_MAX_FRAME_BYTES });
  app.route({
    method: 'GET',
    url: CONSOLE_PATH,
    onRequest: (request, _reply, done) => {
      const origin = request.headers.origin;
      if (origin !== undefined && !origins.has(origin)) {
        done(new ApiError('forbidden', 'origin not allowed'));
      } else done();
    },
    handler: async (request, reply) => {
      // A plain GET (no upgrade): the route exists, but only speaks WebSocket.
      if (!isUpgrade(request)) throw ApiError.badRequest('WebSocket upgrade required');
      acceptUpgrade(request, reply, (socket) => {
        const session = new ConsoleSession(socket, deps, log);
        void session.run(request);
      });
      return reply;
    },
  });
}

/** One console connection, from the checks to the last byte. */
class ConsoleSession {
  readonly #ws: WebSocket;
  readonly #deps: ConsoleDeps;
  readonly #log: ConsoleLog;
  #closed = false;
  #tunnel: Duplex | undefined;
  #shell: SshShell | undefined;
  #nextSignId = 1;
  readonly #pendingSigns = new Map<
    number,
    { resolve(sig: Uint8Array): void; reject(e: Error): void; timer: NodeJS.Timeout }
  >();
  #earlyInput: Buffer[] = [];
  /** The size last asked for: a resize sent while logging in applies once the shell is open. */
  #size = { cols: CONSOLE_DEFAULT_SIZE.cols as number, rows: CONSOLE_DEFAULT_SIZE.rows as number };
  #earlyBytes = 0;
  #lease = '';

  constructor(ws: WebSocket, deps: ConsoleDeps, log: ConsoleLog) {
    this.#ws = ws;
    this.#deps = deps;
    this.#log = log;
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('close', () => this.#teardown());
    ws.on('error', () => this.#teardown());
  }

  async run(request: FastifyRequest): Promise<void> {
    try {
      const params = request.params as { lease?: unknown };
      const req = parseConsoleRequest(params.lease, request.query as ConsoleQuery);
      this.#lease = req.lease;
      this.#size = { cols: req.cols, rows: req.rows };
      const accessPubKey = authorizeConsole(req, this.#deps);

      this.#status('connecting');
      let tunnel: Duplex;
      try {
        tunnel = await this.#deps.openTunnel(req.lease);
      } catch (e) {
        // VmAccess.open already says "tunnel error: ..."; other openers may not.
        const message = messageOf(e);
        throw new ConsoleError(
          'tunnel_failed',
          /^tunnel error/.test(message) ? message : `tunnel error: ${message}`,
          e,
        );
      }
      this.#tunnel = tunnel;
      // The browser may have left while the tunnel was being opened.
      if (this.#closed) return this.#teardown();

      this.#status('authenticating');
      let shell: SshShell;
      try {
        // ssh2 loads with the first console, not with the node (ssh-console-errors.ts).
        const { openSshConsole } = await import('../../vm/ssh-console.ts');
        shell = await openSshConsole({
          tunnel,
          accessPubKey,
          sign: (data) => this.#askSignature(data),
          cols: req.cols,
          rows: req.rows,
        });
      } catch (e) {
        if (e instanceof SshConsoleError) throw new ConsoleError(e.code, e.message, e);
        throw e;
      }
      this.#shell = shell;
      if (this.#closed) return this.#teardown();
      if (this.#size.cols !== req.cols || this.#size.rows !== req.rows) {
        shell.resize(this.#size.cols, this.#size.rows);
      }
      this.#log.info({ lease: req.lease, host_key: shell.hostKeyFingerprint }, 'VM console open');
      this.#status('ready', `logged in as root; host key ${shell.hostKeyFingerprint}`);
      this.#pipe(shell);
      const end = await shell.ended;
      // Output the shell wrote before it ended goes out before the exit message.
      await finished(shell.stream, { writable: false }).catch(() => undefined);
      if (end.error !== undefined && end.exitCode === null)
        throw new ConsoleError('ssh_failed', end.error.message);
      this.#send({ type: 'exit', code: end.exitCode });
      this.#status('closed', end.signal === undefined ? undefined : `killed by SIG${end.signal}`);
      this.#close(CONSOLE_CLOSE.normal, 'shell exited');
    } catch (e) {
      this.#fail(e);
    }
  }

  #fail(e: unknown): void {
    const err =
      e instanceof ConsoleError ? e : new ConsoleError('ssh_failed', 'internal error in the console', e);
    if (!(e instanceof ConsoleError)) this.#log.warn({ err: e, lease: this.#lease }, 'VM console failed');
    this.#send({ type: 'error', code: err.code, message: err.message });
    this.#close(consoleCloseCode(err.code), err.code);
  }

  /** Both directions, each with backpressure: a slow side pauses the other instead of buffering. */
  #pipe(shell: SshShell): void {
    const out = shell.stream;
    out.on('data', (chunk: Buffer) => {
      if (this.#closed) return;
      this.#ws.send(chunk, { binary: true }, () => {
        if (out.isPaused() && this.#ws.bufferedAmount < OUTPUT_HIGH_WATER / 2) out.resume();
      });
      if (this.#ws.bufferedAmount > OUTPUT_HIGH_WATER) out.pause();
    });
    out.on('drain', () => this.#ws.resume());
    for (const chunk of this.#earlyInput) this.#input(chunk);
    this.#earlyInput = [];
  }

  #input(chunk: Buffer): void {
    const shell = this.#shell;
    if (shell === undefined) {
      // Typed before the login finished (the terminal is shown at once): kept, within reason.
      if (this.#earlyBytes + chunk.length <= EARLY_INPUT_CAP) {
        this.#earlyInput.push(chunk);
        this.#earlyBytes += chunk.length;
      }
      return;
    }
    if (!shell.stream.write(chunk)) this.#ws.pause();
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    const bytes = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data);
    if (isBinary) return this.#input(bytes);
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      return this.#fail(new ConsoleError('bad_request', 'text frames must be JSON messages'));
    }
    try {
      this.#onClientMessage(msg);
    } catch (e) {
      this.#fail(e);
    }
  }

  #onClientMessage(msg: unknown): void {
    const m = (typeof msg === 'object' && msg !== null ? msg : {}) as Record<string, unknown>;
    if (m.type === 'resize') {
      const cols = cellsOrThrow(m.cols, 'cols');
      const rows = cellsOrThrow(m.rows, 'rows');
      this.#size = { cols, rows };
      this.#shell?.resize(cols, rows);
    } else if (m.type === 'signature') {
      const pending = typeof m.id === 'number' ? this.#pendingSigns.get(m.id) : undefined;
      // An answer to no open request (late, after the time-out) changes nothing.
      if (pending === undefined) return;
      if (typeof m.signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(m.signature)) {
        throw new ConsoleError('bad_request', 'signature must be 64 bytes in hex');
      }
      this.#pendingSigns.delete(m.id as number);
      clearTimeout(pending.timer);
      pending.resolve(hexToBytes(m.signature, 64));
    } else throw new ConsoleError('bad_request', 'unknown message type');
  }

  /** Relays an SSH user-auth signing request to the browser, which holds the access key. */
  #askSignature(data: Uint8Array): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(new SshConsoleError('auth_failed', 'the browser left'));
    const id = this.#nextSignId++;
    const timeoutMs = this.#deps.signTimeoutMs ?? DEFAULT_SIGN_TIMEOUT_MS;
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pendingSigns.delete(id);
        reject(
          new SshConsoleError(
            'auth_failed',
            `no signature from the browser within ${Math.round(timeoutMs / 1000)} s`,
          ),
        );
      }, timeoutMs);
      this.#pendingSigns.set(id, { resolve, reject, timer });
      this.#send({ type: 'sign', id, data: bytesToHex(data) });
    });
  }

  #status(state: ConsoleState, message?: string): void {
    this.#send(message === undefined ? { type: 'status', state } : { type: 'status', state, message });
  }

  #send(msg: ConsoleServerMessage): void {
    if (!this.#closed && this.#ws.readyState === this.#ws.OPEN) this.#ws.send(JSON.stringify(msg));
  }

  #close(code: number, reason: string): void {
    if (this.#ws.readyState === this.#ws.OPEN) this.#ws.close(code, reason);
    this.#teardown();
  }

  /** Whoever ends first, everything ends: pending signs, the shell, the SSH connection, the tunnel. */
  #teardown(): void {
    this.#closed = true;
    for (const p of this.#pendingSigns.values()) {
      clearTimeout(p.timer);
      p.reject(new SshConsoleError('auth_failed', 'the browser left'));
    }
    this.#pendingSigns.clear();
    this.#shell?.close();
    this.#tunnel?.destroy();
    if (this.#ws.readyState === this.#ws.OPEN || this.#ws.readyState === this.#ws.CONNECTING) {
      this.#ws.terminate();
    }
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
