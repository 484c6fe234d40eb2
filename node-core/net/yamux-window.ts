import { yamux } from '@chainsafe/libp2p-yamux';
import type { YamuxMuxerInit } from '@chainsafe/libp2p-yamux';
import { StreamState } from '@chainsafe/libp2p-yamux/stream';

/**
 * yamux (@chainsafe/libp2p-yamux) whose streams return receive window to their peer once half of it
 * is used, not after every data frame.
 *
 * The library's stream calls its window update after each data frame it receives; the frame has just
 * lowered the window, so the "no update needed" test never holds and every frame is answered with a
 * 12-byte window update, sealed and written on its own, then read and opened by the peer (2.6 % of a
 * gossip receiver's thread in a profile of `npm run bench -- network`). A stream between two hosts
 * over TCP and the node's Noise (`npm run bench -- transport`) cost both together 48.2 µs a 300-byte
 * message with an update a frame and 26.0 with this; 1,400 bytes 50.6 against 33.5; 64 KB 754
 * against 647. The yamux specification leaves when to update to the receiver; hashicorp's
 * implementation, where yamux comes from, waits until half the window is used, as this does. The
 * peer never runs out of window while the receiver keeps up: it is given more while it has half.
 */
export function lazyWindowYamux(init?: YamuxMuxerInit): ReturnType<typeof yamux> {
  const make = yamux(init);
  return () => {
    const factory = make();
    const create = factory.createStreamMuxer.bind(factory);
    factory.createStreamMuxer = (maConn) => {
      const muxer = create(maConn);
      const holder = muxer as unknown as StreamMaker;
      // A library that no longer makes its streams here is left as it is
      // (test/unit/yamux-window.test.ts fails then, so an upgrade is seen).
      if (typeof holder._newStream === 'function') {
        const newStream = holder._newStream.bind(muxer);
        holder._newStream = (...args) => withLazyWindow(newStream(...args));
      }
      return muxer;
    };
    return factory;
  };
}

/** What the library's stream holds that the rule reads (stream.ts in @chainsafe/libp2p-yamux). */
interface WindowedStream {
  state: StreamState;
  /** The window the peer may fill. */
  recvWindow: number;
  /** What of it the peer has not used yet. */
  recvWindowCapacity: number;
  sendWindowUpdate(): void;
}

/** Where the library's muxer makes each stream, inbound and outbound. */
interface StreamMaker {
  _newStream?: (...args: unknown[]) => WindowedStream;
}

/**
 * Skips a stream's window update while it is established and the peer has more than half its window
 * left. Otherwise the library's own runs: on a stream opening (its flags go with the update), after
 * a pause, and once half is used, when it also grows the window if the peer fills it fast.
 */
function withLazyWindow<S extends WindowedStream>(stream: S): S {
  const update = stream.sendWindowUpdate.bind(stream);
  stream.sendWindowUpdate = () => {
    if (stream.state === StreamState.Established && stream.recvWindowCapacity * 2 > stream.recvWindow) return;
    update();
  };
  return stream;
}
