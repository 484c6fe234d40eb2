/** Side-effect CSS imports (Vite bundles them into the importing chunk). */
declare module '*.css';
