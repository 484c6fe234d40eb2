import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from './errors.ts';
import { isFile, sendUiFile } from './ui-send.ts';
import { UI_CONTENT_SECURITY_POLICY } from './ui-csp.ts';

export { UI_CONTENT_SECURITY_POLICY };

/**
 * The built GUI (renderer/dist) served by the node at `/ui/`: the same origin as the API, so the
 * page needs no CORS and the desktop window and a plain browser load the very same thing. These
 * routes are not part of the API contract: they are absent from the `GET /` manifest and the OpenAPI
 * document, but the server's Host check and rate limits apply to them like to any request.
 *
 * - `/ui` redirects to `/ui/`; `/ui/` is index.html.
 * - A file that exists is sent (ETag, Last-Modified, conditional GET and ranges from @fastify/send,
 *   loaded with the first file sent: ui-send.ts).
 * - Any other path under `/ui/` is a route of the single-page app and gets index.html, except
 *   paths that name a file (a dot in the last segment) or lie under `/ui/assets/`: a missing script
 *   must be a 404, not HTML with status 200 that the browser then refuses as a module.
 * - Vite's hashed files (`/ui/assets/`) are cached for a year; everything else, index.html first,
 *   is revalidated on every use (`no-cache`), so a rebuilt GUI shows up on the next load.
 * - HTML carries a strict Content-Security-Policy (UI_CONTENT_SECURITY_POLICY).
 * - Text files go compressed (Brotli, else gzip) to a browser that accepts it, from the copies the
 *   build writes beside them (scripts/precompress.ts); every answer says `Vary: Accept-Encoding`.
 * - Before `npm run build:renderer` has run, `/ui/` answers 404 with a JSON error saying so. The
 *   check is made per request: building the GUI while the node runs needs no restart.
 * - `/favicon.ico` is the GUI's icon (renderer/public/favicon.ico, copied to the build's root), for
 *   browsers that ask the origin's root for it: a page of the API opened in a browser (`/`, a JSON
 *   answer) then shows the app's icon instead of logging a 404. The GUI's own page links to
 *   `/ui/favicon.ico` and `/ui/icon.png` (renderer/index.html).
 */

export const UI_PATH = '/ui/';

export const UI_NOT_BUILT_MESSAGE = 'the GUI is not built: run `npm run build:renderer`, then reload';

/** Where browsers look for a site's icon when a page names none. */
export const FAVICON_PATH = '/favicon.ico';

/** Vite's output folder for content-hashed files. */
const ASSETS_DIR = 'assets';
const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';
const CACHE_REVALIDATE = 'no-cache';
const INDEX_FILE = 'index.html';

/**
 * The path below `/ui/` of a request URL as safe relative segments ('' for `/ui/` itself), or
 * undefined when it cannot name anything we serve: a bad %-escape, an empty, `.` or `..` segment, a
 * dotfile, or a decoded segment holding a separator or NUL. A trailing slash is allowed (an app route).
 */
export function uiRelativePath(url: string): string | undefined {
  const end = url.search(/[?#]/);
  const pathname = end < 0 ? url : url.slice(0, end);
  if (!pathname.startsWith(UI_PATH)) return undefined;
  const raw = pathname.slice(UI_PATH.length);
  if (raw === '') return '';
  const parts = raw.split('/');
  if (parts[parts.length - 1] === '') parts.pop();
  const segments: string[] = [];
  for (const part of parts) {
    let s: string;
    try {
      s = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    if (s === '' || s.startsWith('.') || /[/\\\0]/.test(s)) return undefined;
    segments.push(s);
  }
  return segments.join('/');
}

/** Whether a path that matched no file is an app route (index.html) rather than a missing file (404). */
export function isAppRoute(rel: string): boolean {
  if (rel === ASSETS_DIR || rel.startsWith(`${ASSETS_DIR}/`)) return false;
  const last = rel.slice(rel.lastIndexOf('/') + 1);
  return !last.includes('.');
}

/** Registers the `/ui` routes serving the built GUI in `dir` (normally renderer/dist). */
export function registerUi(app: FastifyInstance, dir: string): void {
  const root = resolve(dir);
  const indexPath = join(root, INDEX_FILE);

  const cacheControlFor = (file: string): string => {
    const rel = relative(root, file);
    const inAssets = !isAbsolute(rel) && rel.split(sep)[0] === ASSETS_DIR;
    return inAssets ? CACHE_IMMUTABLE : CACHE_REVALIDATE;
  };

  const sendOpts = {
    root,
    setHeaders(reply: FastifyReply, file: string) {
      reply.header('x-content-type-options', 'nosniff');
      reply.header('cache-control', cacheControlFor(file));
      if (file.endsWith('.html')) {
        reply.header('content-security-policy', UI_CONTENT_SECURITY_POLICY);
        reply.header('referrer-policy', 'no-referrer');
      }
    },
  };

  app.get('/ui', async (request, reply) => {
    const q = request.url.indexOf('?');
    return reply.redirect(UI_PATH + (q < 0 ? '' : request.url.slice(q)), 301);
  });

  // A file that exists is sent without asking whether index.html does too (one look at the disk
  // fewer per file); only a miss says whether the GUI is built at all.
  const notBuilt = () => !isFile(indexPath);

  app.get(FAVICON_PATH, async (request, reply) => {
    if (isFile(join(root, FAVICON_PATH))) return sendUiFile(request, reply, FAVICON_PATH.slice(1), sendOpts);
    throw notBuilt() ? ApiError.notFound(UI_NOT_BUILT_MESSAGE) : ApiError.notFound();
  });

  app.get('/ui/*', async (request, reply) => {
    const rel = uiRelativePath(request.url);
    if (rel && isFile(join(root, rel))) return sendUiFile(request, reply, rel, sendOpts);
    if (notBuilt()) throw ApiError.notFound(UI_NOT_BUILT_MESSAGE);
    if (rel === undefined || (rel !== '' && !isAppRoute(rel))) throw ApiError.notFound();
    return sendUiFile(request, reply, INDEX_FILE, sendOpts);
  });
}
