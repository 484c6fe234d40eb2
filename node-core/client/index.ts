/** node-core/client: the typed HTTP client and wallet helper, isomorphic (fetch only). */
export * from './client.ts';
export * from './wallet.ts';
export * from './bridge.ts';
export * from './leasing.ts';
