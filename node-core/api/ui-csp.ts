/**
 * The GUI's Content-Security-Policy, shared by the node (`/ui/` responses) and the desktop shell
 * (which narrows connect-src to the node's exact origin). Only its own origin for code, data and
 * connections; WebAssembly compilation (proof of work) but no eval; blob: workers (the browser's
 * proof-of-work worker); inline styles (React style props); no plugins, no <base>, no framing, no
 * form posts.
 */
export const UI_CSP_DIRECTIVES: readonly (readonly [string, string])[] = [
  ['default-src', "'self'"],
  ['script-src', "'self' 'wasm-unsafe-eval'"],
  ['style-src', "'self' 'unsafe-inline'"],
  ['img-src', "'self' data:"],
  ['connect-src', "'self'"],
  ['worker-src', "'self' blob:"],
  ['object-src', "'none'"],
  ['base-uri', "'none'"],
  ['frame-ancestors', "'none'"],
  ['form-action', "'none'"],
];

/** Directives as a header value: `name value; name value`. */
export function formatCsp(directives: readonly (readonly [string, string])[]): string {
  return directives.map(([name, value]) => `${name} ${value}`).join('; ');
}

export const UI_CONTENT_SECURITY_POLICY = formatCsp(UI_CSP_DIRECTIVES);
