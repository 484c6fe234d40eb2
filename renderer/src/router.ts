import { useSyncExternalStore } from 'react';

/**
 * Hash routes (#/wallet/send, #/explorer/block/<hash>): the node serves one index.html at /ui/, and
 * a hash never reaches the server, so every page can be reloaded or linked without server rewrites.
 */
function subscribe(l: () => void): () => void {
  window.addEventListener('hashchange', l);
  return () => window.removeEventListener('hashchange', l);
}

function current(): string {
  return window.location.hash.replace(/^#\/?/, '');
}

/** The route's segments, e.g. ['wallet', 'send']. */
export function useRoute(): string[] {
  const hash = useSyncExternalStore(subscribe, current);
  return hash
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

export function navigate(...segments: string[]): void {
  window.location.hash = href(...segments);
}
