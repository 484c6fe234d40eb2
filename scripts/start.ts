/**
 * `npm start`: starts the app.
 *
 * 1. Builds what is missing: the GUI (`vite build --config renderer/vite.config.ts`) when
 *    renderer/dist/index.html does not exist, and the Electron code (`tsc -p tsconfig.build.json`)
 *    when Electron's binary is installed and dist/electron/main.js is missing or older than the
 *    sources in electron/ and node-core/.
 * 2. With Electron's binary installed and no flags given: runs the desktop app (its window, its
 *    tray, its node in the application-data folder).
 * 3. Otherwise, or with `--headless`, or with any ledger-node flag (`npm start -- --api-port 0`):
 *    runs the node headless (the `ledger-node` command) and prints the GUI's connect link,
 *    http://127.0.0.1:<port>/ui/#/connect/<admin token>, for a browser.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const at = (...parts: string[]): string => join(ROOT, ...parts);
const note = (msg: string): void => void process.stderr.write(`npm start: ${msg}\n`);

/** Runs a Node script of a dev dependency with this Node (the pinned one), in the repository. */
function runWithNode(script: string, args: string[]): boolean {
  return spawnSync(process.execPath, [at(script), ...args], { cwd: ROOT, stdio: 'inherit' }).status === 0;
}

function buildRenderer(): void {
  if (existsSync(at('renderer', 'dist', 'index.html'))) return;
  if (!existsSync(at('renderer', 'vite.config.ts'))) {
    note(
      'the GUI is not built and renderer/vite.config.ts does not exist yet: skipping it (/ui/ will say so)',
    );
    return;
  }
  note('building the GUI: vite build --config renderer/vite.config.ts');
  if (!runWithNode('node_modules/vite/bin/vite.js', ['build', '--config', 'renderer/vite.config.ts'])) {
    note('the GUI build failed (see above); starting without it');
  }
}

/**
 * The Electron executable when its binary was downloaded, else undefined. `require('electron')`
 * returns that path, but when the binary is missing it tries to download it first, so the files it
 * would look at are checked before.
 */
function electronBinary(): string | undefined {
  const require = createRequire(import.meta.url);
  let pkgDir: string;
  try {
    pkgDir = dirname(require.resolve('electron/package.json'));
  } catch {
    return undefined;
  }
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH === undefined) {
    const pathFile = join(pkgDir, 'path.txt');
    if (!existsSync(pathFile)) return undefined;
    if (!existsSync(join(pkgDir, 'dist', readFileSync(pathFile, 'utf8')))) return undefined;
  }
  try {
    const path: unknown = require('electron');
    return typeof path === 'string' && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Newest modification time of the TypeScript sources under the given folders. */
function newestSource(dirs: string[]): number {
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.c?ts$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of dirs) if (existsSync(dir)) walk(dir);
  return newest;
}

function buildElectron(): boolean {
  const main = at('dist', 'electron', 'main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newestSource([at('electron'), at('node-core')]))
    return true;
  note('building the Electron code: tsc -p tsconfig.build.json');
  return runWithNode('node_modules/typescript/bin/tsc', ['-p', 'tsconfig.build.json']);
}

function runElectron(binary: string): Promise<number> {
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE; // would make the binary a plain Node
  const child = spawn(binary, [ROOT], { cwd: ROOT, stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => child.kill(signal)); // the app stops its node, then exits
  }
  return new Promise((resolve) => {
    child.on('error', (err) => {
      note(`could not start Electron: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 0 : 1)));
  });
}

async function runHeadless(args: string[], why?: string): Promise<number> {
  if (why !== undefined) note(`running the node headless (${why})`);
  const { main } = await import('../node-core/cli/main.ts');
  return main(args, {
    onReady(node) {
      if (node.uiDir === undefined) return;
      const address = `${node.url}/ui/`;
      if (node.uiUrl === undefined) {
        process.stdout.write(`GUI: ${address} (not built: npm run build:renderer)\n`);
        return;
      }
      // The connect link gives a browser its session with the node, which keeps the wallet: once per
      // browser, and the session outlives port changes. It holds the admin token: this terminal only.
      const link =
        node.adminToken === undefined
          ? address
          : `${address}#/connect/${encodeURIComponent(node.adminToken)}`;
      process.stdout.write(
        `GUI: open ${link} in a browser\n` +
          `     (the link connects the browser to this node once; afterwards ${address} is enough; keep it private)\n`,
      );
    },
  });
}

async function start(argv: string[]): Promise<number> {
  const headless = argv.includes('--headless');
  const args = argv.filter((a) => a !== '--headless');
  const wantsInfo = args.some((a) => ['--help', '-h', '--version', '-v'].includes(a));
  if (!wantsInfo) buildRenderer();
  if (wantsInfo) return runHeadless(args);
  if (headless) return runHeadless(args, '--headless');
  if (args.length > 0) return runHeadless(args, 'ledger-node flags given; the desktop app takes none');
  const binary = electronBinary();
  if (binary === undefined) {
    return runHeadless(args, "Electron's binary is not installed: no desktop window");
  }
  if (!buildElectron()) {
    note('the Electron build failed (see above)');
    return 1;
  }
  return runElectron(binary);
}

process.exitCode = await start(process.argv.slice(2));
