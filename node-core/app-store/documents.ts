import { stringifyJson, type JsonValue } from '../protocol/json.ts';
import { AppStoreError } from './errors.ts';

/**
 * The app store's documents and the shape each must have. The node checks shapes so that a broken
 * or hostile write cannot leave a document that the window (or a checkpoint diff) cannot read.
 */
export const APP_DOCUMENT_KEYS = [
  'vault',
  'settings',
  'address_book',
  'wallet_labels',
  'lease_holds',
  'chat_read',
] as const;
export type AppDocumentKey = (typeof APP_DOCUMENT_KEYS)[number];

/** The vault's text (encrypted keystore; scrypt-hardened, so a few KB per account at most). */
export const MAX_VAULT_CHARS = 4 * 1024 * 1024;
export const MAX_ADDRESS_BOOK = 10_000;
export const MAX_NAME_CHARS = 200;
/** Any other document, as JSON text. */
export const MAX_DOCUMENT_CHARS = 1024 * 1024;

const HEX64 = /^[0-9a-f]{64}$/;

export function isAppDocumentKey(key: string): key is AppDocumentKey {
  return (APP_DOCUMENT_KEYS as readonly string[]).includes(key);
}

function isObject(v: JsonValue): v is { readonly [k: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkName(key: string, what: string, v: JsonValue): void {
  if (typeof v !== 'string') throw AppStoreError.invalid(key, `${what} must be a string`);
  if ([...v].length > MAX_NAME_CHARS)
    throw AppStoreError.invalid(key, `${what} is longer than ${MAX_NAME_CHARS} characters`);
}

/** Throws AppStoreError('invalid_document') unless `value` has the document's shape. */
export function checkAppDocument(key: AppDocumentKey, value: JsonValue): void {
  switch (key) {
    case 'vault': {
      // The encrypted keystore as the window wrote it: JSON text of an object with a version.
      if (typeof value !== 'string') throw AppStoreError.invalid(key, 'must be the keystore file as text');
      if (value.length > MAX_VAULT_CHARS)
        throw AppStoreError.invalid(key, `is longer than ${MAX_VAULT_CHARS} characters`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        throw AppStoreError.invalid(key, 'is not JSON text');
      }
      if (
        typeof parsed !== 'object' ||
        parsed === null ||
        typeof (parsed as { version?: unknown }).version !== 'number'
      )
        throw AppStoreError.invalid(key, 'is not a keystore file (no version)');
      return;
    }
    case 'address_book': {
      if (!Array.isArray(value)) throw AppStoreError.invalid(key, 'must be a list of {name, address}');
      if (value.length > MAX_ADDRESS_BOOK)
        throw AppStoreError.invalid(key, `holds more than ${MAX_ADDRESS_BOOK} contacts`);
      const seen = new Set<string>();
      value.forEach((c, i) => {
        if (!isObject(c)) throw AppStoreError.invalid(key, `entry ${i} must be {name, address}`);
        checkName(key, `entry ${i} name`, c.name ?? null);
        if (typeof c.address !== 'string' || !HEX64.test(c.address))
          throw AppStoreError.invalid(key, `entry ${i} address must be 64 lowercase hex characters`);
        if (seen.has(c.address)) throw AppStoreError.invalid(key, `entry ${i} repeats address ${c.address}`);
        seen.add(c.address);
      });
      break;
    }
    case 'wallet_labels': {
      if (!isObject(value)) throw AppStoreError.invalid(key, 'must be an object of address -> label');
      for (const [address, label] of Object.entries(value)) {
        if (!HEX64.test(address))
          throw AppStoreError.invalid(key, `"${address.slice(0, 70)}" is not an address (64 lowercase hex)`);
        checkName(key, `the label of ${address}`, label);
      }
      break;
    }
    case 'settings':
    case 'lease_holds':
    case 'chat_read':
      if (!isObject(value)) throw AppStoreError.invalid(key, 'must be a JSON object');
      break;
  }
  if (stringifyJson(value).length > MAX_DOCUMENT_CHARS)
    throw AppStoreError.invalid(key, `is larger than ${MAX_DOCUMENT_CHARS} characters of JSON`);
}
