import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Block, GENESIS_TIMING_FIELDS, ZERO_HASH } from '../protocol/block.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { blockHash } from '../protocol/block.ts';
import { signBlock, verifyBlockSignature } from '../protocol/block-sign.ts';
import { hexToBytes } from '../protocol/hex.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import { addressFromPublicKey, generateKeyPair, type KeyPair } from '../protocol/keys.ts';
import { BLOCK_POW_DIFFICULTY, CHAT_POW_DIFFICULTY, formatDifficulty } from '../protocol/pow.ts';
import {
  parseStateBlock,
  type StateBlock,
  stateBlockHash,
  stateBlockToJson,
} from '../protocol/statechain.ts';
import type { SignedBlock } from '../ledger/ledger.ts';
import type { Workload } from '../protocol/certificate.ts';
import type { JsonValue } from '../protocol/json.ts';
import { parseCertificateWorkload, SysValueError } from '../statechain/sys.ts';

/**
 * Genesis of a network (protocol.md section 10, decisions D9): the ledger genesis block and the
 * state-chain genesis, as files in a genesis directory, and a fresh private development network.
 */
export class GenesisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GenesisError';
  }
}

export const GENESIS_SUPPLY = 42_000_000_000_000n; // 42,000,000 XE in micro-units
export const LEDGER_GENESIS_FILE = 'ledger-genesis.json';
export const STATECHAIN_GENESIS_FILE = 'statechain-genesis.json';
export const DEVNET_KEYS_FILE = 'devnet-keys.json';

export interface GenesisBundle {
  ledger: SignedBlock;
  state: StateBlock & { hash: string };
  networkId: string;
}

/** Lease timing pinned in a development genesis: the protocol's production defaults. */
const DEV_TIMING: Record<(typeof GENESIS_TIMING_FIELDS)[number], bigint> = {
  lease_min_duration_secs: 60n,
  lease_settle_grace_ns: 3_600_000_000_000n,
  lease_force_settle_gap_ns: 1_500_000_000_000n,
  lease_escrow_expiry_ns: 31_536_000_000_000_000n,
  lease_archive_gap_ns: 3_600_000_000_000n,
  max_attestation_skew_ns: 600_000_000_000n,
};

/** Checks a ledger genesis block: layout rules, hash (empty network id), signature, timing invariants. */
export function verifyLedgerGenesis(block: Block): SignedBlock {
  const fail = (m: string): never => {
    throw new GenesisError(`ledger genesis: ${m}`);
  };
  if (block.type !== 'genesis') fail('type must be genesis');
  if (block.previous !== ZERO_HASH) fail('previous must be "0"');
  if (block.timestamp !== 0n) fail('timestamp must be 0');
  if (block.asset !== 'XE') fail('asset must be XE');
  if (block.balance !== GENESIS_SUPPLY) fail(`balance must be exactly ${GENESIS_SUPPLY}`);
  if (!block.pub_key) fail('pub_key is required');
  if (addressFromPublicKey(block.pub_key!) !== block.account) fail('pub_key does not derive the account');
  if (!block.representative || block.representative === ZERO_HASH) fail('a representative is required');
  if (block.representative === block.pub_key) fail('the representative is an address, not the public key');
  const hash = blockHash(block, '');
  if (block.hash !== hash) fail(`hash mismatch: computed ${hash}`);
  if (!verifyBlockSignature(block, '', block.pub_key!)) fail('invalid signature');
  const t = GENESIS_TIMING_FIELDS.map((f) => block[f] ?? 0n);
  if (t.some((v) => v !== 0n)) {
    const [min, grace, gap, escrow, archive, skew] = t as [bigint, bigint, bigint, bigint, bigint, bigint];
    if (min < 1n || grace <= 0n || skew <= 0n || archive <= 0n) fail('lease timing values must be positive');
    if (gap <= 2n * skew) fail('force-settle gap must exceed twice the attestation skew');
    if (escrow <= grace + gap) fail('escrow expiry must exceed settle grace plus force-settle gap');
  }
  return block as SignedBlock;
}

/** Checks a state-chain genesis: index 0, zero prev_hash, ops, hash over the verbatim values. */
export function verifyStateGenesis(block: StateBlock): StateBlock & { hash: string } {
  const hash = stateBlockHash(block);
  if (block.hash !== undefined && block.hash !== hash) {
    throw new GenesisError(`state-chain genesis: hash mismatch: computed ${hash}`);
  }
  if (block.index !== 0n || block.prev_hash !== ZERO_HASH) {
    throw new GenesisError('state-chain genesis: index must be 0 and prev_hash all zeros');
  }
  if (block.ops.length === 0) throw new GenesisError('state-chain genesis: no ops');
  return { ...block, hash };
}

function networkIdOf(state: StateBlock): string {
  const op = state.ops.find((o) => o.key === 'sys.network_id' && o.type === 'set');
  const v = op?.value === undefined ? undefined : parseJson(op.value);
  if (typeof v !== 'string' || v === '')
    throw new GenesisError('state-chain genesis must set sys.network_id');
  return v;
}

/** Reads and verifies `ledger-genesis.json` and `statechain-genesis.json` from a directory. */
export function loadGenesisDir(dir: string): GenesisBundle {
  const read = (name: string) => {
    const p = join(dir, name);
    if (!existsSync(p)) throw new GenesisError(`${p} not found`);
    return readFileSync(p, 'utf8');
  };
  let ledger: SignedBlock;
  let state: StateBlock & { hash: string };
  try {
    ledger = verifyLedgerGenesis(decodeBlock(parseJson(read(LEDGER_GENESIS_FILE))));
    state = verifyStateGenesis(parseStateBlock(read(STATECHAIN_GENESIS_FILE)));
  } catch (e) {
    if (e instanceof GenesisError) throw e;
    throw new GenesisError(`invalid genesis file in ${dir}: ${(e as Error).message}`);
  }
  return { ledger, state, networkId: networkIdOf(state) };
}

/** Writes a file atomically (temp file, then rename), optionally private to the owner. */
export function writeFileAtomic(path: string, text: string, mode = 0o644): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** Writes the two genesis files, the form other nodes join with `--genesis-dir`. */
export function writeGenesisDir(dir: string, bundle: GenesisBundle): void {
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(
    join(dir, LEDGER_GENESIS_FILE),
    `${stringifyJson(blockToJson(bundle.ledger, 'reference'), 2)}\n`,
  );
  writeFileAtomic(
    join(dir, STATECHAIN_GENESIS_FILE),
    `${stringifyJson(stateBlockToJson(bundle.state), 2)}\n`,
  );
}

// ---- development network --------------------------------------------------------------------------

export interface KeyEntry {
  seed_hex: string;
  pub_key: string;
  address: string;
}

export interface DevnetKeys {
  network_id: string;
  treasury: KeyEntry;
  minter: KeyEntry;
  /** Writes `epoch.N` records (sys.oracle). */
  oracle: KeyEntry;
  dao: KeyEntry[];
  dao_threshold: number;
  timekeepers: KeyEntry[];
  representative: KeyEntry;
}

export interface DevnetOptions {
  /** Proof-of-work difficulty of blocks (default fffff80000000000). */
  powDifficulty?: bigint;
  /** The node's own key: representative and timekeeper. */
  nodeKey: KeyPair;
  networkId?: string;
  /**
   * Overrides of the new network's genesis (`--genesis-set NAME=VALUE`): the lease time windows
   * pinned in the ledger genesis (reference-behavior.md 4.4) and the certificate workload pinned in
   * the state chain, each checked by the same rules as any genesis.
   */
  genesisSet?: GenesisSet;
}

export type GenesisTimingField = (typeof GENESIS_TIMING_FIELDS)[number];

/** `--genesis-set` names of the `sys.certificate_workload` fields, by the field each sets. */
export const CERTIFICATE_WORKLOAD_SET_FIELDS = {
  certificate_workload_version: 'workload_version',
  certificate_iterations: 'iterations',
  certificate_table_entries: 'table_entries',
  certificate_reads: 'reads',
} as const satisfies Record<string, keyof Workload>;

export type CertificateWorkloadSetField = keyof typeof CERTIFICATE_WORKLOAD_SET_FIELDS;

export type GenesisSetField = GenesisTimingField | CertificateWorkloadSetField;
export type GenesisSet = Partial<Record<GenesisSetField, bigint>>;

/** The names `--genesis-set` takes. */
export const GENESIS_SET_FIELDS: readonly GenesisSetField[] = [
  ...GENESIS_TIMING_FIELDS,
  ...(Object.keys(CERTIFICATE_WORKLOAD_SET_FIELDS) as CertificateWorkloadSetField[]),
];

/**
 * The certificate workload of a new development network: the reference version's algorithm, sized
 * so that a node certifies itself in about two seconds (the reference workload takes minutes).
 */
export const DEV_CERTIFICATE_WORKLOAD: Readonly<Workload> = Object.freeze({
  workload_version: 3n,
  iterations: 2_000_000n,
  table_entries: 65_536,
  reads: 100_000,
});

/** The development network's certificate workload with the `--genesis-set` overrides applied. */
function devWorkload(set: GenesisSet): Workload {
  const raw: Record<string, unknown> = {
    workload_version: DEV_CERTIFICATE_WORKLOAD.workload_version,
    iterations: DEV_CERTIFICATE_WORKLOAD.iterations,
    table_entries: DEV_CERTIFICATE_WORKLOAD.table_entries,
    reads: DEV_CERTIFICATE_WORKLOAD.reads,
  };
  for (const [name, field] of Object.entries(CERTIFICATE_WORKLOAD_SET_FIELDS)) {
    const v = set[name as CertificateWorkloadSetField];
    if (v !== undefined) raw[field] = v;
  }
  try {
    // The state chain checks the value exactly so when it applies the genesis.
    return parseCertificateWorkload(raw as JsonValue);
  } catch (e) {
    if (e instanceof SysValueError) throw new GenesisError(e.message);
    throw e;
  }
}

/** A state-chain value written as a genesis file writes it: indented JSON, kept verbatim. */
function pretty(v: unknown): string {
  return stringifyJson(v, 2).replace(/\n/g, '\n      ');
}

/**
 * Creates a private development network: fresh treasury, minter and DAO keys, this node as
 * representative and timekeeper, the faucet on (1,000 XE per 24 hours, decisions D6).
 */
export function createDevnet(opts: DevnetOptions): { keys: DevnetKeys; bundle: GenesisBundle } {
  const block = opts.powDifficulty ?? BLOCK_POW_DIFFICULTY;
  const chat = block === 0n ? 0n : block < CHAT_POW_DIFFICULTY ? block : CHAT_POW_DIFFICULTY;
  const networkId = opts.networkId ?? `devnet-${generateKeyPair().pub_key.slice(0, 8)}`;
  const treasury = generateKeyPair();
  const minter = generateKeyPair();
  const dao = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const oracle = generateKeyPair();
  const rep = opts.nodeKey;
  const set = opts.genesisSet ?? {};
  for (const name of Object.keys(set)) {
    if (!(GENESIS_SET_FIELDS as readonly string[]).includes(name))
      throw new GenesisError(`unknown genesis field ${name} (one of ${GENESIS_SET_FIELDS.join(', ')})`);
  }
  const workload = devWorkload(set);
  const timing: Partial<Record<GenesisTimingField, bigint>> = {};
  for (const f of GENESIS_TIMING_FIELDS) if (set[f] !== undefined) timing[f] = set[f];

  const values: [string, unknown][] = [
    ['sys.network_id', networkId],
    ['sys.dao_keyset', { keys: dao.map((k) => k.pub_key), threshold: 2 }],
    ['sys.timekeepers', { keys: [rep.pub_key], threshold: 1 }],
    ['sys.minter', { keys: [minter.address] }],
    ['sys.faucet', { amount: '1000000000', period_ns: '86400000000000' }],
    ['sys.pow', { block: formatDifficulty(block), chat: formatDifficulty(chat) }],
    ['sys.lease', { stake_milli: 0 }],
    ['sys.certificate_workload', workload],
    ['sys.oracle', { keys: [oracle.pub_key], threshold: 1, allowed_prefix: 'epoch.' }],
    // The epoch leases lock until the oracle writes the next (protocol.md 10.2: R = 2000).
    [
      'epoch.0',
      {
        epoch: 0,
        start_ns: 0,
        end_ns: 0,
        twap_milli_usd: 0,
        twav_milli_usd: 0,
        r_volume: 2000,
        r_price_floor: 0,
        r_collusion: 0,
        r_effective: 2000,
        r_source: 'genesis',
        phase: 1,
        s_milli: 0,
        payout_cap: 0,
      },
    ],
    ['sys.representatives', { mode: 'open' }],
    ['sys.phase', 1],
  ];
  const unsigned: StateBlock = {
    index: 0n,
    prev_hash: ZERO_HASH,
    ops: values.map(([key, v]) => ({ type: 'set', key, value: pretty(v) })),
    signatures: [],
    timestamp: 0n,
  };
  const state = { ...unsigned, hash: stateBlockHash(unsigned) };

  const ledger = signBlock(
    {
      type: 'genesis',
      account: treasury.address,
      previous: ZERO_HASH,
      balance: GENESIS_SUPPLY,
      timestamp: 0n,
      asset: 'XE',
      representative: rep.address,
      ...DEV_TIMING,
      ...timing,
    },
    hexToBytes(treasury.seed_hex),
    '',
  );
  // Overrides must leave a genesis any node accepts (timing invariants: gap > 2 x skew, ...).
  verifyLedgerGenesis(ledger);
  const keys: DevnetKeys = {
    network_id: networkId,
    treasury,
    minter,
    oracle,
    dao,
    dao_threshold: 2,
    timekeepers: [rep],
    representative: rep,
  };
  return { keys, bundle: { ledger, state, networkId } };
}

export function writeDevnetKeys(dataDir: string, keys: DevnetKeys): void {
  writeFileAtomic(join(dataDir, DEVNET_KEYS_FILE), `${JSON.stringify(keys, null, 2)}\n`, 0o600);
}
