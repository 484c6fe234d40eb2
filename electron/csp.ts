import { formatCsp, UI_CSP_DIRECTIVES } from '../node-core/api/ui-csp.ts';

/**
 * The Content-Security-Policy the desktop shell enforces on everything its session loads: the GUI's
 * own policy (node-core/api/ui-csp.ts) with connect-src narrowed from 'self' to the node's exact
 * origin and its WebSocket form (ws:// for http, wss:// for https: the VM console), which an http
 * source expression does not cover. Set by main through `session.webRequest.onHeadersReceived`, so it holds even if the page
 * came from somewhere that sent no policy or a weaker one.
 */
export function desktopCsp(nodeOrigin: string): string {
  const origin = checkOrigin(nodeOrigin);
  const ws = origin.replace(/^http/, 'ws');
  return formatCsp(
    UI_CSP_DIRECTIVES.map(([name, value]) => [name, name === 'connect-src' ? `${origin} ${ws}` : value]),
  );
}

/** An http(s) origin exactly as URL#origin writes it (`http://127.0.0.1:8080`), or a TypeError. */
export function checkOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new TypeError(`not an origin: ${origin}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
    throw new TypeError(`not an http(s) origin: ${origin}`);
  }
  return origin;
}

/**
 * Response headers with our policy in place of any Content-Security-Policy (of whatever case) the
 * server sent. Report-only policies are left alone: they enforce nothing.
 */
export function withCsp(
  headers: Readonly<Record<string, string[] | string>> | undefined,
  policy: string,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-security-policy') continue;
    out[name] = Array.isArray(value) ? [...value] : [value];
  }
  out['Content-Security-Policy'] = [policy];
  return out;
}
