import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { BaseAgent, Client } from 'ssh2';
import type { ClientChannel, SignCallback, SigningRequestOptions } from 'ssh2';
import { hexToBytes } from '../protocol/hex.ts';
import { verifyBytes } from '../protocol/keys.ts';
import { SshConsoleError } from './ssh-console-errors.ts';

export { MAX_PTY_CELLS, SshConsoleError, type SshConsoleErrorCode } from './ssh-console-errors.ts';

/**
 * An SSH client for the VM console: runs over an already open stream to the VM's SSH server (the
 * lease tunnel), logs in as `root` with the lease's access key and opens a shell on a PTY. The node
 * never holds the access key's private half: the user-auth signature comes from `sign`, which the
 * console route relays to the browser. ssh2 runs the whole protocol; the key reaches it as a custom
 * agent (ssh2 signs `ssh-ed25519` user auth through agents with the raw 64-byte signature).
 */

export interface SshConsoleOptions {
  /** A stream to the VM's SSH server; destroyed when the session ends. */
  tunnel: Duplex;
  /** The lease's `access_pub_key`: 64 hex, a raw Ed25519 public key. */
  accessPubKey: string;
  /** Plain Ed25519 over `data` by the access key: 64 bytes. */
  sign(data: Uint8Array): Promise<Uint8Array>;
  cols: number;
  rows: number;
  /** Default `root`: the only account a lease's VM lets in (decisions D16). */
  username?: string;
  /** `TERM` of the PTY (default `xterm-256color`, what xterm.js emulates). */
  term?: string;
  /**
   * From the first byte to a logged-in session, signing round trip included (default 60 s: longer
   * than the route's 30 s sign time-out, so a silent browser is reported as such, not as this).
   */
  readyTimeoutMs?: number;
}

/** How a session ended: the shell's exit code (null when it reported none), or what broke it. */
export interface SshShellEnd {
  exitCode: number | null;
  /** Set when the shell was killed by a signal (`TERM`, `KILL`...). */
  signal?: string;
  error?: SshConsoleError;
}

export interface SshShell {
  /** OpenSSH form of the server's host key fingerprint, `SHA256:<base64, unpadded>`. */
  readonly hostKeyFingerprint: string;
  /** The PTY: write keystrokes, read the terminal's output (stderr is merged by the PTY). */
  readonly stream: Duplex;
  /** Resizes the PTY (cells); the shell gets SIGWINCH. */
  resize(cols: number, rows: number): void;
  /** Ends the shell, the SSH connection and the tunnel; `ended` settles soon after. */
  close(): void;
  /** Settles once the connection and the tunnel are closed; never rejects. */
  readonly ended: Promise<SshShellEnd>;
}

const SSH_ED25519 = 'ssh-ed25519';
const DEFAULT_READY_TIMEOUT_MS = 60_000;

/** `ssh-ed25519 AAAA...`: the wire blob (string type, string key; RFC 8709) in base64. */
export function openSshPublicKey(accessPubKeyHex: string): string {
  const key = hexToBytes(accessPubKeyHex, 32, 'access_pub_key');
  const type = Buffer.from(SSH_ED25519, 'ascii');
  const blob = Buffer.alloc(4 + type.length + 4 + key.length);
  blob.writeUInt32BE(type.length, 0);
  type.copy(blob, 4);
  blob.writeUInt32BE(key.length, 4 + type.length);
  blob.set(key, 8 + type.length);
  return `${SSH_ED25519} ${blob.toString('base64')}`;
}

/** The fingerprint OpenSSH prints (`ssh-keygen -l`) for a host key wire blob. */
export function sshFingerprint(keyBlob: Uint8Array): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

/**
 * The agent ssh2 asks for identities and signatures: one identity, the lease's access key, and
 * signatures from the callback. A signature that does not verify with that key is refused here, so
 * a browser holding the wrong key gets "wrong key" rather than the server's generic refusal.
 */
export class CallbackAgent extends BaseAgent<string> {
  readonly #publicKey: Uint8Array;
  readonly #line: string;
  readonly #sign: (data: Uint8Array) => Promise<Uint8Array>;
  /** The reason the last signing failed, kept to explain ssh2's generic authentication failure. */
  lastError: SshConsoleError | undefined;

  constructor(accessPubKeyHex: string, sign: (data: Uint8Array) => Promise<Uint8Array>) {
    super();
    this.#publicKey = hexToBytes(accessPubKeyHex, 32, 'access_pub_key');
    this.#line = openSshPublicKey(accessPubKeyHex);
    this.#sign = sign;
  }

  getIdentities(cb: (err: Error | undefined, keys?: string[]) => void): void {
    cb(undefined, [this.#line]);
  }

  sign(pubKey: string, data: Buffer, options: SigningRequestOptions | SignCallback, cb?: SignCallback): void {
    const done = (typeof options === 'function' ? options : cb)!;
    this.#sign(new Uint8Array(data)).then(
      (signature) => {
        if (!verifyBytes(signature, data, this.#publicKey)) {
          this.lastError = new SshConsoleError('auth_failed', 'the signature does not match the access key');
          done(this.lastError);
        } else done(undefined, Buffer.from(signature));
      },
      (e: unknown) => {
        this.lastError =
          e instanceof SshConsoleError
            ? e
            : new SshConsoleError('auth_failed', `signing failed: ${messageOf(e)}`, e);
        done(this.lastError);
      },
    );
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Logs in and opens the shell. Resolves once the shell is open; rejects with SshConsoleError (the
 * tunnel is then destroyed) when the handshake, the login or the shell request fails.
 */
export function openSshConsole(opts: SshConsoleOptions): Promise<SshShell> {
  const client = new Client();
  const agent = new CallbackAgent(opts.accessPubKey, opts.sign);
  let fingerprint = '';

  return new Promise<SshShell>((resolve, reject) => {
    let opened = false;
    let failure: SshConsoleError | undefined;
    const fail = (e: SshConsoleError): void => {
      failure ??= e;
      if (!opened) {
        client.end();
        opts.tunnel.destroy();
        reject(failure);
      }
    };

    client.on('error', (err: Error & { level?: string }) => {
      // ssh2 reports a refused login as a 'client-authentication' error once every method failed.
      if (err.level === 'client-authentication' || err.level === 'agent') {
        fail(agent.lastError ?? new SshConsoleError('auth_failed', 'the VM refused the access key', err));
      } else fail(new SshConsoleError('ssh_failed', `SSH: ${err.message}`, err));
    });
    client.on('close', () => {
      opts.tunnel.destroy();
      if (!opened)
        fail(new SshConsoleError('ssh_failed', 'the SSH connection closed before the shell opened'));
    });
    client.on('ready', () => {
      client.shell(
        { term: opts.term ?? 'xterm-256color', cols: opts.cols, rows: opts.rows },
        (err, channel) => {
          if (err !== undefined && err !== null) {
            fail(new SshConsoleError('ssh_failed', `the VM refused a shell: ${err.message}`, err));
            return;
          }
          opened = true;
          resolve(shellOf(client, channel, opts.tunnel, fingerprint));
        },
      );
    });

    client.connect({
      sock: opts.tunnel,
      username: opts.username ?? 'root',
      agent,
      // Only the access key: no 'none' probe, no password or keyboard prompts.
      authHandler: ['agent'],
      readyTimeout: opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      // Any host key is accepted: the stream reaches this lease's VM through a tunnel the node
      // opened itself (to its own VM, or to the provider named in the lease over an authenticated
      // libp2p stream), so the provider is the only party that could answer, and it runs the VM
      // anyway. The VM's host key is made at its first boot and known to nobody in advance; it is
      // shown to the user (the 'ready' status) so a change can be noticed.
      hostVerifier: (key: Buffer): boolean => {
        fingerprint = sshFingerprint(key);
        return true;
      },
      keepaliveInterval: 15_000,
    });
  });
}

function shellOf(
  client: Client,
  channel: ClientChannel,
  tunnel: Duplex,
  hostKeyFingerprint: string,
): SshShell {
  let exit: Omit<SshShellEnd, 'error'> = { exitCode: null };
  let error: SshConsoleError | undefined;
  // 'exit' comes before the channel closes, with a code or with the signal that killed the shell.
  channel.on('exit', (code: number | null, signal?: string) => {
    exit = typeof code === 'number' ? { exitCode: code } : { exitCode: null, ...(signal ? { signal } : {}) };
  });
  // The shell ended (or the server closed the channel): nothing else runs on this connection.
  channel.on('close', () => client.end());
  client.removeAllListeners('error');
  client.on('error', (err: Error) => {
    error ??= new SshConsoleError('ssh_failed', `SSH: ${err.message}`, err);
  });
  const ended = new Promise<SshShellEnd>((resolve) => {
    const finish = (): void => {
      tunnel.destroy();
      resolve(error === undefined ? exit : { ...exit, error });
    };
    client.once('close', finish);
  });
  return {
    hostKeyFingerprint,
    stream: channel,
    resize(cols, rows) {
      // Height and width in pixels are optional in the protocol: 0 means "not given".
      channel.setWindow(rows, cols, 0, 0);
    },
    close() {
      channel.end();
      client.end();
    },
    ended,
  };
}
