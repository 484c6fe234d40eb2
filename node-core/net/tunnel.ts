import { Duplex } from 'node:stream';
import type { Stream } from '@libp2p/interface';

/**
 * The peer-to-peer tunnel to a lease's VM (`/xe/tunnel/2.0.0`, reference-behavior.md 5.7): the
 * opener writes the 32 raw bytes of the lease hash; the provider answers one status byte, 0x00 and
 * then a raw byte bridge to the VM's SSH server, or 0x01 followed by UTF-8 error text and the end of
 * the stream. The handshake must complete within 30 s.
 */
export const TUNNEL_PROTOCOL = '/xe/tunnel/2.0.0';
export const TUNNEL_HANDSHAKE_MS = 30_000;
const OK = 0x00;
const FAIL = 0x01;
/** An error text longer than this is cut: it is one line for a log or an HTTP 502. */
const MAX_ERROR_TEXT = 1024;

export class TunnelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TunnelError';
  }
}

/**
 * A libp2p stream as a Node Duplex, so it can be piped to a socket. `head` holds bytes already read
 * past a handshake; they come out first. Back-pressure is honoured both ways.
 */
export function streamToDuplex(stream: Stream, head?: Uint8Array): Duplex {
  const duplex = new Duplex({
    read() {
      stream.resume();
    },
    write(chunk: Buffer, _enc, cb) {
      try {
        if (stream.send(chunk)) cb();
        else stream.onDrain().then(() => cb(), cb);
      } catch (e) {
        cb(e as Error);
      }
    },
    final(cb) {
      stream.close().then(() => cb(), cb);
    },
    destroy(err, cb) {
      if (stream.status === 'open') stream.abort(err ?? new TunnelError('tunnel closed'));
      cb(err);
    },
  });
  if (head && head.length > 0) duplex.push(Buffer.from(head));
  stream.addEventListener('message', (e) => {
    if (!duplex.push(Buffer.from(e.data.subarray()))) stream.pause();
  });
  stream.addEventListener('remoteCloseWrite', () => duplex.push(null));
  stream.addEventListener('close', (e) => {
    if (e.error) duplex.destroy(e.error);
    else duplex.push(null);
  });
  return duplex;
}

/** Reads until at least `n` bytes came (or the stream ended), listening for 'message' events. */
function readAtLeast(stream: Stream, n: number, ms: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    let buf = new Uint8Array(0);
    const done = (err?: Error) => {
      clearTimeout(timer);
      stream.removeEventListener('message', onMessage);
      stream.removeEventListener('close', onClose);
      stream.removeEventListener('remoteCloseWrite', onClose);
      if (err) reject(err);
      else resolve(buf);
    };
    const onMessage = (e: { data: { subarray(): Uint8Array } }) => {
      const part = e.data.subarray();
      const next = new Uint8Array(buf.length + part.length);
      next.set(buf);
      next.set(part, buf.length);
      buf = next;
      if (buf.length >= n) {
        stream.pause();
        done();
      }
    };
    const onClose = () => done();
    const timer = setTimeout(() => done(new TunnelError('tunnel handshake timed out')), ms);
    timer.unref();
    stream.addEventListener('message', onMessage);
    stream.addEventListener('close', onClose);
    stream.addEventListener('remoteCloseWrite', onClose);
  });
}

/**
 * The opener's side: asks the provider for the tunnel of `leaseHash` (64 hex) on an opened stream.
 * Resolves with the byte bridge; rejects with TunnelError carrying the provider's refusal.
 */
export async function openTunnel(
  stream: Stream,
  leaseHash: string,
  ms = TUNNEL_HANDSHAKE_MS,
): Promise<Duplex> {
  stream.send(Buffer.from(leaseHash, 'hex'));
  const answer = await readAtLeast(stream, 1, ms);
  if (answer.length === 0) throw new TunnelError('the provider closed the tunnel');
  if (answer[0] === OK) return streamToDuplex(stream, answer.subarray(1));
  // A refusal: the rest of the stream is the error text.
  let text = answer.subarray(1);
  if (answer[0] === FAIL) {
    const more = await readAtLeast(stream, MAX_ERROR_TEXT, 2_000).catch(() => new Uint8Array(0));
    text = Uint8Array.from([...text, ...more]);
  }
  stream.abort(new TunnelError('refused'));
  const msg = new TextDecoder().decode(text.subarray(0, MAX_ERROR_TEXT)).trim();
  throw new TunnelError(msg === '' ? 'the provider refused the tunnel' : msg);
}

/**
 * The provider's side: reads the lease hash, asks `connect` for a socket to that lease's VM (which
 * throws, with a message for the opener, when the lease is not this provider's, not accepted or has
 * no running VM), answers the status byte and bridges.
 */
export async function answerTunnel(
  stream: Stream,
  connect: (leaseHash: string) => Promise<Duplex>,
  ms = TUNNEL_HANDSHAKE_MS,
): Promise<void> {
  let vm: Duplex;
  let head: Uint8Array;
  try {
    const first = await readAtLeast(stream, 32, ms);
    if (first.length < 32) throw new TunnelError('no lease hash');
    head = first.subarray(32);
    vm = await connect(Buffer.from(first.subarray(0, 32)).toString('hex'));
  } catch (e) {
    const text = new TextEncoder().encode((e as Error).message.slice(0, MAX_ERROR_TEXT));
    try {
      stream.send(Uint8Array.from([FAIL, ...text]));
      await stream.close();
    } catch {
      stream.abort(e as Error);
    }
    return;
  }
  stream.send(Uint8Array.of(OK));
  bridge(streamToDuplex(stream, head), vm);
}

/** Pipes two byte streams into each other; either side's end or failure ends both. */
export function bridge(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.once('error', end);
  b.once('error', end);
  a.once('close', end);
  b.once('close', end);
}
