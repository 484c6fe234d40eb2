import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type fastifySend from '@fastify/send';
import { ApiError } from './errors.ts';

/**
 * Sends one file of the built GUI (ui-static.ts decides which): @fastify/send does the HTTP of it
 * (ETag, Last-Modified, conditional GET, ranges, HEAD), this module picks the precompressed copy
 * the browser takes and sets the headers the caller gives.
 *
 * @fastify/send is required on the first file sent, not with the node: @fastify/static, which the
 * node used before, loads glob, send, mime and http-errors at start, 35-50 ms of CPU before the API
 * listens (the start-up target is 0.6 s), for a GUI that a headless node may never serve.
 */

type Send = typeof fastifySend;

let sendPackage: Send | undefined;
function sendModule(): Send {
  return (sendPackage ??= createRequire(import.meta.url)('@fastify/send') as Send);
}

/** The compressed copies the build writes beside a file (scripts/precompress.ts), by preference. */
const ENCODINGS = [
  { name: 'br', ext: '.br' },
  { name: 'gzip', ext: '.gz' },
] as const;

type Encoding = (typeof ENCODINGS)[number];

/**
 * The encodings an Accept-Encoding header takes, best first: by q-value, then Brotli before gzip.
 * `*` stands for gzip (as browsers that send it mean), `q=0` refuses. No header: none.
 */
export function acceptedEncodings(header: string | undefined): Encoding[] {
  if (header === undefined) return [];
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [token, ...params] = part.split(';').map((s) => s.trim());
    if (!token) continue;
    let weight = 1;
    for (const p of params) {
      // A q-value that is not a number from 0 to 1 refuses the coding rather than take it at 1.
      if (p.startsWith('q=')) weight = /^q=(?:0(?:\.\d*)?|1(?:\.0*)?)$/.test(p) ? Number(p.slice(2)) : 0;
    }
    const name = token === '*' ? 'gzip' : token;
    // An explicit entry wins over `*`'s.
    if (token === '*' && q.has(name)) continue;
    q.set(name, weight);
  }
  return ENCODINGS.filter((e) => (q.get(e.name) ?? 0) > 0).sort(
    (a, b) => (q.get(b.name) ?? 0) - (q.get(a.name) ?? 0),
  );
}

/** Adds `name` to the Vary header (an earlier hook may have set one, e.g. `Origin`). */
function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('vary');
  const value = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  if (value === '') reply.header('vary', name);
  else if (!value.split(',').some((v) => ['*', name].includes(v.trim().toLowerCase())))
    reply.header('vary', `${value}, ${name}`);
}

/** Whether `path` is a regular file (false when it is missing or unreadable). */
export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface UiSendOptions {
  /** The folder served (absolute). */
  root: string;
  /** Headers of the file `file` (absolute path of the plain file, whichever copy goes). */
  setHeaders(reply: FastifyReply, file: string): void;
}

/**
 * Sends `rel` (a path below `root`, already checked safe by the caller) to the request: its Brotli
 * or gzip copy when the browser takes one and it exists, else the file itself; always with `Vary:
 * Accept-Encoding`, since the choice depends on it. A file that vanished answers the JSON 404.
 */
export async function sendUiFile(
  request: FastifyRequest,
  reply: FastifyReply,
  rel: string,
  opts: UiSendOptions,
): Promise<FastifyReply> {
  const { encoding, result } = await sendBestCopy(request, rel, opts.root);
  // A directory (the caller sends files only) or a file gone since the caller looked: 404. Other
  // errors (416 for a range past the end, 412 for a failed If-Match) go to the server's error
  // handler, which answers a 4xx it did not raise itself as the documented 400.
  if (result.type === 'directory') throw ApiError.notFound();
  if (result.type === 'error') {
    if (isNotFound(result)) throw ApiError.notFound();
    throw result.metadata.error;
  }
  reply.code(result.statusCode);
  reply.headers(result.headers);
  opts.setHeaders(reply, join(opts.root, rel));
  addVary(reply, 'accept-encoding');
  if (encoding !== undefined && result.statusCode !== 304) {
    const send = sendModule();
    const type = send.mime.getType(rel) ?? 'application/octet-stream';
    reply.header('content-type', send.isUtf8MimeType(type) ? `${type}; charset=utf-8` : type);
    reply.header('content-encoding', encoding.name);
  }
  return reply.send(result.stream);
}

type SendResult = Awaited<ReturnType<Send>>;

/** Whether send found no file at the path it was given. */
function isNotFound(result: SendResult): boolean {
  return result.type === 'error' && (result.metadata.error as { status?: number }).status === 404;
}

/**
 * send's answer for the best copy of `rel` there is: the compressed copies the browser takes, best
 * first, then the file itself. send looks each up on disk itself (a missing copy is its 404), so the
 * copy that is there costs no look of ours beforehand.
 */
async function sendBestCopy(
  request: FastifyRequest,
  rel: string,
  root: string,
): Promise<{ encoding: Encoding | undefined; result: SendResult }> {
  const send = sendModule();
  const options = {
    root,
    dotfiles: 'deny' as const,
    index: false,
    // Cache-Control is the caller's; send's default would be `max-age=0`.
    cacheControl: false,
  };
  // send takes a URL path below its root (it decodes it again).
  const sendPath = (ext: string) => send(request.raw, encodeURI(`/${rel}${ext}`), options);
  for (const encoding of acceptedEncodings(request.headers['accept-encoding'] as string | undefined)) {
    const result = await sendPath(encoding.ext);
    if (result.type !== 'directory' && !isNotFound(result)) return { encoding, result };
    result.stream.destroy();
  }
  return { encoding: undefined, result: await sendPath('') };
}
