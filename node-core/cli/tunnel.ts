import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { signLeaseAccess } from '../protocol/payloads.ts';

/**
 * `ledger-node tunnel LEASE --key FILE [--node URL]`: a ProxyCommand for OpenSSH. It opens
 * `POST /tunnel/{lease}/tcp` on a node with the replay-proof lease signature (decisions D12) made
 * with the lease's access key, then relays stdin and stdout to the VM's SSH server:
 *
 *   ssh -i key -o ProxyCommand='ledger-node tunnel %h --key key' root@<lease hash>
 *
 * The key file is the OpenSSH private key (unencrypted Ed25519) whose public key the lease names.
 */

export const TUNNEL_HELP = `Usage: ledger-node tunnel LEASE_HASH --key FILE [--node URL]

Opens a raw TCP tunnel to the SSH server of a leased VM through a node (yours, or the
provider's) and relays standard input and output: a ProxyCommand for OpenSSH.

  --key FILE   the lease's access key: an unencrypted OpenSSH Ed25519 private key file
  --node URL   the node's API (default http://127.0.0.1:8080)

Example:
  ssh -i key -o ProxyCommand='ledger-node tunnel %h --key key' root@<lease hash>
`;

export class TunnelUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TunnelUsageError';
  }
}

/** The 32-byte seed of an unencrypted `openssh-key-v1` Ed25519 private key file. */
export function seedFromOpensshKey(pem: string): Uint8Array {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(pem);
  if (!m) throw new TunnelUsageError('the key file is not an OpenSSH private key');
  const buf = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
  const magic = 'openssh-key-v1\0';
  if (buf.subarray(0, magic.length).toString('latin1') !== magic)
    throw new TunnelUsageError('the key file is not an OpenSSH private key');
  let at = magic.length;
  const str = (): Buffer => {
    if (at + 4 > buf.length) throw new TunnelUsageError('the key file is truncated');
    const n = buf.readUInt32BE(at);
    if (at + 4 + n > buf.length) throw new TunnelUsageError('the key file is truncated');
    const s = buf.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return s;
  };
  if (str().toString() !== 'none')
    throw new TunnelUsageError('the key file is encrypted: decrypt a copy with ssh-keygen -p first');
  str(); // kdf
  str(); // kdf options
  at += 4; // number of keys
  str(); // public key blob
  const body = str();
  const sub = (): Buffer => {
    const n = body.readUInt32BE(at);
    const s = body.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return s;
  };
  at = 8; // the two check integers
  if (sub().toString() !== 'ssh-ed25519') throw new TunnelUsageError('the key is not an Ed25519 key');
  sub(); // public key
  const secret = sub();
  if (secret.length !== 64) throw new TunnelUsageError('the Ed25519 key is malformed');
  return new Uint8Array(secret.subarray(0, 32));
}

interface TunnelArgs {
  lease: string;
  keyFile: string;
  node: URL;
}

function parseTunnelArgs(argv: readonly string[]): TunnelArgs | 'help' {
  let lease: string | undefined;
  let keyFile: string | undefined;
  let node = 'http://127.0.0.1:8080';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new TunnelUsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') return 'help';
    else if (a === '--key') keyFile = next();
    else if (a === '--node') node = next();
    else if (a.startsWith('--')) throw new TunnelUsageError(`unknown option ${a}`);
    else if (lease === undefined) lease = a;
    else throw new TunnelUsageError(`unexpected argument "${a}"`);
  }
  if (!lease || !/^[0-9a-fA-F]{64}$/.test(lease))
    throw new TunnelUsageError('the first argument must be the lease hash (64 hex)');
  if (!keyFile) throw new TunnelUsageError('--key FILE is required');
  let url: URL;
  try {
    url = new URL(node);
  } catch {
    throw new TunnelUsageError(`--node: "${node}" is not a URL`);
  }
  if (url.protocol !== 'http:') throw new TunnelUsageError('--node must be an http:// URL');
  return { lease: lease.toLowerCase(), keyFile, node: url };
}

/** Runs the tunnel until either side closes; the exit code for the CLI. */
export async function runTunnel(argv: readonly string[]): Promise<number> {
  let args: TunnelArgs | 'help';
  let seed: Uint8Array;
  try {
    args = parseTunnelArgs(argv);
    if (args === 'help') {
      process.stdout.write(TUNNEL_HELP);
      return 0;
    }
    seed = seedFromOpensshKey(readFileSync(args.keyFile, 'utf8'));
  } catch (e) {
    process.stderr.write(`ledger-node tunnel: ${(e as Error).message}\n`);
    return 2;
  }
  const { lease, node } = args;
  const ts = BigInt(Date.now()) * 1_000_000n;
  const sig = signLeaseAccess(lease, seed, ts);
  seed.fill(0);
  const port = Number(node.port || 80);
  const socket = connect(port, node.hostname.replace(/^\[|\]$/g, ''));
  socket.write(
    `POST /tunnel/${lease}/tcp HTTP/1.1\r\nHost: ${node.host}\r\nX-Signature: ${sig}\r\n` +
      `X-Timestamp: ${ts}\r\n\r\n`,
  );
  return new Promise<number>((resolve) => {
    let head = Buffer.alloc(0);
    const onError = (e: Error) => {
      process.stderr.write(`ledger-node tunnel: ${e.message}\n`);
      resolve(1);
    };
    socket.on('error', onError);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 65_536) onError(new Error('the node sent no HTTP answer'));
        return;
      }
      socket.off('data', onHead);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1];
      const rest = head.subarray(end + 4);
      if (status !== '200') {
        // An error answer: its JSON body says why.
        let body = rest.toString('utf8');
        socket.on('data', (c: Buffer) => (body += c.toString('utf8')));
        socket.on('close', () => {
          process.stderr.write(`ledger-node tunnel: HTTP ${status ?? '?'} ${body.trim()}\n`);
          resolve(1);
        });
        return;
      }
      if (rest.length > 0) process.stdout.write(rest);
      socket.pipe(process.stdout);
      process.stdin.pipe(socket);
      socket.on('close', () => resolve(0));
    };
    socket.on('data', onHead);
  });
}
