import type { Socket } from 'node:net';

/**
 * The VM driver interface (decisions D16): the provider's automation creates, reaches and destroys
 * a lease's VM through it and never knows which driver runs. `qemu` runs a real VM per lease;
 * `sandbox` runs bubblewrap namespaces with an SSH server, for development and tests, and has no VM
 * boundary (`vmBoundary: false`), which every view of it says.
 */

export type VmDriverName = 'qemu' | 'sandbox';
export type VmStatus = 'creating' | 'running' | 'stopped' | 'error';

/** What a lease asks for: the VM's size and the only key that may log in (as root). */
export interface VmSpec {
  /** Lease hash, 64 hex: the VM's identity. */
  lease: string;
  vcpus: number;
  memoryMb: number;
  diskGb: number;
  /** The lease's `access_pub_key`: 64 hex, a raw Ed25519 public key. */
  accessPubKey: string;
}

/**
 * A running (or once running) VM as the driver knows it: enough to find it again after the node
 * restarts (`adopt`), kept by the provider in the store as JSON.
 */
export interface VmHandle {
  lease: string;
  driver: VmDriverName;
  /** The folder that holds this VM's files (disk, host key, pid file, sockets). */
  dir: string;
  /** Process id of the VM (qemu or bwrap), running detached from the node. */
  pid: number;
  /** Loopback port on the provider that reaches the guest's SSH server. */
  sshPort: number;
  /** The guest's internal IP as the guest sees it. */
  ip: string;
  /** Unix nanoseconds, digits. */
  createdAt: string;
  /** Resources as granted after the host's caps. */
  vcpus: number;
  memoryMb: number;
  diskGb: number;
}

export interface ExecResult {
  exit_code: number;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr was cut at the output cap. */
  truncated: boolean;
}

export interface ExecOptions {
  timeoutMs: number;
  /** Most bytes kept of stdout and of stderr each. */
  maxOutputBytes: number;
}

/** What a driver found out about this host at start. */
export interface DriverReport {
  driver: VmDriverName;
  available: boolean;
  /** Whether the guest is behind a hardware VM boundary (false for the sandbox). */
  vmBoundary: boolean;
  /** One line for the log, `/node` and the GUI: what runs and why (e.g. KVM unusable, emulating). */
  detail: string;
  /** qemu: 'kvm' or 'tcg' (software emulation). */
  accel?: 'kvm' | 'tcg';
}

export type VmErrorCode =
  | 'driver_unavailable' // the host cannot run this driver (missing binary, image not built)
  | 'launch_failed' // the VM process failed or its SSH server never answered in time
  | 'not_running' // exec or connect on a VM that is gone
  | 'exec_timeout' // the command ran past its time-out
  | 'exec_failed'; // the command could not be run at all

export class VmError extends Error {
  readonly code: VmErrorCode;
  constructor(code: VmErrorCode, message: string) {
    super(message);
    this.name = 'VmError';
    this.code = code;
  }
}

export interface VmDriver {
  readonly name: VmDriverName;
  /** Checks the host once (binaries, image, KVM usability); never throws. */
  probe(): Promise<DriverReport>;
  /**
   * Creates and boots a VM for `spec`; resolves once its SSH server accepts connections on the
   * returned handle's port. Throws VmError('launch_failed') and leaves nothing behind on failure.
   * `signal` aborts a launch (the VM is destroyed).
   */
  create(
    spec: VmSpec,
    opts?: { signal?: AbortSignal; onProgress?: (msg: string) => void },
  ): Promise<VmHandle>;
  /** Whether the VM of `handle` still runs (process alive and SSH port answering). */
  alive(handle: VmHandle): Promise<boolean>;
  /** Runs `command` with `sh -c` as root inside the VM. VmError('exec_timeout') past the time-out. */
  exec(handle: VmHandle, command: string, opts: ExecOptions): Promise<ExecResult>;
  /** A TCP connection to the guest's SSH server. */
  connect(handle: VmHandle): Promise<Socket>;
  /** Stops the VM and removes its files; idempotent. */
  destroy(handle: VmHandle): Promise<void>;
}
