import { useSyncExternalStore } from 'react';

/**
 * How each account's chat stands with the node, for the page to say so plainly: its event stream
 * (connecting, live, or down and retrying at a given time, with why) and its directory
 * registration (others reach the account only while it is registered).
 */

export type StreamStatus =
  /** `error`: why the previous connection ended, while trying again. */
  | { state: 'connecting'; error?: string }
  | { state: 'live' }
  | { state: 'retrying'; error: string; retryAt: number };

export type RegistrationStatus = { ok: true; at: number } | { ok: false; at: number; error: string };

export interface AccountLink {
  stream?: StreamStatus;
  registration?: RegistrationStatus;
}

let links: ReadonlyMap<string, AccountLink> = new Map();
const listeners = new Set<() => void>();

function update(address: string, patch: AccountLink): void {
  const next = new Map(links);
  next.set(address, { ...links.get(address), ...patch });
  links = next;
  for (const l of listeners) l();
}

export function setStreamStatus(address: string, stream: StreamStatus): void {
  update(address, { stream });
}

export function setRegistrationStatus(address: string, registration: RegistrationStatus): void {
  update(address, { registration });
}

/** Forgets every account's status (the keystore locked). */
export function clearLinks(): void {
  links = new Map();
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useAccountLink(address: string): AccountLink {
  const all = useSyncExternalStore(subscribe, () => links);
  return all.get(address) ?? {};
}
