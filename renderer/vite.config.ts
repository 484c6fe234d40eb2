import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompressPlugin } from '../scripts/precompress.ts';

/**
 * The renderer's build: served by the node at /ui/ (and loaded by the Electron window from there).
 * Workers (proof of work, the keystore's key derivation) are ES module workers. Heavy pages are split
 * into lazy chunks by React.lazy; the initial JavaScript stays small (bench/renderer.ts measures it).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  // .br and .gz next to each text file: the node serves them to browsers that accept them.
  plugins: [react(), precompressPlugin()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Source maps stay out of the shipped app; the bundle is small and readable enough to debug.
    sourcemap: false,
    // The proof-of-work kernel (base64 wasm) lives in the worker chunk; nothing here is that large.
    chunkSizeWarningLimit: 600,
  },
  worker: { format: 'es' },
  // The renderer imports node-core/protocol and node-core/client from outside its root.
  server: { fs: { allow: ['..'] } },
});
