import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isHex } from '../protocol/hex.ts';
import { VmError, type ExecOptions, type VmHandle, type VmSpec } from './driver.ts';

/** What both drivers do alike with a lease's folder and its inputs. */

export function checkSpec(spec: VmSpec): void {
  if (!isHex(spec.lease, 32)) throw new VmError('launch_failed', 'lease must be 64 lowercase hex');
  if (!isHex(spec.accessPubKey, 32))
    throw new VmError('launch_failed', 'access key must be 64 lowercase hex');
  for (const [k, v] of [
    ['vcpus', spec.vcpus],
    ['memoryMb', spec.memoryMb],
    ['diskGb', spec.diskGb],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0 || (k !== 'diskGb' && v < 1)) {
      throw new VmError('launch_failed', `${k} must be a positive whole number`);
    }
  }
}

export function checkExecOptions(opts: ExecOptions): void {
  if (!(opts.timeoutMs > 0) || !Number.isSafeInteger(opts.maxOutputBytes) || opts.maxOutputBytes < 0) {
    throw new VmError('exec_failed', 'timeoutMs must be positive and maxOutputBytes a whole number');
  }
}

/** A lease's folder under the driver's base folder: private (host keys, the guest agent socket). */
export function makeVmDir(baseDir: string, lease: string): string {
  mkdirSync(baseDir, { recursive: true, mode: 0o700 });
  const dir = join(baseDir, lease);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** The handle is also kept in the VM's folder, for a look by hand. */
export function writeHandle(handle: VmHandle): void {
  writeFileSync(join(handle.dir, 'handle.json'), JSON.stringify(handle, null, 1) + '\n', { mode: 0o600 });
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The last lines of a log file, for a launch_failed message. */
export function tail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join(' | ');
  } catch {
    return '(no log)';
  }
}

/**
 * Collects a stream's bytes up to `cap`, counting what is dropped: commands may print without end and
 * must not fill the provider's memory.
 */
export class CappedBuffer {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  truncated = false;
  private readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.parts.push(part);
    this.kept += part.length;
  }
  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

/** The handle a previous create wrote into `dir`, if any. */
export function readHandle(dir: string): VmHandle | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'handle.json'), 'utf8')) as VmHandle;
  } catch {
    return undefined;
  }
}
