/** Ed25519's group order and little-endian scalar bytes, for tests that build signatures by hand. */
export const L = (1n << 252n) + 27742317777372353535851937790883648493n;

export function leToBig(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]!);
  return x;
}

export function bigToLe(x: bigint, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
}
