import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { type AppSession, createAppSession } from './app-session.ts';
import { ApiError } from './errors.ts';

/**
 * Browser-facing protections of the local API (decision D10). The node listens on localhost, which a
 * web page can reach: the Host check defeats DNS rebinding (a hostile name re-pointed at 127.0.0.1
 * still carries its own name in Host), CORS lets only the app's own origin read responses, and
 * operator routes need a bearer token that a page cannot know.
 */
export interface SecurityOptions {
  /** The address the server is bound to; allowed as a Host name besides the loopback names. */
  bindAddress: string;
  /** More host names (without port) to accept, e.g. a LAN name the operator chose. */
  allowedHosts?: readonly string[];
  /** Exact origins (scheme://host[:port]) allowed to read responses from a browser. */
  corsOrigins?: readonly string[];
  /** Bearer token for `auth: 'admin'` routes; undefined (or empty) disables those routes (403). */
  adminToken?: string;
}

export const CORS_ALLOW_METHODS = 'GET, POST, OPTIONS';
export const CORS_ALLOW_HEADERS = 'Content-Type, Authorization, Idempotency-Key, X-Source, X-Ledger-App';
export const CORS_MAX_AGE_SECONDS = 3600;

/**
 * Splits a Host header value into its lowercased name and port. IPv6 names keep their brackets
 * ("[::1]"). Returns undefined for anything malformed (empty name, non-numeric or empty port).
 */
export function parseHost(value: string): { name: string; port: number | undefined } | undefined {
  const v = value.trim().toLowerCase();
  let name: string;
  let rest: string;
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    if (end < 0) return undefined;
    name = v.slice(0, end + 1);
    rest = v.slice(end + 1);
  } else {
    const colon = v.indexOf(':');
    name = colon < 0 ? v : v.slice(0, colon);
    rest = colon < 0 ? '' : v.slice(colon);
  }
  if (name === '' || name === '[]') return undefined;
  if (rest === '') return { name, port: undefined };
  const m = /^:(\d{1,5})$/.exec(rest);
  if (m === null) return undefined;
  const port = Number(m[1]);
  return port <= 65535 ? { name, port } : undefined;
}

/** The Host name form of an address: IPv6 literals get brackets. */
function hostNameOf(address: string): string {
  const a = address.trim().toLowerCase();
  return isIP(a) === 6 ? `[${a}]` : a;
}

/**
 * The authority (`host[:port]`, maybe with userinfo) of an absolute-form request target, or
 * undefined for any other form (`/path`, `*`).
 */
export function absoluteFormAuthority(target: string): string | undefined {
  if (target.startsWith('/')) return undefined; // the usual origin form, decided cheaply
  return /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(target)?.[1];
}

function isLoopbackHostName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || (isIP(name) === 4 && name.startsWith('127.'));
}

/** What the Host check reads of a request (Node's IncomingMessage has all three). */
export interface HostedRequest {
  /** The request target as sent: origin-form (`/node`) or absolute-form (`http://host/node`). */
  readonly url?: string | undefined;
  readonly httpVersion: string;
  /** Header names and values as received, alternating: Node keeps only the first of two Hosts. */
  readonly rawHeaders: readonly string[];
}

export interface Security {
  /** An error for a Host value that is missing (HTTP/1.1) or not one of ours; else undefined. */
  checkHost(host: string | undefined, httpVersion: string): ApiError | undefined;
  /**
   * The Host check of a whole request (RFC 9112 3.2): two Host headers are a 400, and an
   * absolute-form target's authority stands in for Host (which the server must then ignore), so
   * `GET http://evil.example/node` is refused like `Host: evil.example`.
   */
  checkRequestHost(request: HostedRequest): ApiError | undefined;
  /** CORS response headers for this request's Origin, or undefined when it is not an allowed origin. */
  corsHeaders(origin: string | undefined): Record<string, string> | undefined;
  /**
   * An error unless `authorization` carries the admin bearer token, or the request carries the
   * window's app session (its cookie together with `X-Ledger-App: 1`; app-session.ts).
   */
  checkAdmin(
    authorization: string | undefined,
    cookie?: string,
    appHeader?: string | string[],
  ): ApiError | undefined;
  /** The window's session with this node; undefined when there is no admin token. */
  readonly appSession: AppSession | undefined;
}

/** Host values remembered as passing (createSecurity's checkHost). */
const HOSTS_PASSED = 64;

export function createSecurity(opts: SecurityOptions): Security {
  const allowedNames = new Set<string>([hostNameOf(opts.bindAddress)]);
  for (const h of opts.allowedHosts ?? []) allowedNames.add(hostNameOf(h));
  const origins = new Set(opts.corsOrigins ?? []);
  // Digests have equal length whatever the token's length, as timingSafeEqual requires, and comparing
  // them leaks nothing useful about the token itself.
  // An empty token counts as none: it would be guessable.
  const token = opts.adminToken;
  const tokenDigest = token === undefined || token === '' ? undefined : sha256(token);
  const appSession = createAppSession(token);

  // Host values that passed: nearly every request names one of a few (`127.0.0.1:<port>`), and parsing
  // each again was a measurable part of a request at ingest. Only values that pass are kept, at most
  // HOSTS_PASSED, so no client can grow it.
  const passed = new Set<string>();

  function checkHost(host: string | undefined, httpVersion: string): ApiError | undefined {
    if (host !== undefined && passed.has(host)) return undefined;
    if (host === undefined || host.trim() === '') {
      // HTTP/1.0 clients may omit Host (browsers never do, so rebinding is not at stake).
      return httpVersion === '1.0' ? undefined : ApiError.badRequest('missing Host header');
    }
    const parsed = parseHost(host);
    if (parsed === undefined) return ApiError.hostNotAllowed();
    if (!isLoopbackHostName(parsed.name) && !allowedNames.has(parsed.name)) return ApiError.hostNotAllowed();
    if (passed.size >= HOSTS_PASSED) passed.clear();
    passed.add(host);
    return undefined;
  }

  return {
    checkHost,
    appSession,

    checkRequestHost(request) {
      let host: string | undefined;
      const raw = request.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i]!;
        if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
        if (host !== undefined) return ApiError.badRequest('duplicate Host header');
        host = raw[i + 1];
      }
      const authority = absoluteFormAuthority(request.url ?? '');
      if (authority === undefined) return checkHost(host, request.httpVersion);
      // Credentials in the target (`http://user@host/`) are no host name of ours.
      return authority.includes('@') ? ApiError.hostNotAllowed() : checkHost(authority, '1.1');
    },

    corsHeaders(origin) {
      if (origin === undefined || !origins.has(origin)) return undefined;
      return {
        'access-control-allow-origin': origin,
        vary: 'Origin',
        'access-control-allow-methods': CORS_ALLOW_METHODS,
        'access-control-allow-headers': CORS_ALLOW_HEADERS,
        'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
        // The development form (the GUI served from another loopback port) sends the app session's
        // cookie; only the exact origins listed get to.
        'access-control-allow-credentials': 'true',
      };
    },

    checkAdmin(authorization, cookie, appHeader) {
      if (tokenDigest === undefined) return ApiError.forbidden();
      const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
      const given = m?.[1];
      if (given === undefined)
        return appSession?.check(cookie, appHeader) === true ? undefined : ApiError.unauthorized();
      return timingSafeEqual(sha256(given), tokenDigest) ? undefined : ApiError.unauthorized();
    },
  };
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
