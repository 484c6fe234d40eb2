/**
 * Loader for the WebAssembly proof-of-work kernels (pow-kernel.generated.ts, built by
 * scripts/gen-pow-kernel.ts, where the kernel ABI is documented) and a cancellable solve loop.
 *
 * Isomorphic: runs in Node, in browser Web Workers and (async loading only) on a browser main
 * thread. The SIMD kernel is used when the engine validates it, the scalar one otherwise. Each
 * PowKernel owns its own instance and memory: it is meant for one thread, and its calls are
 * synchronous, so a long search must be split into chunks (see `solvePow`) or run in a worker.
 */
import { ProtocolError } from './errors.ts';
import { POW_KERNEL_LAYOUT, POW_KERNEL_SCALAR, POW_KERNEL_SIMD } from './pow-kernel.generated.ts';
// The kernel takes a u64 as its two 32-bit halves (an i32 parameter wraps those above 2^31).
import { hi32, lo32, U64_MAX } from './int.ts';
import { checkU64, POW_TARGET_BYTES, randomNonce, throwIfPowAborted } from './pow.ts';

/** Largest `count` a single `search` call accepts (the kernel counts in 32 bits). */
export const MAX_SEARCH_COUNT = 2 ** 30;
/** Nonces per `solvePow` chunk: a few milliseconds of work, so aborts and progress stay prompt. */
export const DEFAULT_POW_CHUNK = 1 << 17;

export type PowKernelKind = 'simd' | 'scalar';

export interface PowKernel {
  /** True when this is the SIMD kernel. */
  readonly simd: boolean;
  /** Nonces the kernel computes per loop iteration (the width of `hashLanes`). */
  readonly lanes: number;
  /**
   * Tries `count` nonces from `startNonce` (wrapping at 2^64) in order; returns the first whose
   * PoW value is >= `difficulty`, or null.
   */
  search(target: Uint8Array, startNonce: bigint, count: number, difficulty: bigint): bigint | null;
  /** The PoW value of one nonce (as `powHash`), computed by the kernel. */
  hash(target: Uint8Array, nonce: bigint): bigint;
  /** PoW values of the `lanes` nonces from `startNonce`: every lane of the kernel, for tests. */
  hashLanes(target: Uint8Array, startNonce: bigint): bigint[];
}

export interface LoadPowKernelOptions {
  /** Force a kernel; by default SIMD when the engine supports it. */
  kind?: PowKernelKind;
}

interface KernelExports {
  readonly memory: WebAssembly.Memory;
  search(startLo: number, startHi: number, count: number, diffLo: number, diffHi: number): number;
  hashes(startLo: number, startHi: number): void;
}

const KERNELS = { simd: POW_KERNEL_SIMD, scalar: POW_KERNEL_SCALAR } as const;

function base64ToBytes(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const bytesCache = new Map<PowKernelKind, Uint8Array<ArrayBuffer>>();
function kernelBytes(kind: PowKernelKind): Uint8Array<ArrayBuffer> {
  let bytes = bytesCache.get(kind);
  if (bytes === undefined) {
    bytes = base64ToBytes(KERNELS[kind].wasmBase64);
    bytesCache.set(kind, bytes);
  }
  return bytes;
}

let simdSupported: boolean | undefined;
/** Whether this engine runs the SIMD kernel: validating the kernel itself is the exact feature test. */
export function powSimdSupported(): boolean {
  simdSupported ??= WebAssembly.validate(kernelBytes('simd'));
  return simdSupported;
}

function pickKind(opts: LoadPowKernelOptions | undefined): PowKernelKind {
  return opts?.kind ?? (powSimdSupported() ? 'simd' : 'scalar');
}

// Compiled modules are shared by all kernels of this realm; instances (and memories) are not.
const moduleCache = new Map<PowKernelKind, WebAssembly.Module>();
const modulePromises = new Map<PowKernelKind, Promise<WebAssembly.Module>>();

/** Loads a kernel with asynchronous compilation (allowed everywhere, including browser main threads). */
export async function loadPowKernel(opts?: LoadPowKernelOptions): Promise<PowKernel> {
  const kind = pickKind(opts);
  let pending = modulePromises.get(kind);
  const firstLoad = pending === undefined && !moduleCache.has(kind);
  if (pending === undefined) {
    const cached = moduleCache.get(kind);
    pending = cached !== undefined ? Promise.resolve(cached) : WebAssembly.compile(kernelBytes(kind));
    modulePromises.set(kind, pending);
  }
  const module = await pending;
  moduleCache.set(kind, module);
  const kernel = new WasmPowKernel(kind, await WebAssembly.instantiate(module, {}));
  return firstLoad ? warmUp(kernel) : kernel;
}

/** Loads a kernel with synchronous compilation: Node and workers only (browsers forbid it on the main thread). */
export function loadPowKernelSync(opts?: LoadPowKernelOptions): PowKernel {
  const kind = pickKind(opts);
  let module = moduleCache.get(kind);
  if (module === undefined) {
    module = new WebAssembly.Module(kernelBytes(kind));
    moduleCache.set(kind, module);
    return warmUp(new WasmPowKernel(kind, new WebAssembly.Instance(module, {})));
  }
  return new WasmPowKernel(kind, new WebAssembly.Instance(module, {}));
}

const WARM_UP_NONCES = 6000;

/**
 * Engines first run wasm with a baseline compiler (V8's Liftoff: about 7x slower here) and
 * optimise hot code in the background. A few milliseconds of searching right after compiling
 * gets that optimisation going while the kernel still sits idle, instead of during the first solve.
 */
function warmUp(kernel: WasmPowKernel): WasmPowKernel {
  kernel.search(new Uint8Array(POW_TARGET_BYTES), 0n, WARM_UP_NONCES, U64_MAX);
  return kernel;
}

class WasmPowKernel implements PowKernel {
  readonly simd: boolean;
  readonly lanes: number;
  readonly #exports: KernelExports;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;

  constructor(kind: PowKernelKind, instance: WebAssembly.Instance) {
    this.simd = kind === 'simd';
    this.lanes = KERNELS[kind].lanes;
    this.#exports = instance.exports as unknown as KernelExports;
    // The kernel never grows its memory, so these views stay valid.
    this.#bytes = new Uint8Array(this.#exports.memory.buffer);
    this.#view = new DataView(this.#exports.memory.buffer);
  }

  #setTarget(target: Uint8Array): void {
    if (!(target instanceof Uint8Array) || target.length !== POW_TARGET_BYTES) {
      throw new ProtocolError('ERR_LENGTH', `pow target must be ${POW_TARGET_BYTES} bytes`, 'target');
    }
    this.#bytes.set(target, POW_KERNEL_LAYOUT.targetOffset);
  }

  search(target: Uint8Array, startNonce: bigint, count: number, difficulty: bigint): bigint | null {
    checkU64(startNonce, 'startNonce');
    checkU64(difficulty, 'difficulty');
    if (!Number.isInteger(count) || count < 0 || count > MAX_SEARCH_COUNT) {
      throw new ProtocolError(
        'ERR_FIELD_RANGE',
        `count must be an integer in [0, ${MAX_SEARCH_COUNT}]`,
        'count',
      );
    }
    this.#setTarget(target);
    const found = this.#exports.search(
      lo32(startNonce),
      hi32(startNonce),
      count,
      lo32(difficulty),
      hi32(difficulty),
    );
    return found === 0 ? null : this.#view.getBigUint64(POW_KERNEL_LAYOUT.nonceOffset, true);
  }

  /** Runs the kernel on every lane from `startNonce`; lane j's value is then at outOffset + 8j. */
  #hashes(target: Uint8Array, startNonce: bigint): void {
    checkU64(startNonce, 'nonce');
    this.#setTarget(target);
    this.#exports.hashes(lo32(startNonce), hi32(startNonce));
  }

  hash(target: Uint8Array, nonce: bigint): bigint {
    // Lane 0 read alone: every block a node takes is checked here, and building the array of all
    // lanes cost more than the kernel's hashing.
    this.#hashes(target, nonce);
    return this.#view.getBigUint64(POW_KERNEL_LAYOUT.outOffset, true);
  }

  hashLanes(target: Uint8Array, startNonce: bigint): bigint[] {
    this.#hashes(target, startNonce);
    return Array.from({ length: this.lanes }, (_, j) =>
      this.#view.getBigUint64(POW_KERNEL_LAYOUT.outOffset + 8 * j, true),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Cancellable solve loop

export interface SolvePowOptions {
  /** First nonce tried (random by default). */
  startNonce?: bigint;
  /** Aborting rejects with PowAbortedError (checked between chunks). */
  signal?: AbortSignal;
  /** Called after every chunk with the total number of nonces tried so far. */
  onProgress?: (attempts: bigint) => void;
  /** Nonces per chunk (default DEFAULT_POW_CHUNK). */
  chunk?: number;
}

export interface PowSolution {
  nonce: bigint;
  /** Nonces tried, the solution included. */
  attempts: bigint;
}

/**
 * A macrotask boundary, so abort events and other work get to run between chunks. setImmediate
 * where it exists (Node); a MessageChannel elsewhere, since browsers clamp nested setTimeout to 4 ms.
 */
const yieldToEventLoop: () => Promise<void> = (() => {
  if (typeof setImmediate === 'function') return () => new Promise<void>((resolve) => setImmediate(resolve));
  let channel: MessageChannel | undefined;
  const waiting: (() => void)[] = [];
  return () =>
    new Promise<void>((resolve) => {
      if (channel === undefined) {
        channel = new MessageChannel();
        channel.port1.onmessage = () => waiting.shift()?.();
      }
      waiting.push(resolve);
      channel.port2.postMessage(null);
    });
})();

/**
 * Searches from `startNonce` upwards (wrapping at 2^64) until a nonce reaches `difficulty`, one
 * chunk at a time on the calling thread, yielding to the event loop between chunks.
 */
export async function solvePow(
  kernel: PowKernel,
  target: Uint8Array,
  difficulty: bigint,
  opts: SolvePowOptions = {},
): Promise<PowSolution> {
  const chunk = opts.chunk ?? DEFAULT_POW_CHUNK;
  if (!Number.isInteger(chunk) || chunk < 1 || chunk > MAX_SEARCH_COUNT) {
    throw new ProtocolError(
      'ERR_FIELD_RANGE',
      `chunk must be an integer in [1, ${MAX_SEARCH_COUNT}]`,
      'chunk',
    );
  }
  let nonce = opts.startNonce ?? randomNonce();
  checkU64(nonce, 'startNonce');
  let attempts = 0n;
  for (;;) {
    throwIfPowAborted(opts.signal);
    const found = kernel.search(target, nonce, chunk, difficulty);
    if (found !== null) {
      attempts += ((found - nonce) & U64_MAX) + 1n;
      opts.onProgress?.(attempts);
      return { nonce: found, attempts };
    }
    attempts += BigInt(chunk);
    nonce = (nonce + BigInt(chunk)) & U64_MAX;
    opts.onProgress?.(attempts);
    await yieldToEventLoop();
  }
}
