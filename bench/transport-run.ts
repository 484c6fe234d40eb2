import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { Libp2p } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { createLibp2p } from 'libp2p';
import { nodeConnectionEncrypter, nodeStreamMuxer } from '../node-core/net/connection-stack.ts';

/**
 * One measurement of `npm run bench -- transport` (transport.ts), in a process of its own so that
 * no set-up inherits another's compiled code or garbage:
 * `node bench/transport-run.ts <setup> <size> <count>` prints the CPU µs a message of both hosts.
 */

const SETUPS = {
  libraries: () => ({ encrypter: noise(), muxer: yamux() }),
  'node-noise': () => ({ encrypter: nodeConnectionEncrypter(), muxer: yamux() }),
  node: () => ({ encrypter: nodeConnectionEncrypter(), muxer: nodeStreamMuxer() }),
};
type SetupName = keyof typeof SETUPS;

async function host(setup: SetupName): Promise<Libp2p> {
  const { encrypter, muxer } = SETUPS[setup]();
  return createLibp2p({
    privateKey: await generateKeyPair('Ed25519'),
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [encrypter],
    streamMuxers: [muxer],
  });
}

/** CPU µs a message of `size` bytes, sent `count` times (16 a turn, as a busy gossip stream). */
async function measure(setup: SetupName, size: number, count: number): Promise<number> {
  const [a, b] = await Promise.all([host(setup), host(setup)]);
  try {
    let got = 0;
    let target = Infinity;
    let reached = (): void => {};
    await b.handle('/bench/transport/1', (stream) => {
      stream.addEventListener('message', (e) => {
        got += (e as unknown as { data: { byteLength: number } }).data.byteLength;
        if (got >= target) reached();
      });
    });
    const until = (bytes: number) =>
      new Promise<void>((resolve) => {
        target = bytes;
        reached = resolve;
        if (got >= bytes) resolve();
      });
    const stream = await a.dialProtocol(b.getMultiaddrs()[0]!, '/bench/transport/1');
    const msg = new Uint8Array(size).fill(7);
    const sendAll = async (n: number) => {
      for (let sent = 0; sent < n;) {
        for (let i = 0; i < 16 && sent < n; i++, sent++) if (!stream.send(msg)) await stream.onDrain();
        await new Promise((r) => setImmediate(r));
      }
    };
    // A tenth as many first, not counted: the first messages compile the libraries' code.
    const warm = Math.ceil(count / 10);
    await sendAll(warm);
    await until(warm * size);
    const cpu0 = process.cpuUsage();
    await sendAll(count);
    await until((warm + count) * size);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / count;
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

const [setup, size, count] = process.argv.slice(2);
if (!setup || !(setup in SETUPS)) throw new Error(`setup: one of ${Object.keys(SETUPS).join(', ')}`);
console.log(String(await measure(setup as SetupName, Number(size), Number(count))));
