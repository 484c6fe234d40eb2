import { noiseCrypto } from './noise-cipher.ts';
import { quietNoise } from './noise-frames.ts';
import { lazyWindowYamux } from './yamux-window.ts';

/**
 * How the node encrypts and multiplexes its peer connections (P2PHost), in one place so that
 * `npm run bench -- transport` measures exactly what the node runs: Noise with frame lengths read
 * without an Error and libsodium's cipher, yamux with window updates once half the window is used.
 */
export function nodeConnectionEncrypter(): ReturnType<typeof quietNoise> {
  return quietNoise({ crypto: noiseCrypto() });
}

export function nodeStreamMuxer(): ReturnType<typeof lazyWindowYamux> {
  return lazyWindowYamux();
}
