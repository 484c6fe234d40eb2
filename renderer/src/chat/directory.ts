import { api } from '../api.ts';
import { keystore } from '../keystore/index.ts';
import { chatApi, chatError, NOT_REGISTERED, nowNs } from './api.ts';
import { setRegistrationStatus } from './link.ts';

/**
 * The directory, seen from the window: registering the wallet's accounts with the node it talks to
 * (a registration lives 30 minutes; registration.ts renews it), and finding the public key an
 * address or key is registered under.
 */

/** Registers each account with this node; every account's outcome goes to the link status. */
export async function registerAccounts(addresses: readonly string[]): Promise<void> {
  let nodePeer: string;
  try {
    nodePeer = (await api().node()).id;
  } catch (e) {
    for (const a of addresses) setRegistrationStatus(a, { ok: false, at: Date.now(), error: chatError(e) });
    throw e;
  }
  let failure: unknown;
  for (const address of addresses) {
    try {
      const reg = keystore().signRegistration(address, nodePeer, nowNs());
      await chatApi().register(reg);
      setRegistrationStatus(address, { ok: true, at: Date.now() });
    } catch (e) {
      setRegistrationStatus(address, { ok: false, at: Date.now(), error: chatError(e) });
      failure ??= e;
    }
  }
  if (failure !== undefined) throw failure;
}

/** The public key an address or key is registered under, or why there is none. */
export async function resolveRecipient(account: string): Promise<{ key: string } | { error: string }> {
  try {
    const entry = await chatApi().lookup(account);
    if (!entry || entry.pub_key === '') return { error: NOT_REGISTERED };
    return { key: entry.pub_key };
  } catch (e) {
    return { error: chatError(e) };
  }
}
