/**
 * node-core/protocol: the XE protocol's byte formats, isomorphic (no Node built-ins), shared by the
 * node, the renderer and local scripts.
 */
export * from './errors.ts';
export * from './hex.ts';
export * from './int.ts';
export * from './json.ts';
export * from './units.ts';
export * from './hash.ts';
export * from './keys.ts';
export * from './memo.ts';
export * from './block.ts';
export * from './block-json.ts';
export * from './block-sign.ts';
export * from './statechain.ts';
export * from './payloads.ts';
export * from './vote.ts';
export * from './pow.ts';
export * from './pow-wasm.ts';
export * from './registration.ts';
export * from './framing.ts';
export * from './certificate.ts';
export * from './marketplace.ts';
