import { ChatApi, type Prove } from '../../../node-core/client/chat.ts';
import { api, errorMessage, isNodeError } from '../api.ts';
import { keystore } from '../keystore/index.ts';

/**
 * The chat routes of the node this window talks to, and the ownership proofs its reads need (each
 * read takes a fresh single-use challenge, signed by the account's key in the keystore).
 */

let instance: ChatApi | undefined;
export function chatApi(): ChatApi {
  instance ??= new ChatApi(api());
  return instance;
}

/** The ownership proof's query for one of the keystore's accounts. */
export function prover(address: string): Prove {
  const key = keystore().publicKeyOf(address);
  return (challenge: string) =>
    `account=${key}&pub_key=${key}&challenge=${challenge}&sig=${keystore().signChatReadAuth(address, challenge)}`;
}

/** Now, in Unix nanoseconds (the envelope's and registration's time). */
export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** What a recipient no node knows gets: the directory has no registration for them. */
export const NOT_REGISTERED =
  'Not registered: they must open their app (no node has this account in its directory).';

/** What to show for a chat call that failed: the node's refusal, or that it could not be reached. */
export function chatError(e: unknown): string {
  if (isNodeError(e) && e.status === 404 && /directory|not registered/i.test(e.message))
    return NOT_REGISTERED;
  return errorMessage(e);
}
