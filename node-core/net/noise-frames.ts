import { noise } from '@chainsafe/libp2p-noise';
import type { NoiseInit } from '@chainsafe/libp2p-noise';

/**
 * Noise (@chainsafe/libp2p-noise) whose connections read frame lengths without throwing.
 *
 * The library reads each frame's 2-byte length with a function that throws a RangeError while fewer
 * than 2 bytes wait, and its decoder catches that to stop. That happens at the end of nearly every
 * chunk a connection reads (the chunk ends on a frame's end): one Error, with its stack captured, and
 * 1.4 % of a gossip receiver's thread in a profile of `npm run bench -- network`. Through the
 * library's decoder a 1,400-byte chunk took 4.3-5.4 µs with that reader and 0.2-0.5 µs with this one
 * (8-11 against 0.2-0.8 with another process busy on the second core).
 * `frameLength` answers 0 instead: with its 2 length bytes that is a frame longer than what waits,
 * so the decoder stops at the same place, without an Error.
 */
export function quietNoise(init?: NoiseInit): ReturnType<typeof noise> {
  const make = noise(init);
  return (components) => {
    const encrypter = make(components);
    const inbound = encrypter.secureInbound.bind(encrypter);
    const outbound = encrypter.secureOutbound.bind(encrypter);
    encrypter.secureInbound = async (connection, options) =>
      withFrameLength(await inbound(connection, options));
    encrypter.secureOutbound = async (connection, options) =>
      withFrameLength(await outbound(connection, options));
    return encrypter;
  };
}

/** What the library's encrypted connection holds: the decoder of its incoming frames. */
interface FrameDecoderHolder {
  decoder?: { lengthDecoder?: unknown };
}

/**
 * Puts `frameLength` in place of the connection's length reader. A library whose connection no
 * longer has one is left as it is (test/unit/noise-frames.test.ts fails then, so an upgrade is seen).
 */
function withFrameLength<T extends { connection: unknown }>(secured: T): T {
  const decoder = (secured.connection as FrameDecoderHolder).decoder;
  if (decoder !== undefined && typeof decoder.lengthDecoder === 'function')
    decoder.lengthDecoder = frameLength;
  return secured;
}

/** What the decoder hands the reader: its buffer, a list of chunks (uint8arraylist), or bytes. */
export interface FrameBytes {
  readonly byteLength: number;
  getUint16(offset: number): number;
}

/** A Noise frame's length (2 bytes, big-endian), or 0 while fewer than 2 bytes have come. */
export function frameLength(data: Uint8Array | FrameBytes): number {
  if (data.byteLength < 2) return 0;
  return data instanceof Uint8Array ? (data[0]! << 8) | data[1]! : data.getUint16(0);
}
