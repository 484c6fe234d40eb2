/**
 * What the app window may load, open and be granted. Pure: main.ts wires these into `will-navigate`,
 * `will-redirect`, `setWindowOpenHandler`, the IPC sender check and the permission handlers.
 *
 * The window shows only the node's own origin (http://127.0.0.1:<port>). A link to any other http(s)
 * address opens in the system browser; everything else (file:, data:, javascript:, custom schemes,
 * other local ports) is refused.
 */

export type NavigationDecision = 'allow' | 'open-external' | 'deny';

/** The origin of a URL, or undefined when it has none worth comparing (unparsable, opaque). */
export function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * True when `url` is an http(s) URL of the node's origin (scheme, host and port all equal). blob:
 * and filesystem: URLs carry their creator's origin but are not pages the node served: not ours.
 */
export function isNodeUrl(url: string, nodeOrigin: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === nodeOrigin;
}

/** For a navigation or a window.open: stay (node origin), hand to the system browser, or refuse. */
export function decideNavigation(url: string, nodeOrigin: string): NavigationDecision {
  if (isNodeUrl(url, nodeOrigin)) return 'allow';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'deny';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'deny';
  // user:password@host links are a classic disguise; nothing the GUI shows needs them.
  if (parsed.username !== '' || parsed.password !== '') return 'deny';
  return 'open-external';
}

/**
 * Permissions (camera, notifications, geolocation...) are refused, except clipboard writes by the
 * node's own page (the GUI's "copy address" buttons).
 */
export const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export function permissionAllowed(permission: string, requestingUrl: string, nodeOrigin: string): boolean {
  return ALLOWED_PERMISSIONS.has(permission) && isNodeUrl(requestingUrl, nodeOrigin);
}
