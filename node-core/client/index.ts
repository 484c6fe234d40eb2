/**
 * node-core/client: the typed HTTP client and wallet helper, isomorphic (fetch only). The package
 * exports it as `ledger-node-desktop/client`; proof of work for scripts is `ledger-node-desktop/pow`
 * (the multi-core solver on Node, the WebAssembly kernel in a browser).
 */
export * from './client.ts';
export * from './errors.ts';
export * from './retry.ts';
export * from './wallet.ts';
export * from './bridge.ts';
export * from './leasing.ts';
export * from './chat.ts';
export * from './lease-actions.ts';
/** The keystore file (the window's export format): `keystoreFile.openWithPassword(text, passphrase)`. */
export * as keystoreFile from './keystore-file.ts';
export type { NodeRoutes, ProxyRoutes } from './api-routes.generated.ts';
export { ROUTES, PROXY_ROUTE_KEYS } from './api-routes.generated.ts';
