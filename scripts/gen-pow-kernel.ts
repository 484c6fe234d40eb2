/**
 * Generates the WebAssembly proof-of-work kernel (node-core/protocol/pow-kernel.generated.ts).
 *
 *   npm run gen:pow-kernel
 *
 * The PoW digest is one BLAKE2b compression of a single 40-byte block in which only message word
 * m0 (the nonce) changes between attempts. Instead of hand-writing the kernel, this script builds
 * the whole compression as a small SSA graph and partially evaluates it:
 *
 *  - every value gets a stage: 0 = known now (folded to a constant here), 1 = depends on the target
 *    only (computed once per `search` call, in the preamble), 2 = depends on the nonce (computed in
 *    the loop). So the nonce-free parts of the first round (three of its four column G functions,
 *    parts of the diagonal step) cost nothing per attempt, and m5..m15 = 0 are never added;
 *  - only what feeds the final h0 = h0 ^ v0 ^ v8 is kept (dead-code elimination), which removes
 *    most of the last round.
 *
 * Two backends emit WAT from the same graph: v128 (i64x2, 2 nonces per state) and i64 (1 nonce per
 * state). A kernel interleaves independent states of either kind in one loop body, for
 * instruction-level parallelism: the shipped SIMD kernel runs one v128 and one i64 state side by side
 * (3 nonces per iteration), the scalar kernel (for engines without SIMD) one i64 state. Rounds are
 * fully unrolled and the nonce loop runs inside the kernel. wabt turns the text into bytes; the
 * output is deterministic.
 *
 * Kernel ABI (both variants; offsets and lane counts are exported in the generated file):
 *  - exports `memory` (1 page, never grown). The caller writes the 32-byte target at
 *    POW_KERNEL_LAYOUT.targetOffset before each call.
 *  - `search(startLo, startHi, count, diffLo, diffHi) -> i32`: tries nonces start, start+1, ...,
 *    start+count-1 (mod 2^64; 0 <= count <= 2^30), in that order. Returns 1 and writes the first
 *    nonce whose PoW value >= difficulty (u64 LE) at nonceOffset, else returns 0. 64-bit values
 *    travel as i32 halves so no BigInt/i64 JS integration is needed. The loop only runs a cheap
 *    may-hit test per iteration; the exact comparison (and the count bound on the last iteration)
 *    is done off the hot path.
 *  - `hashes(startLo, startHi)`: writes the PoW values (u64 LE) of the `lanes` nonces start,
 *    start+1, ... at outOffset. For tests: the same generated compression code as the loop.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

// ---------------------------------------------------------------------------------------------
// BLAKE2b (RFC 7693)

const MASK64 = 0xffffffffffffffffn;
const IV: readonly bigint[] = [
  0x6a09e667f3bcc908n,
  0xbb67ae8584caa73bn,
  0x3c6ef372fe94f82bn,
  0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n,
  0x9b05688c2b3e6c1fn,
  0x1f83d9abfb41bd6bn,
  0x5be0cd19137e2179n,
];
const SIGMA: readonly (readonly number[])[] = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];
const ROUNDS = 12;
/** Parameter block word 0: digest length 8, key length 0, fanout 1, depth 1. */
const PARAM0 = 0x01010008n;
/** Bytes hashed: 8 (nonce) + 32 (target). */
const INPUT_BYTES = 40n;

// ---------------------------------------------------------------------------------------------
// SSA graph with constant folding and staging

/** 0: compile-time constant, 1: per call (target only), 2: per nonce. */
type Stage = 0 | 1 | 2;
type Op = 'const' | 'msg' | 'nonce' | 'add' | 'xor' | 'rotr';
interface IrNode {
  readonly id: number;
  readonly op: Op;
  readonly args: readonly number[];
  /** rotr amount, or message word index for 'msg'. */
  readonly k: number;
  /** Value of a 'const' node. */
  readonly value: bigint;
  readonly stage: Stage;
}

class Graph {
  readonly nodes: IrNode[] = [];

  private push(op: Op, args: number[], k: number, value: bigint, stage: Stage): number {
    const id = this.nodes.length;
    this.nodes.push({ id, op, args, k, value, stage });
    return id;
  }
  private node(id: number): IrNode {
    const n = this.nodes[id];
    if (n === undefined) throw new Error(`no node ${id}`);
    return n;
  }
  private stageOf(...ids: number[]): Stage {
    return ids.reduce<Stage>((s, id) => Math.max(s, this.node(id).stage) as Stage, 0);
  }
  private isConst(id: number, value?: bigint): boolean {
    const n = this.node(id);
    return n.op === 'const' && (value === undefined || n.value === value);
  }

  constant(value: bigint): number {
    return this.push('const', [], 0, value & MASK64, 0);
  }
  msg(word: number): number {
    return this.push('msg', [], word, 0n, 1);
  }
  nonce(): number {
    return this.push('nonce', [], 0, 0n, 2);
  }
  add(a: number, b: number): number {
    if (this.isConst(a) && this.isConst(b)) return this.constant(this.node(a).value + this.node(b).value);
    if (this.isConst(a, 0n)) return b;
    if (this.isConst(b, 0n)) return a;
    return this.push('add', [a, b], 0, 0n, this.stageOf(a, b));
  }
  /** a + b + c, associated so the lowest-stage operands are combined first (hoistable). */
  add3(a: number, b: number, c: number): number {
    const [x, y, z] = [a, b, c].sort((p, q) => this.node(p).stage - this.node(q).stage) as [
      number,
      number,
      number,
    ];
    return this.add(this.add(x, y), z);
  }
  xor(a: number, b: number): number {
    if (this.isConst(a) && this.isConst(b)) return this.constant(this.node(a).value ^ this.node(b).value);
    if (this.isConst(a, 0n)) return b;
    if (this.isConst(b, 0n)) return a;
    return this.push('xor', [a, b], 0, 0n, this.stageOf(a, b));
  }
  rotr(a: number, k: number): number {
    const n = this.node(a);
    if (n.op === 'const') return this.constant((n.value >> BigInt(k)) | (n.value << BigInt(64 - k)));
    return this.push('rotr', [a], k, 0n, n.stage);
  }
}

/** h0 of the parameter block; the digest word is h0 ^ v0 ^ v8 after the compression. */
const H0 = IV[0]! ^ PARAM0;

/** The PoW compression as a graph. Returns the node of `v0 ^ v8` (each backend xors in H0). */
function buildPowGraph(): { graph: Graph; out: number } {
  const g = new Graph();
  const init = [H0, ...IV.slice(1), ...IV];
  init[12] = IV[4]! ^ INPUT_BYTES; // t0; t1 = 0
  init[14] = IV[6]! ^ MASK64; // final block flag
  const v = init.map((x) => g.constant(x));
  // m0 = nonce, m1..m4 = target words, m5..m15 = 0 (null: never added).
  const m: (number | null)[] = [g.nonce(), g.msg(1), g.msg(2), g.msg(3), g.msg(4)];
  for (let i = 5; i < 16; i++) m.push(null);

  const mix = (a: number, b: number, c: number, d: number, x: number | null, y: number | null): void => {
    const va = v[a]!;
    const vb = v[b]!;
    v[a] = x === null ? g.add(va, vb) : g.add3(va, vb, x);
    v[d] = g.rotr(g.xor(v[d]!, v[a]!), 32);
    v[c] = g.add(v[c]!, v[d]!);
    v[b] = g.rotr(g.xor(v[b]!, v[c]!), 24);
    v[a] = y === null ? g.add(v[a]!, v[b]!) : g.add3(v[a]!, v[b]!, y);
    v[d] = g.rotr(g.xor(v[d]!, v[a]!), 16);
    v[c] = g.add(v[c]!, v[d]!);
    v[b] = g.rotr(g.xor(v[b]!, v[c]!), 63);
  };
  for (let r = 0; r < ROUNDS; r++) {
    const s = SIGMA[r % 10]!;
    const w = (i: number): number | null => m[s[i]!]!;
    mix(0, 4, 8, 12, w(0), w(1));
    mix(1, 5, 9, 13, w(2), w(3));
    mix(2, 6, 10, 14, w(4), w(5));
    mix(3, 7, 11, 15, w(6), w(7));
    mix(0, 5, 10, 15, w(8), w(9));
    mix(1, 6, 11, 12, w(10), w(11));
    mix(2, 7, 8, 13, w(12), w(13));
    mix(3, 4, 9, 14, w(14), w(15));
  }
  return { graph: g, out: g.xor(v[0]!, v[8]!) };
}

/** Non-constant nodes reachable from `root`, in topological (creation) order. */
function liveNodes(graph: Graph, root: number): IrNode[] {
  const live = new Uint8Array(graph.nodes.length);
  live[root] = 1;
  for (let id = root; id >= 0; id--) {
    if (!live[id]) continue;
    for (const a of graph.nodes[id]!.args) live[a] = 1;
  }
  return graph.nodes.filter((n) => live[n.id] && n.op !== 'const');
}

// ---------------------------------------------------------------------------------------------
// Kernel variants

/** Memory layout shared by all variants. */
export const POW_KERNEL_LAYOUT = {
  /** The caller writes the 32-byte target here. */
  targetOffset: 0,
  /** `search` writes the found nonce (u64 LE) here. */
  nonceOffset: 32,
  /** `hashes` writes the PoW values (u64 LE) of its lanes here; `search` uses it as scratch. */
  outOffset: 64,
} as const;

/**
 * How a SIMD state rotates its 64-bit lanes by 24 or 16 bits. `swizzle` (i8x16.swizzle with a
 * constant in-range mask) is one pshufb in V8 with the mask kept in a register; `shuffle`
 * (i8x16.shuffle) rebuilds the mask with several instructions on every use; `shift` is 3 ops.
 */
export type RotBytes = 'shuffle' | 'swizzle' | 'shift';

/** Tuning knobs of a kernel (see `POW_KERNEL_VARIANTS` for the shipped choices). */
export interface KernelVariant {
  /** v128 states per loop iteration, 2 nonces each. 0 gives a kernel that needs no SIMD. */
  readonly simdStates: number;
  /**
   * i64 states per loop iteration, 1 nonce each. Mixed with SIMD states they keep the scalar
   * ALU ports busy, which pure v128 code leaves idle.
   */
  readonly scalarStates: number;
  /** Graph nodes emitted for one state before moving to the next (1 = finest interleaving). */
  readonly group: number;
  readonly rot24: RotBytes;
  readonly rot16: RotBytes;
  /** SIMD left shift by one inside the rotation by 63: `shl` or `add` (x + x). */
  readonly rot63: 'shl' | 'add';
}

/**
 * The shipped variants, picked by measurement (V8 12 / Node 22, x86-64 with AVX-512, one core):
 *  - 1 v128 state: 14 M hashes/s; 2 states: 16.5 M; 3 or 4: slower (V8 uses 16 xmm registers, and
 *    the spills swamp the gain).
 *  - 1 v128 + 1 i64 state (shipped): 20 M. The scalar state runs on the integer ports, which v128
 *    code leaves idle; adding more of either kind costs more in spills than it gains.
 *  - rot24/rot16 by `swizzle`: +5-10% over `shuffle` or `shift`. `group` makes no measurable
 *    difference (the CPU reorders anyway). Per-call values read from memory instead of locals: -8%.
 *  - scalar only: 1 state 10.8 M, 2 states 8.5 M (spills).
 */
export const POW_KERNEL_VARIANTS: { readonly simd: KernelVariant; readonly scalar: KernelVariant } = {
  simd: { simdStates: 1, scalarStates: 1, group: 1, rot24: 'swizzle', rot16: 'swizzle', rot63: 'add' },
  scalar: { simdStates: 0, scalarStates: 1, group: 1, rot24: 'swizzle', rot16: 'swizzle', rot63: 'add' },
};

export const variantLanes = (v: KernelVariant): number => 2 * v.simdStates + v.scalarStates;

// ---------------------------------------------------------------------------------------------
// WAT emission

const SIGN = 1n << 63n;
const hex64 = (x: bigint): string => '0x' + (x & MASK64).toString(16).padStart(16, '0');
const i64const = (x: bigint): string => `(i64.const ${hex64(x)})`;
const v128const = (x: bigint): string => `(v128.const i64x2 ${hex64(x)} ${hex64(x)})`;
const lanesBytes = (perLane: number[]): string => [...perLane, ...perLane.map((b) => b + 8)].join(' ');
/** Byte indices rotating each 64-bit lane right by `k` bits (k a multiple of 8). */
const rotrBytes = (k: number): string => lanesBytes(Array.from({ length: 8 }, (_, i) => (i + k / 8) % 8));
const BSWAP_BYTES = lanesBytes([7, 6, 5, 4, 3, 2, 1, 0]);
const swizzle = (x: string, bytes: string): string => `(i8x16.swizzle ${x} (v128.const i8x16 ${bytes}))`;
const get = (local: string): string => `(local.get ${local})`;

/** Hands out wasm locals of one type, reusing those whose value is dead. */
class LocalPool {
  private readonly free: string[] = [];
  private readonly all: string[] = [];
  private readonly prefix: string;
  private readonly type: string;
  constructor(prefix: string, type: string) {
    this.prefix = prefix;
    this.type = type;
  }
  take(): string {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const name = `$${this.prefix}${this.all.length}`;
    this.all.push(name);
    return name;
  }
  release(name: string): void {
    this.free.push(name);
  }
  decls(): string[] {
    return this.all.map((n) => `(local ${n} ${this.type})`);
  }
}

/** Code generation for one state (a v128 pair of nonces, or one i64 nonce). */
interface Backend {
  readonly lanes: number;
  readonly type: 'v128' | 'i64';
  /** A compile-time constant as an operand. */
  constant(x: bigint): string;
  /** A per-call value (scalar local `$c<id>`) as an operand. */
  perCall(id: number): string;
  op(node: IrNode, args: string[]): string;
  /** Initial nonces of a state whose first lane is `lane`, from the i64 local `$start`. */
  initNonce(lane: number): string;
  /** Adds `lanes` to the nonces of a state. */
  advance(nonce: string, lanes: number): string;
  /** The check value from `v0 ^ v8`: what `hit` and `store` take. */
  finish(out: string): string;
  /** Whether some lane may reach the difficulty: an i32 (scalar) or a lane mask (SIMD). */
  hit(y: string): string;
  /** Stores the PoW values of the state's lanes at `offset`. */
  store(y: string, offset: number): string;
}

function simdBackend(variant: KernelVariant): Backend {
  const rotBytes = (x: string, k: number, how: RotBytes): string => {
    switch (how) {
      case 'shuffle':
        return `(i8x16.shuffle ${rotrBytes(k)} ${x} ${x})`;
      case 'swizzle':
        return swizzle(x, rotrBytes(k));
      case 'shift':
        return `(v128.or (i64x2.shr_u ${x} (i32.const ${k})) (i64x2.shl ${x} (i32.const ${64 - k})))`;
    }
  };
  return {
    lanes: 2,
    type: 'v128',
    constant: v128const,
    perCall: (id) => get(`$s${id}`),
    op(node, [a, b]) {
      if (node.op === 'add') return `(i64x2.add ${a} ${b})`;
      if (node.op === 'xor') return `(v128.xor ${a} ${b})`;
      if (node.op !== 'rotr' || a === undefined) throw new Error(`unexpected op ${node.op}`);
      // A 32-bit lane swap: V8 matches this shuffle to a single pshufd.
      if (node.k === 32) return `(i8x16.shuffle ${rotrBytes(32)} ${a} ${a})`;
      if (node.k === 24) return rotBytes(a, 24, variant.rot24);
      if (node.k === 16) return rotBytes(a, 16, variant.rot16);
      const shl = variant.rot63 === 'add' ? `(i64x2.add ${a} ${a})` : `(i64x2.shl ${a} (i32.const 1))`;
      return `(v128.or ${shl} (i64x2.shr_u ${a} (i32.const 63)))`;
    },
    initNonce: (lane) =>
      `(i64x2.add (i64x2.splat (local.get $start)) (v128.const i64x2 ${lane} ${lane + 1}))`,
    advance: (n, lanes) => `(i64x2.add ${n} ${v128const(BigInt(lanes))})`,
    // Byte-swapped (the digest is read big-endian) with the sign bit flipped, so that the signed
    // i64x2.ge_s against the flipped difficulty compares unsigned values. Bit 7 of the low byte
    // becomes bit 63 after the swap, hence H0 ^ 0x80.
    finish: (out) => swizzle(`(v128.xor ${out} ${v128const(H0 ^ 0x80n)})`, BSWAP_BYTES),
    hit: (y) => `(i64x2.ge_s ${y} (local.get $dsplat))`,
    store: (y, offset) => `(v128.store offset=${offset} (i32.const 0) (v128.xor ${y} ${v128const(SIGN)}))`,
  };
}

const scalarBackend: Backend = {
  lanes: 1,
  type: 'i64',
  constant: i64const,
  perCall: (id) => get(`$c${id}`),
  op(node, [a, b]) {
    if (node.op === 'add') return `(i64.add ${a} ${b})`;
    if (node.op === 'xor') return `(i64.xor ${a} ${b})`;
    if (node.op === 'rotr') return `(i64.rotr ${a} (i64.const ${node.k}))`;
    throw new Error(`unexpected op ${node.op}`);
  },
  initNonce: (lane) => `(i64.add (local.get $start) (i64.const ${lane}))`,
  advance: (n, lanes) => `(i64.add ${n} (i64.const ${lanes}))`,
  // The digest word in little-endian order; wasm has no byte swap, so the hot path only tests the
  // low byte (the PoW value's top byte) against the difficulty's top byte, which no valid nonce fails.
  finish: (out) => `(i64.xor ${out} ${i64const(H0)})`,
  hit: (y) => `(i64.ge_u (i64.and ${y} (i64.const 0xff)) (local.get $dtop))`,
  store: (y, offset) => `(i64.store offset=${offset} (i32.const 0) (call $bswap64 ${y}))`,
};

/** Straight-line code computing the check values `$y<s>` of all states from their nonces `$n<s>`. */
interface Compression {
  readonly locals: string[];
  /** Loads the target words and computes the per-call (stage 1) values, splatted where needed. */
  readonly preamble: string[];
  /** The per-nonce work, states interleaved. */
  readonly body: string[];
}

function emitCompression(variant: KernelVariant, states: readonly Backend[]): Compression {
  const { graph, out } = buildPowGraph();
  const nodes = liveNodes(graph, out);
  const byId = (id: number): IrNode => graph.nodes[id]!;
  const hasSimd = states.some((b) => b.type === 'v128');
  const locals = states.map((b, s) => `(local $y${s} ${b.type})`);
  const preamble: string[] = [];

  // Stage 1: scalar i64 in the preamble, splatted once when a SIMD state uses it.
  const usedByStage2 = new Set<number>();
  for (const n of nodes)
    if (n.stage === 2) for (const a of n.args) if (byId(a).stage === 1) usedByStage2.add(a);
  const stage1Ref = (id: number): string => {
    const n = byId(id);
    return n.op === 'const' ? i64const(n.value) : get(`$c${id}`);
  };
  for (const n of nodes) {
    if (n.stage !== 1) continue;
    locals.push(`(local $c${n.id} i64)`);
    const expr =
      n.op === 'msg'
        ? `(i64.load offset=${POW_KERNEL_LAYOUT.targetOffset + 8 * (n.k - 1)} (i32.const 0))`
        : scalarBackend.op(n, n.args.map(stage1Ref));
    preamble.push(`(local.set $c${n.id} ${expr})`);
    if (usedByStage2.has(n.id) && hasSimd) {
      locals.push(`(local $s${n.id} v128)`);
      preamble.push(`(local.set $s${n.id} (i64x2.splat (local.get $c${n.id})))`);
    }
  }

  // Stage 2: per state, values live in pooled locals, released after their last use.
  const stage2 = nodes.filter((n) => n.stage === 2 && n.op !== 'nonce');
  const lastUse = new Map<number, number>();
  stage2.forEach((n, i) => n.args.forEach((a) => lastUse.set(a, i)));
  lastUse.set(out, stage2.length);
  const pools = states.map((b, s) => new LocalPool(`v${s}_`, b.type));
  const where = states.map(() => new Map<number, string>());
  const ref = (s: number, id: number): string => {
    const n = byId(id);
    const backend = states[s]!;
    if (n.op === 'const') return backend.constant(n.value);
    if (n.op === 'nonce') return get(`$n${s}`);
    if (n.stage === 1) return backend.perCall(id);
    return get(where[s]!.get(id)!);
  };
  const body: string[] = [];
  const emitNode = (s: number, i: number): void => {
    const n = stage2[i]!;
    const expr = states[s]!.op(
      n,
      n.args.map((a) => ref(s, a)),
    );
    for (const a of new Set(n.args)) {
      const local = where[s]!.get(a);
      if (local !== undefined && lastUse.get(a) === i) pools[s]!.release(local);
    }
    const dst = pools[s]!.take();
    where[s]!.set(n.id, dst);
    body.push(`(local.set ${dst} ${expr})`);
  };
  for (let first = 0; first < stage2.length; first += variant.group) {
    const end = Math.min(stage2.length, first + variant.group);
    states.forEach((_, s) => {
      for (let i = first; i < end; i++) emitNode(s, i);
    });
  }
  states.forEach((b, s) => body.push(`(local.set $y${s} ${b.finish(ref(s, out))})`));
  pools.forEach((p) => locals.push(...p.decls()));
  return { locals, preamble, body };
}

/** The WAT text of a kernel variant. */
export function buildPowKernelWat(variant: KernelVariant): string {
  const simd = simdBackend(variant);
  const states: Backend[] = [
    ...Array.from({ length: variant.simdStates }, () => simd),
    ...Array.from({ length: variant.scalarStates }, () => scalarBackend),
  ];
  if (states.length === 0) throw new Error('a kernel needs at least one state');
  const lanes = variantLanes(variant);
  const firstLane = states.map((_, s) => states.slice(0, s).reduce((n, b) => n + b.lanes, 0));
  const { outOffset, nonceOffset } = POW_KERNEL_LAYOUT;
  const hasSimd = variant.simdStates > 0;
  const hasScalar = variant.scalarStates > 0;

  const u64 = (lo: string, hi: string): string =>
    `(i64.or (i64.extend_i32_u (local.get ${lo})) (i64.shl (i64.extend_i32_u (local.get ${hi})) (i64.const 32)))`;
  const nonceLocals = states.map((b, s) => `(local $n${s} ${b.type})`);
  const initNonces = states.map((b, s) => `(local.set $n${s} ${b.initNonce(firstLane[s]!)})`);
  const storeAll = states.map((b, s) => b.store(get(`$y${s}`), outOffset + 8 * firstLane[s]!));
  const hits = states.map((b, s) => ({ simd: b.type === 'v128', expr: b.hit(get(`$y${s}`)) }));
  const simdHits = hits.filter((h) => h.simd).map((h) => h.expr);
  const anyHit = [
    ...(simdHits.length > 0 ? [`(v128.any_true ${simdHits.reduce((a, b) => `(v128.or ${a} ${b})`)})`] : []),
    ...hits.filter((h) => !h.simd).map((h) => h.expr),
  ].reduce((a, b) => `(i32.or ${a} ${b})`);

  const search = emitCompression(variant, states);
  const hash = emitCompression(variant, states);
  const lines = (xs: readonly string[], indent: string): string => xs.join(`\n${indent}`);

  return `;; XE proof-of-work kernel ${JSON.stringify(variant)}, generated by scripts/gen-pow-kernel.ts
(module
  (memory (export "memory") 1)

  ;; Byte swap (the digest is read big-endian); off the hot path.
  (func $bswap64 (param $x i64) (result i64)
    (local.set $x (i64.or
      (i64.shl (i64.and (local.get $x) (i64.const 0x00ff00ff00ff00ff)) (i64.const 8))
      (i64.and (i64.shr_u (local.get $x) (i64.const 8)) (i64.const 0x00ff00ff00ff00ff))))
    (local.set $x (i64.or
      (i64.shl (i64.and (local.get $x) (i64.const 0x0000ffff0000ffff)) (i64.const 16))
      (i64.and (i64.shr_u (local.get $x) (i64.const 16)) (i64.const 0x0000ffff0000ffff))))
    (i64.rotl (local.get $x) (i64.const 32)))

  ;; The first lane j < ${lanes} with base + j < count and PoW value (at OUT + 8j) >= diff, or -1.
  (func $pick (param $base i32) (param $count i32) (param $diff i64) (result i32)
    (local $j i32)
    (block $none
      (loop $lane
        (br_if $none (i32.ge_u (i32.add (local.get $base) (local.get $j)) (local.get $count)))
        (if (i64.ge_u (i64.load offset=${outOffset} (i32.shl (local.get $j) (i32.const 3))) (local.get $diff))
          (then (return (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br_if $lane (i32.lt_u (local.get $j) (i32.const ${lanes})))))
    (i32.const -1))

  (func (export "search") (param $startLo i32) (param $startHi i32) (param $count i32)
      (param $diffLo i32) (param $diffHi i32) (result i32)
    (local $start i64) (local $diff i64) (local $base i32) (local $j i32)
    ${hasSimd ? '(local $dsplat v128)' : ''} ${hasScalar ? '(local $dtop i64)' : ''}
    ${lines([...nonceLocals, ...search.locals], '    ')}
    (if (i32.eqz (local.get $count)) (then (return (i32.const 0))))
    (local.set $start ${u64('$startLo', '$startHi')})
    (local.set $diff ${u64('$diffLo', '$diffHi')})
    ${hasSimd ? `(local.set $dsplat (i64x2.splat (i64.xor (local.get $diff) ${i64const(SIGN)})))` : ''}
    ${hasScalar ? '(local.set $dtop (i64.shr_u (local.get $diff) (i64.const 56)))' : ''}
    ${lines([...search.preamble, ...initNonces], '    ')}
    (loop $next
      ${lines(search.body, '      ')}
      ;; Rare: some lane may qualify. Store all PoW values and let $pick decide exactly.
      (if ${anyHit}
        (then
          ${lines(storeAll, '          ')}
          (local.set $j (call $pick (local.get $base) (local.get $count) (local.get $diff)))
          (if (i32.ge_s (local.get $j) (i32.const 0))
            (then
              (i64.store offset=${nonceOffset} (i32.const 0)
                (i64.add (local.get $start) (i64.extend_i32_u (i32.add (local.get $base) (local.get $j)))))
              (return (i32.const 1))))))
      ${lines(
        states.map((b, s) => `(local.set $n${s} ${b.advance(get(`$n${s}`), lanes)})`),
        '      ',
      )}
      (local.set $base (i32.add (local.get $base) (i32.const ${lanes})))
      (br_if $next (i32.lt_u (local.get $base) (local.get $count))))
    (i32.const 0))

  (func (export "hashes") (param $startLo i32) (param $startHi i32)
    (local $start i64)
    ${lines([...nonceLocals, ...hash.locals], '    ')}
    (local.set $start ${u64('$startLo', '$startHi')})
    ${lines([...hash.preamble, ...initNonces, ...hash.body, ...storeAll], '    ')})
)
`;
}

// ---------------------------------------------------------------------------------------------
// Compilation and the generated module

export const GENERATED_PATH = fileURLToPath(
  new URL('../node-core/protocol/pow-kernel.generated.ts', import.meta.url),
);

export async function compileWat(wat: string, simd: boolean): Promise<Uint8Array> {
  const wabt = await (await import('wabt')).default();
  const mod = wabt.parseWat('pow-kernel.wat', wat, { simd });
  try {
    mod.validate();
    return new Uint8Array(mod.toBinary({ log: false, write_debug_names: false }).buffer);
  } finally {
    mod.destroy();
  }
}

export interface BuiltKernel {
  readonly variant: KernelVariant;
  readonly lanes: number;
  readonly wat: string;
  readonly wasm: Uint8Array;
}

export async function buildPowKernel(variant: KernelVariant): Promise<BuiltKernel> {
  const wat = buildPowKernelWat(variant);
  const wasm = await compileWat(wat, variant.simdStates > 0);
  return { variant, lanes: variantLanes(variant), wat, wasm };
}

const wrapBase64 = (bytes: Uint8Array): string => {
  const b64 = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 100) lines.push(`  '${b64.slice(i, i + 100)}'`);
  return lines.join(' +\n');
};

/** The full text of node-core/protocol/pow-kernel.generated.ts. */
export async function buildPowKernelModuleSource(): Promise<string> {
  const simd = await buildPowKernel(POW_KERNEL_VARIANTS.simd);
  const scalar = await buildPowKernel(POW_KERNEL_VARIANTS.scalar);
  const entry = (
    name: string,
    doc: string,
    k: BuiltKernel,
  ): string => `/** ${doc} ${JSON.stringify(k.variant)} */
export const ${name} = {
  /** Nonces per loop iteration. */
  lanes: ${k.lanes},
  wasmBase64:
${wrapBase64(k.wasm)},
} as const;
`;
  return `// GENERATED by \`npm run gen:pow-kernel\` (scripts/gen-pow-kernel.ts). DO NOT EDIT.
// WebAssembly proof-of-work kernels; their ABI is documented in scripts/gen-pow-kernel.ts.

/** Memory offsets shared by both kernels. */
export const POW_KERNEL_LAYOUT = ${JSON.stringify(POW_KERNEL_LAYOUT)} as const;

${entry('POW_KERNEL_SIMD', 'Kernel using 128-bit SIMD:', simd)}
${entry('POW_KERNEL_SCALAR', 'Kernel for engines without SIMD:', scalar)}`;
}

async function main(): Promise<void> {
  const source = await buildPowKernelModuleSource();
  writeFileSync(GENERATED_PATH, source);
  console.log(`wrote ${GENERATED_PATH} (${source.length} chars)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
