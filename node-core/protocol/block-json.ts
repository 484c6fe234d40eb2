import {
  ATTESTED_TYPES,
  type Attestation,
  type Block,
  type BlockType,
  checkAsset,
  GENESIS_TIMING_FIELDS,
  isBlockType,
  isOpening,
  LEASE_AUX_TYPES,
  MEMO_TYPES,
  type MultisigSignature,
  TAIL_LAYOUT,
  ZERO_HASH,
} from './block.ts';
import { ProtocolError } from './errors.ts';
import { assertHex, isHex } from './hex.ts';
import { type IntKind, toBigIntField } from './int.ts';
import { normalizeKeyset } from './keys.ts';
import { memoBytes } from './memo.ts';

/**
 * Block JSON (protocol.md section 5.1, decisions D3): decoding from any client's JSON into a typed
 * Block with an error naming the faulty field, and encoding in the node's form.
 */

/** At most this many attestations ride on one block; checked before any signature work. */
export const MAX_ATTESTATIONS = 20;
/** A multisig keyset has at most 256 keys, so no block needs more signatures than that. */
export const MAX_MULTISIG_SIGNATURES = 256;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A present field: not undefined, not null (clients write null for "absent"). */
function present(o: Obj, k: string): boolean {
  return o[k] !== undefined && o[k] !== null;
}

function str(o: Obj, k: string, field = k): string {
  const v = o[k];
  if (typeof v !== 'string') throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', field);
  return v;
}

/**
 * A 32-byte hex field. Upper case is accepted and lowercased, as the reference ledger does for
 * these fields before hashing (protocol.md section 3.9).
 */
function hex32(o: Obj, k: string, field = k): string {
  const v = str(o, k, field).toLowerCase();
  assertHex(v, 32, field);
  return v;
}

function sig64(o: Obj, k: string, field = k): string {
  const v = str(o, k, field).toLowerCase();
  assertHex(v, 64, field);
  return v;
}

/** Hex hashed as ASCII text (certificate hash, attestation fields): must already be lowercase. */
function asciiHex(o: Obj, k: string, bytes: number, field = k): string {
  const v = str(o, k, field);
  if (!isHex(v, bytes))
    throw new ProtocolError('ERR_HEX', `expected ${bytes * 2} lowercase hex characters`, field);
  return v;
}

function int(o: Obj, k: string, kind: IntKind, field = k): bigint {
  return toBigIntField(o[k], kind, field);
}

function decodeAttestations(v: unknown): Attestation[] {
  if (!Array.isArray(v)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an array', 'attestations');
  if (v.length > MAX_ATTESTATIONS) {
    throw new ProtocolError('ERR_FIELD_RANGE', `at most ${MAX_ATTESTATIONS} attestations`, 'attestations');
  }
  return v.map((a, i) => {
    const f = `attestations.${i}`;
    if (!isObj(a)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an object', f);
    return {
      public_key: asciiHex(a, 'public_key', 32, `${f}.public_key`),
      timestamp: int(a, 'timestamp', 'i64', `${f}.timestamp`),
      signature: asciiHex(a, 'signature', 64, `${f}.signature`),
    };
  });
}

function decodeSignatures(v: unknown): MultisigSignature[] {
  if (!Array.isArray(v)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an array', 'signatures');
  if (v.length === 0 || v.length > MAX_MULTISIG_SIGNATURES) {
    throw new ProtocolError('ERR_FIELD_RANGE', `1 to ${MAX_MULTISIG_SIGNATURES} signatures`, 'signatures');
  }
  return v.map((s, i) => {
    const f = `signatures.${i}`;
    if (!isObj(s)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an object', f);
    return {
      public_key: hex32(s, 'public_key', `${f}.public_key`),
      signature: sig64(s, 'signature', `${f}.signature`),
    };
  });
}

/**
 * Decodes a block from parsed JSON (ideally from the lossless parser). Every problem is a
 * ProtocolError naming the field. Fields outside the type's layout and aux are dropped, so that no
 * unhashed data rides along with a stored block; a memo or genesis timing on the wrong type is an error.
 */
export function decodeBlock(json: unknown): Block {
  if (!isObj(json)) throw new ProtocolError('ERR_FIELD_TYPE', 'a block must be a JSON object', 'block');
  const type = json.type;
  if (typeof type !== 'string') throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', 'type');
  if (!isBlockType(type)) throw new ProtocolError('ERR_UNKNOWN_TYPE', `unknown block type "${type}"`, 'type');

  const prevRaw = str(json, 'previous');
  const previous = prevRaw === '0' ? ZERO_HASH : hex32(json, 'previous');
  const asset = str(json, 'asset');
  checkAsset(asset);
  const block: Block = {
    type,
    account: hex32(json, 'account'),
    previous,
    balance: int(json, 'balance', 'u64'),
    timestamp: int(json, 'timestamp', 'i64'),
    asset,
  };
  if (present(json, 'representative') && json.representative !== '') {
    block.representative = hex32(json, 'representative');
  }

  for (const f of TAIL_LAYOUT[type]) {
    if (!present(json, f.name) || (f.kind === 'hash32' && json[f.name] === '')) {
      if (f.required) throw new ProtocolError('ERR_FIELD_MISSING', `required on a ${type} block`, f.name);
      continue;
    }
    if (f.kind === 'hash32') block[f.name] = hex32(json, f.name);
    else if (f.kind === 'u64') {
      const v = int(json, f.name, 'u64');
      if (f.required || v !== 0n) block[f.name] = v;
    } else block.keyset = normalizeKeyset(json.keyset, 'keyset');
  }

  if (present(json, 'memo')) {
    const memo = str(json, 'memo');
    if (!MEMO_TYPES.has(type)) {
      if (memo !== '')
        throw new ProtocolError('ERR_FIELD_FORBIDDEN', `a ${type} block cannot carry a memo`, 'memo');
    } else {
      memoBytes(memo);
      if (memo !== '') block.memo = memo;
    }
  }

  for (const f of GENESIS_TIMING_FIELDS) {
    if (!present(json, f)) continue;
    const v = int(json, f, f === 'lease_min_duration_secs' ? 'u64' : 'i64');
    if (v === 0n) continue;
    if (type !== 'genesis') {
      throw new ProtocolError('ERR_FIELD_FORBIDDEN', `only a genesis block carries lease timing`, f);
    }
    block[f] = v;
  }

  if (LEASE_AUX_TYPES.has(type) && present(json, 'certificate_hash') && json.certificate_hash !== '') {
    block.certificate_hash = asciiHex(json, 'certificate_hash', 32);
  }
  if (ATTESTED_TYPES.has(type) && present(json, 'attestations')) {
    const atts = decodeAttestations(json.attestations);
    if (atts.length > 0) block.attestations = atts;
  }

  if (present(json, 'pub_key') && json.pub_key !== '') block.pub_key = hex32(json, 'pub_key');
  if (present(json, 'signature') && json.signature !== '') block.signature = sig64(json, 'signature');
  if (present(json, 'signatures')) block.signatures = decodeSignatures(json.signatures);
  if (present(json, 'hash')) block.hash = hex32(json, 'hash');
  if (present(json, 'pow_nonce')) block.pow_nonce = int(json, 'pow_nonce', 'u64');
  return block;
}

export type BlockJsonForm =
  /** The contract's node form: balance and amount as digit strings, opening previous as 64 zeros. */
  | 'node'
  /** The reference client's form (as in vectors.json): every integer bare, opening previous "0". */
  | 'reference';

const STRING_AMOUNTS = new Set(['balance', 'amount']);

/** The optional fields blockToJson writes, in their order. */
const OPTIONAL_FIELDS = [
  'representative',
  'destination',
  'amount',
  'source',
  'memo',
  'vcpus',
  'memory_mb',
  'disk_gb',
  'duration',
  'access_pub_key',
  'certificate_hash',
  'attestations',
  'locked_r',
  'locked_payout_cap',
  'locked_twap_milli',
  'keyset',
  ...GENESIS_TIMING_FIELDS,
  'pub_key',
  'signatures',
  'signature',
  'hash',
] as const satisfies readonly (keyof Block)[];

/**
 * Each type's fields written even when zero or empty (its layout's required ones), made once: every
 * 201 answer to a block comes through blockToJson, and a set and closures made per call were among
 * the largest allocators of an ingest (the sampling heap profiler, issue #18).
 */
const REQUIRED_FIELDS = new Map<BlockType, ReadonlySet<string>>(
  (Object.keys(TAIL_LAYOUT) as BlockType[]).map((t) => [
    t,
    new Set(TAIL_LAYOUT[t].filter((f) => f.required).map((f) => f.name)),
  ]),
);

/**
 * Encodes a block as a JSON-ready object (to be written with stringifyJson, which prints bigint
 * with every digit). Zero and empty optional fields are omitted, as the reference node does, but
 * for `pow_nonce` in the node form.
 */
export function blockToJson(block: Block, form: BlockJsonForm = 'node'): Record<string, unknown> {
  const node = form === 'node';
  const out: Record<string, unknown> = {
    type: block.type,
    account: block.account,
    previous: !node && isOpening(block) ? '0' : block.previous,
    balance: node ? block.balance.toString() : block.balance,
    timestamp: block.timestamp,
    asset: block.asset,
  };
  const required = REQUIRED_FIELDS.get(block.type)!;
  for (const k of OPTIONAL_FIELDS) putField(out, block, k, required, node);
  // The node form always has it, 0 included (issue #14: clients read it unconditionally); the
  // reference form omits a zero, as the vectors do.
  if (node) out.pow_nonce = block.pow_nonce ?? 0n;
  else putField(out, block, 'pow_nonce', required, node);
  return out;
}

/** One optional field into `out`, unless it is absent, or zero or empty and not required. */
function putField(
  out: Record<string, unknown>,
  block: Block,
  k: keyof Block,
  required: ReadonlySet<string>,
  node: boolean,
): void {
  const v = block[k];
  if (v === undefined) return;
  if ((v === '' || v === 0n) && !required.has(k)) return;
  if (Array.isArray(v) && v.length === 0) return;
  out[k] = typeof v === 'bigint' && node && STRING_AMOUNTS.has(k) ? v.toString() : v;
}

/** The block type a POST /blocks/{type} path names, or undefined for an unknown one. */
export function blockTypeFromPath(segment: string): BlockType | undefined {
  return isBlockType(segment) && segment !== 'genesis' ? segment : undefined;
}
