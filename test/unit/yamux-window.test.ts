import type { MultiaddrConnection, Stream, StreamMuxer } from '@libp2p/interface';
import { yamux } from '@chainsafe/libp2p-yamux';
import { multiaddrConnectionPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { lazyWindowYamux } from '../../node-core/net/yamux-window.ts';
import { receiveBytes } from '../helpers/message-bytes.ts';

/**
 * yamux streams that return window once half of it is used (net/yamux-window.ts): a real muxer pair
 * over an in-memory connection (the transport is TCP in the node) carries everything whole, in small
 * messages and in ones larger than the window, and sends a window update a half window, not a frame.
 */

/** yamux's window update frame type (the specification's 0x1). */
const WINDOW_UPDATE = 1;
const WINDOW = 256 * 1024;

interface FrameSender {
  sendFrame(header: { type: number }, data?: unknown): boolean;
}

type Yamux = ReturnType<typeof lazyWindowYamux>;

/** A muxer pair (the second side made by `other`), and how many window updates each side has sent. */
async function pair(make: Yamux, other: Yamux = make) {
  const [a, b] = multiaddrConnectionPair() as [MultiaddrConnection, MultiaddrConnection];
  const muxers = [make().createStreamMuxer(a), other().createStreamMuxer(b)] as [StreamMuxer, StreamMuxer];
  const updates = [0, 0];
  muxers.forEach((m, i) => {
    // Before any stream exists: each stream binds its muxer's sendFrame when it is made.
    const sender = m as unknown as FrameSender;
    const send = sender.sendFrame.bind(m);
    sender.sendFrame = (header, data) => {
      if (header.type === WINDOW_UPDATE) updates[i]! += 1;
      return send(header, data);
    };
  });
  const inbound = new Promise<Stream>((resolve) =>
    muxers[1].addEventListener('stream', (e) => resolve((e as CustomEvent<Stream>).detail), { once: true }),
  );
  const outbound = await muxers[0].createStream();
  return { muxers, updates, outbound, inbound };
}

/** Sends the messages in order, waiting for window when the stream asks to. */
async function sendAll(stream: Stream, messages: Uint8Array[]): Promise<void> {
  for (const m of messages) if (!stream.send(m)) await stream.onDrain();
}

function bytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 131 + seed) & 0xff);
}

/** Messages of three windows and more, both ways at once, arrive whole. */
async function largerThanTheWindow(make: Yamux, other: Yamux): Promise<void> {
  const { muxers, outbound, inbound } = await pair(make, other);
  outbound.send(new Uint8Array([1]));
  const receiver = await inbound;
  const big = [bytes(3 * WINDOW + 17, 3), bytes(5, 4), bytes(WINDOW, 5)];
  const total = big.reduce((n, m) => n + m.length, 0);
  const there = Uint8Array.from([1, ...big.flatMap((m) => [...m])]);
  const back = Uint8Array.from(big.flatMap((m) => [...m]));
  const [gotThere, gotBack] = await Promise.all([
    receiveBytes(receiver, there.length),
    receiveBytes(outbound, total),
    sendAll(outbound, big),
    sendAll(receiver, big),
  ]);
  expect(gotThere).toEqual(there);
  expect(gotBack).toEqual(back);
  await Promise.all(muxers.map((m) => m.close()));
}

describe('yamux window updates', () => {
  it('come once half the window is used, and 4 MB in 1 KB messages arrive whole', async () => {
    const { muxers, updates, outbound, inbound } = await pair(lazyWindowYamux());
    // The opening frame, so that the receiving stream exists before its listener is added.
    outbound.send(new Uint8Array([7]));
    const receiver = await inbound;
    const messages = Array.from({ length: 4096 }, (_, i) => bytes(1024, i));
    const expected = Uint8Array.from([7, ...messages.flatMap((m) => [...m])]);
    const [got] = await Promise.all([receiveBytes(receiver, expected.length), sendAll(outbound, messages)]);
    expect(got.length).toBe(expected.length);
    expect(got).toEqual(expected);
    // The library's own rule answers each of the 4,097 data frames: one update each. Half a window
    // is 128 KB at first (the window may grow), so 4 MB needs at most 32 and the opening's ACK.
    expect(updates[1]).toBeGreaterThan(0);
    expect(updates[1]).toBeLessThanOrEqual((4 * 1024 * 1024) / (WINDOW / 2) + 1);
    await Promise.all(muxers.map((m) => m.close()));
  });

  for (const [name, other] of [
    ['the same', lazyWindowYamux()],
    ["the library's own (a peer of an older version)", yamux()],
  ] as const)
    it(`let messages larger than the window through, both ways, with ${name} on the other side`, async () => {
      await largerThanTheWindow(lazyWindowYamux(), other);
    });
});
