import { concatBytes } from '../../node-core/protocol/hex.ts';

/**
 * The bytes of the `message` events a libp2p connection or stream dispatches, joined, once `total`
 * have come or `timeoutMs` passed (then what came). Listens from the call on: call it before sending.
 */
export async function receiveBytes(
  target: EventTarget,
  total: number,
  timeoutMs = 10_000,
): Promise<Uint8Array> {
  const got: Uint8Array[] = [];
  let n = 0;
  target.addEventListener('message', (e) => {
    const bytes = Uint8Array.from((e as unknown as { data: { subarray(): Uint8Array } }).data.subarray());
    got.push(bytes);
    n += bytes.length;
  });
  const deadline = Date.now() + timeoutMs;
  while (n < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return concatBytes(...got);
}
