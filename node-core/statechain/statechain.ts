import { REFERENCE_WORKLOAD, type Workload } from '../protocol/certificate.ts';
import { hexToBytes, utf8 } from '../protocol/hex.ts';
import type { Verifier } from '../protocol/keys.ts';
import { parseJson } from '../protocol/json.ts';
import {
  parseStateBlock,
  type StateBlock,
  stateBlockHash,
  stateBlockToJson,
} from '../protocol/statechain.ts';
import { stringifyJson } from '../protocol/json.ts';
import type { Store } from '../store/store.ts';
import {
  type Activation,
  DEFAULT_POW,
  type Faucet,
  type Oracle,
  parseActivations,
  parseDaoKeyset,
  parseFaucet,
  parseLease,
  parseCertificateWorkload,
  type LeaseParams,
  parseMinter,
  parseOracle,
  parsePow,
  parseRepresentatives,
  parseTimekeepers,
  type PowSettings,
  type RepresentativePolicy,
  SysValueError,
  type ThresholdKeyset,
  validateTransition,
  validateValue,
} from './sys.ts';

/**
 * The state chain (protocol.md section 7, reference-behavior.md section 6): a single linear chain of
 * DAO-signed governance blocks over a key/value store. This component stores and validates it and
 * keeps typed views of the `sys.*` keys the ledger reads.
 */
export class StateChainError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable = false) {
    super(message);
    this.name = 'StateChainError';
    this.retryable = retryable;
  }
}

export interface StateTip {
  index: bigint;
  hash: string;
  timestamp: bigint;
}

export const MAX_STATE_BLOCK_JSON = 256 * 1024;
const TIP_KEY = 'statechain_tip';
const ZERO_HASH = '0'.repeat(64);

export interface StateChainDeps {
  store: Store;
  verify: Verifier;
}

export class StateChain {
  private readonly store: Store;
  private readonly verify: Verifier;
  private tipCache: StateTip | undefined;
  private readonly listeners: ((block: StateBlock) => void)[] = [];
  /** Typed views of sys.* keys, rebuilt after each commit. */
  private views = emptyViews();

  constructor(deps: StateChainDeps) {
    this.store = deps.store;
    this.verify = deps.verify;
  }

  /** Loads the tip and the sys views from the store (cheap: a handful of keys). */
  start(): void {
    this.tipCache = this.store.getJson<{ index: bigint | number; hash: string; timestamp: bigint | number }>(
      this.store.meta,
      TIP_KEY,
    ) as StateTip | undefined;
    if (this.tipCache) {
      this.tipCache = {
        index: BigInt(this.tipCache.index),
        hash: this.tipCache.hash,
        timestamp: BigInt(this.tipCache.timestamp),
      };
    }
    this.refreshViews();
  }

  /** Called with every block accepted after genesis (to announce it to peers). */
  onCommitted(fn: (block: StateBlock) => void): void {
    this.listeners.push(fn);
  }

  get tip(): StateTip | undefined {
    return this.tipCache;
  }

  get networkId(): string {
    return this.views.networkId;
  }
  get daoKeyset(): ThresholdKeyset | undefined {
    return this.views.dao;
  }
  get timekeepers(): ThresholdKeyset | undefined {
    return this.views.timekeepers;
  }
  get oracle(): Oracle | undefined {
    return this.views.oracle;
  }
  get minters(): ReadonlySet<string> {
    return this.views.minters;
  }
  get faucet(): Faucet | undefined {
    return this.views.faucet;
  }
  /** Lease parameters; the contract's network has no provider stake (stake_milli 0). */
  get lease(): LeaseParams {
    return this.views.lease;
  }
  get pow(): PowSettings {
    return this.views.pow;
  }
  /** The benchmark performance certificates attest: `sys.certificate_workload`, else the reference one. */
  get certificateWorkload(): Workload {
    return this.views.certificateWorkload;
  }
  get representatives(): RepresentativePolicy {
    return this.views.representatives;
  }
  get activations(): ReadonlyMap<string, Activation> {
    return this.views.activations;
  }

  /** Validates and stores the genesis block (index 0) of an empty state chain. */
  async applyGenesis(block: StateBlock): Promise<string> {
    const hash = stateBlockHash(block);
    if (block.hash !== undefined && block.hash !== hash) throw new StateChainError('genesis hash mismatch');
    if (block.index !== 0n || block.prev_hash !== ZERO_HASH) {
      throw new StateChainError('a state-chain genesis has index 0 and a zero prev_hash');
    }
    if (block.ops.length === 0) throw new StateChainError('a state-chain genesis needs at least one op');
    if (!block.ops.some((op) => op.key === 'sys.network_id'))
      throw new StateChainError('genesis must set sys.network_id');
    await this.store.transaction(() => {
      if (this.readTip()) throw new StateChainError('the state chain already has a genesis');
      this.checkOps(block, true);
      this.write({ ...block, hash });
    });
    this.afterCommit();
    return hash;
  }

  /**
   * Validates a block against the tip and the keyset as it stood before the block, then stores it.
   * Returns `duplicate: true` for a block already stored (idempotent).
   */
  async submit(block: StateBlock): Promise<{ hash: string; index: bigint; duplicate: boolean }> {
    const hash = stateBlockHash(block);
    if (block.hash !== undefined && block.hash !== hash) throw new StateChainError('hash mismatch');
    const json = stringifyJson(stateBlockToJson({ ...block, hash }));
    if (utf8(json).length > MAX_STATE_BLOCK_JSON) throw new StateChainError('block larger than 256 KiB');
    const duplicate = await this.store.transaction(() => {
      const tip = this.readTip();
      if (!tip) throw new StateChainError('state chain has no genesis', true);
      if (block.index <= tip.index) {
        const stored = this.store.stateBlocks.get(Number(block.index));
        if (stored !== undefined && parseStateBlock(stored).hash === hash) return true;
        throw new StateChainError(`fork: index ${block.index} is already taken by another block`);
      }
      if (block.index > tip.index + 1n) {
        throw new StateChainError(`wrong index: ${block.index} does not follow the tip ${tip.index}`);
      }
      if (block.prev_hash !== tip.hash) throw new StateChainError('prev_hash does not match the tip');
      if (block.timestamp < tip.timestamp) throw new StateChainError('timestamp earlier than the tip');
      if (block.ops.length === 0) throw new StateChainError('a state block needs at least one op');
      this.checkOps(block, false);
      this.checkSignatures(block, hexToBytes(hash));
      this.write({ ...block, hash });
      return false;
    });
    if (!duplicate) {
      this.afterCommit();
      for (const fn of this.listeners) fn({ ...block, hash });
    }
    return { hash, index: block.index, duplicate };
  }

  getBlock(index: bigint): StateBlock | undefined {
    if (index < 0n || index > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    const text = this.store.stateBlocks.get(Number(index));
    return text === undefined ? undefined : parseStateBlock(text);
  }

  listBlocks(start: bigint, limit: number): StateBlock[] {
    const out: StateBlock[] = [];
    if (start > BigInt(Number.MAX_SAFE_INTEGER)) return out;
    for (const { value } of this.store.stateBlocks.getRange({ start: Number(start), limit })) {
      out.push(parseStateBlock(value));
    }
    return out;
  }

  get blockCount(): number {
    return this.tipCache ? Number(this.tipCache.index) + 1 : 0;
  }

  /** Raw JSON text of a key's value. */
  kvGet(key: string): string | undefined {
    return this.store.kv.get(key);
  }

  kvList(opts: { offset: number; limit: number; prefix?: string }): { key: string; value: string }[] {
    const out: { key: string; value: string }[] = [];
    const range = opts.prefix ? { start: opts.prefix } : {};
    let skipped = 0;
    for (const { key, value } of this.store.kv.getRange(range)) {
      if (opts.prefix && !key.startsWith(opts.prefix)) break;
      if (skipped++ < opts.offset) continue;
      out.push({ key, value });
      if (out.length >= opts.limit) break;
    }
    return out;
  }

  // ---- internals --------------------------------------------------------------------------------

  private readTip(): StateTip | undefined {
    const t = this.store.getJson<{ index: bigint | number; hash: string; timestamp: bigint | number }>(
      this.store.meta,
      TIP_KEY,
    );
    return t ? { index: BigInt(t.index), hash: t.hash, timestamp: BigInt(t.timestamp) } : undefined;
  }

  /** Key and value rules for every op; transition rules against the current values. */
  private checkOps(block: StateBlock, genesis: boolean): void {
    const setsOracle = block.ops.some((op) => op.key === 'sys.oracle' && op.type === 'set');
    for (const op of block.ops) {
      if (op.type === 'delete') {
        if (op.key.startsWith('sys.'))
          throw new StateChainError(`${op.key}: sys.* keys can never be deleted`);
        continue;
      }
      const text = op.value ?? '';
      if (utf8(text).length > 64 * 1024) throw new StateChainError(`${op.key}: value larger than 64 KiB`);
      try {
        const v = validateValue(op.key, text);
        if (!genesis) validateTransition(op.key, this.store.kv.get(op.key), v);
        if (op.key === 'sys.activations' && !genesis) this.checkActivations(block, v);
      } catch (e) {
        if (e instanceof SysValueError) throw new StateChainError(e.message);
        throw e;
      }
      if (genesis && op.key.startsWith('epoch.') && !setsOracle) {
        throw new StateChainError(`${op.key}: epoch values in genesis need sys.oracle in the same genesis`);
      }
    }
  }

  /** Activations are one-way: an active entry is frozen; a new trigger must lie in the future. */
  private checkActivations(block: StateBlock, v: ReturnType<typeof validateValue>): void {
    const next = parseActivations(v);
    const current = this.views.activations;
    const tip = this.readTip();
    for (const [name, old] of current) {
      const now = next.get(name);
      const active = isActive(old, tip);
      if (active && (!now || now.at_index !== old.at_index || now.not_before_ns !== old.not_before_ns)) {
        throw new StateChainError(`sys.activations: feature "${name}" is active and cannot change`);
      }
    }
    for (const [name, a] of next) {
      const old = current.get(name);
      if (old && old.at_index === a.at_index && old.not_before_ns === a.not_before_ns) continue;
      if (a.at_index !== undefined && a.at_index <= block.index) {
        throw new StateChainError(`sys.activations: "${name}" at_index must be in the future`);
      }
      if (a.not_before_ns !== undefined && a.not_before_ns <= block.timestamp) {
        throw new StateChainError(`sys.activations: "${name}" not_before_ns must be in the future`);
      }
    }
  }

  /**
   * Signer selection: the oracle path when sys.oracle exists and every key starts with its prefix
   * (epoch keys are write-once); otherwise the DAO threshold of the keyset before this block, and
   * the DAO may not write under the oracle prefix. Duplicate, unknown or invalid signers fail.
   */
  private checkSignatures(block: StateBlock, hash: Uint8Array): void {
    const oracle = this.views.oracle;
    const oraclePath =
      oracle !== undefined && block.ops.every((op) => op.key.startsWith(oracle.allowed_prefix));
    const keyset = oraclePath ? oracle : this.views.dao;
    if (!keyset) throw new StateChainError('no DAO keyset: the state chain cannot change');
    if (oraclePath) {
      for (const op of block.ops) {
        if (this.store.kv.get(op.key) !== undefined)
          throw new StateChainError(`${op.key}: epoch values are write-once`);
      }
    } else if (oracle && block.ops.some((op) => op.key.startsWith(oracle.allowed_prefix))) {
      throw new StateChainError(`the DAO cannot write under the oracle prefix "${oracle.allowed_prefix}"`);
    }
    const members = new Set(keyset.keys);
    const seen = new Set<string>();
    for (const s of block.signatures) {
      if (seen.has(s.public_key)) throw new StateChainError(`duplicate signer ${s.public_key}`);
      seen.add(s.public_key);
      if (!members.has(s.public_key))
        throw new StateChainError(`signer ${s.public_key} is not in the keyset`);
      if (!this.verify(hexToBytes(s.signature, 64), hash, hexToBytes(s.public_key, 32))) {
        throw new StateChainError(`invalid signature by ${s.public_key}`);
      }
    }
    if (seen.size < keyset.threshold) {
      throw new StateChainError(`insufficient signatures: ${seen.size} of ${keyset.threshold} required`);
    }
  }

  private write(block: StateBlock & { hash: string }): void {
    this.store.stateBlocks.putSync(Number(block.index), stringifyJson(stateBlockToJson(block)));
    for (const op of block.ops) {
      if (op.type === 'set') this.store.kv.putSync(op.key, op.value!);
      else this.store.kv.removeSync(op.key);
    }
    this.store.meta.putSync(
      TIP_KEY,
      stringifyJson({ index: block.index, hash: block.hash, timestamp: block.timestamp }),
    );
  }

  private afterCommit(): void {
    this.tipCache = this.readTip();
    this.refreshViews();
  }

  private refreshViews(): void {
    const get = (k: string) => {
      const t = this.store.kv.get(k);
      return t === undefined ? undefined : parseJson(t);
    };
    const nid = get('sys.network_id');
    const v = emptyViews();
    v.networkId = typeof nid === 'string' ? nid : '';
    const dao = get('sys.dao_keyset');
    if (dao !== undefined) v.dao = parseDaoKeyset(dao);
    const tk = get('sys.timekeepers');
    if (tk !== undefined) v.timekeepers = parseTimekeepers(tk);
    const or = get('sys.oracle');
    if (or !== undefined) v.oracle = parseOracle(or);
    const mi = get('sys.minter');
    if (mi !== undefined) v.minters = new Set(parseMinter(mi));
    const fa = get('sys.faucet');
    if (fa !== undefined) v.faucet = parseFaucet(fa);
    const le = get('sys.lease');
    if (le !== undefined) v.lease = parseLease(le);
    const cw = get('sys.certificate_workload');
    if (cw !== undefined) v.certificateWorkload = parseCertificateWorkload(cw);
    const pw = get('sys.pow');
    if (pw !== undefined) v.pow = parsePow(pw);
    const re = get('sys.representatives');
    if (re !== undefined) v.representatives = parseRepresentatives(re);
    const ac = get('sys.activations');
    if (ac !== undefined) v.activations = parseActivations(ac);
    this.views = v;
  }
}

function isActive(a: Activation, tip: StateTip | undefined): boolean {
  if (!tip) return false;
  return (
    (a.at_index === undefined || tip.index >= a.at_index) &&
    (a.not_before_ns === undefined || tip.timestamp >= a.not_before_ns)
  );
}

function emptyViews() {
  return {
    networkId: '',
    dao: undefined as ThresholdKeyset | undefined,
    timekeepers: undefined as ThresholdKeyset | undefined,
    oracle: undefined as Oracle | undefined,
    minters: new Set<string>() as ReadonlySet<string>,
    faucet: undefined as Faucet | undefined,
    pow: DEFAULT_POW,
    lease: { stake_milli: 0 } as LeaseParams,
    certificateWorkload: REFERENCE_WORKLOAD as Workload,
    representatives: { mode: 'open' } as RepresentativePolicy,
    activations: new Map<string, Activation>() as ReadonlyMap<string, Activation>,
  };
}
