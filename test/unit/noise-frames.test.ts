import { generateKeyPair } from '@libp2p/crypto/keys';
import type { ConnectionEncrypter, MultiaddrConnection, Upgrader } from '@libp2p/interface';
import { defaultLogger } from '@libp2p/logger';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { LengthPrefixedDecoder, multiaddrConnectionPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { noiseCrypto } from '../../node-core/net/noise-cipher.ts';
import { type FrameBytes, frameLength, quietNoise } from '../../node-core/net/noise-frames.ts';
import { receiveBytes } from '../helpers/message-bytes.ts';

/**
 * Noise connections whose frame lengths are read without an Error at the end of each chunk
 * (net/noise-frames.ts): the frames decoded are the same whatever the chunks, and the library's
 * connections take the reader (an upgrade that moved it fails here).
 */

/** Frames as they go on the wire: 2 length bytes, then the bytes. */
function wire(frames: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(frames.reduce((n, f) => n + 2 + f.length, 0));
  let at = 0;
  for (const f of frames) {
    out[at] = f.length >> 8;
    out[at + 1] = f.length & 0xff;
    out.set(f, at + 2);
    at += 2 + f.length;
  }
  return out;
}

function frame(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff);
}

/** A decoder set up as the library sets up an encrypted connection's, reading lengths with `reader`. */
function decodeChunks(chunks: Uint8Array[], reader: (d: Uint8Array | FrameBytes) => number): Uint8Array[] {
  const decoder = new LengthPrefixedDecoder({
    lengthDecoder: reader,
    maxBufferSize: 16 * 1024 * 1024,
    encodingLength: () => 2,
  });
  const out: Uint8Array[] = [];
  for (const c of chunks) for (const f of decoder.decode(c)) out.push(f.subarray());
  return out;
}

describe('Noise frame lengths', () => {
  it('read without throwing, and decode the same frames however the bytes are cut', () => {
    expect(frameLength(new Uint8Array(0))).toBe(0);
    expect(frameLength(new Uint8Array([0x12]))).toBe(0);
    expect(frameLength(new Uint8Array([0x12, 0x34, 0x56]))).toBe(0x1234);
    // The decoder's own buffer (a list of chunks) is read through getUint16: decodeChunks below.

    const frames = [frame(300, 1), frame(0, 2), frame(1, 3), frame(65535, 4), frame(2, 5), frame(1000, 6)];
    const bytes = wire(frames);
    // An empty frame is skipped by the decoder, as with the library's reader.
    const expected = frames.filter((f) => f.length > 0);
    const cuts: Uint8Array[][] = [
      [bytes],
      Array.from({ length: 1200 }, (_, i) => bytes.subarray(i, i + 1)).concat([bytes.subarray(1200)]),
    ];
    let seed = 7;
    for (let round = 0; round < 20; round++) {
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length;) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        const n = 1 + (seed % 700);
        chunks.push(bytes.subarray(at, at + n));
        at += n;
      }
      cuts.push(chunks);
    }
    for (const chunks of cuts) expect(decodeChunks(chunks, frameLength)).toEqual(expected);
  });

  it("is the reader of the library's encrypted connections, both ways, which carry messages whole", async () => {
    const upgrader = { getStreamMuxers: () => new Map() } as unknown as Upgrader;
    // One side with the node's cipher (libsodium), the other with the library's: they must agree.
    const side = async (sodium: boolean): Promise<ConnectionEncrypter> => {
      const privateKey = await generateKeyPair('Ed25519');
      return quietNoise(sodium ? { crypto: noiseCrypto() } : {})({
        privateKey,
        peerId: peerIdFromPrivateKey(privateKey),
        logger: defaultLogger(),
        upgrader,
      });
    };
    const [a, b] = await Promise.all([side(true), side(false)]);
    // An in-memory connection pair (the real transport is TCP; the Noise handshake and frames are real).
    const [outboundConn, inboundConn] = multiaddrConnectionPair() as [
      MultiaddrConnection,
      MultiaddrConnection,
    ];
    const [out, inb] = await Promise.all([
      a.secureOutbound(outboundConn, { skipStreamMuxerNegotiation: true }),
      b.secureInbound(inboundConn, { skipStreamMuxerNegotiation: true }),
    ]);
    for (const secured of [out, inb])
      expect(
        (secured.connection as unknown as { decoder: { lengthDecoder: unknown } }).decoder.lengthDecoder,
      ).toBe(frameLength);

    // 200 KB: several Noise frames of at most 65,535 bytes; then small messages. Both ways.
    const sent = [frame(200_000, 9), frame(5, 10), frame(70, 11)];
    const expected = Uint8Array.from(sent.flatMap((m) => [...m]));
    for (const [from, to] of [
      [out, inb],
      [inb, out],
    ] as const) {
      const arriving = receiveBytes(to.connection, expected.length, 5000);
      for (const m of sent) from.connection.send(m);
      const joined = await arriving;
      expect(joined).toEqual(expected);
    }
    await Promise.all([out.connection.close(), inb.connection.close()]);
  });
});
