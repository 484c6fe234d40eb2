import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * The package as a user gets it: built to JavaScript with declarations, packed with `npm pack`,
 * installed from the tarball into a scratch project (from the npm cache where it can, else the
 * registry), imported as `ledger-node-desktop/client`, `/pow` and `/protocol`, type-checked by a
 * consumer's tsc, and run against a real node on Node 22 and, where the host has one, Node 20.
 * The build goes to a staging copy, never to the worktree's dist/.
 */
const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

const CONSUMER_JS = `
import { LedgerClient, Wallet, NotFound, NodeUnreachable, BlockRejected } from 'ledger-node-desktop/client';
import { createPowEngine } from 'ledger-node-desktop/pow';
import { generateKeyPair, hexToBytes } from 'ledger-node-desktop/protocol';

const client = new LedgerClient(process.argv[2]);
let progress = 0;
const pow = createPowEngine({ threads: 1, onProgress: () => progress++ });
const key = generateKeyPair();
const wallet = await Wallet.open(client, hexToBytes(key.seed_hex), (t, d) => pow.solve(t, d));
await wallet.claim(1234n);
const balance = await client.call('GET /accounts/{address}/balance', { params: { address: wallet.address } });
const notFound = await client
  .call('GET /blocks/{hash}', { params: { hash: '00'.repeat(32) } })
  .then(() => false, (e) => e instanceof NotFound);
const rejected = await wallet.send('ab'.repeat(32), 10n ** 12n).then(() => undefined, (e) => e instanceof BlockRejected && e.retryable);
const unreachable = await new LedgerClient('http://127.0.0.1:9').node().then(() => false, (e) => e instanceof NodeUnreachable);
await pow.close();
console.log(JSON.stringify({ node: process.versions.node, pow: pow.kind, progress: progress > 0, balance, notFound, rejected, unreachable }));
`;

const CONSUMER_TS = `
import { LedgerClient, type NodeRoutes, RateLimited } from 'ledger-node-desktop/client';
import { createPowEngine, type PowEngine } from 'ledger-node-desktop/pow';
import { addressFromPublicKey } from 'ledger-node-desktop/protocol';

const c = new LedgerClient('http://127.0.0.1:8080', { retry: { maxAttempts: 2 } });
export async function balanceOf(address: string): Promise<NodeRoutes['GET /accounts/{address}/balance']['response']> {
  return c.call('GET /accounts/{address}/balance', { params: { address } });
}
export const wait = (e: unknown): number => (e instanceof RateLimited ? e.retryAfterMs : 0);
export const engine: PowEngine = createPowEngine();
export const a: string = addressFromPublicKey('ab'.repeat(32));
// @ts-expect-error: a route the node does not have is a type error
export const nope = () => c.call('GET /no/such/route', {});
`;

let t: TestNode;
let work: string;
let scratch: string;

beforeAll(async () => {
  work = tempDir('package-pack-');
  const stage = join(work, 'stage');
  mkdirSync(stage);
  for (const f of ['package.json', 'README.md', 'bin'])
    cpSync(join(ROOT, f), join(stage, f), { recursive: true });
  // Type errors elsewhere in the worktree do not stop tsc's emit (CI's typecheck step reports them);
  // what matters here is that the package's entry points come out.
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      join(stage, 'dist'),
    ],
    {
      cwd: ROOT,
    },
  ).catch(() => undefined);
  for (const f of [
    'client/index.js',
    'client/index.d.ts',
    'client/pow-node.js',
    'client/pow-browser.js',
    'protocol/index.js',
    'cli/main.js',
  ])
    expect(existsSync(join(stage, 'dist/node-core', f)), f).toBe(true);
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: stage });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  expect(tarball).toMatch(/^ledger-node-desktop-\d+\.\d+\.\d+\.tgz$/);

  scratch = join(work, 'scratch');
  mkdirSync(scratch);
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
  );
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--omit=dev',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      join(work, tarball!),
    ],
    { cwd: scratch, maxBuffer: 1 << 24 },
  );
  writeFileSync(join(scratch, 'consumer.mjs'), CONSUMER_JS);
  writeFileSync(join(scratch, 'consumer.ts'), CONSUMER_TS);
  t = await startTestNode();
}, 240_000);

afterAll(async () => {
  await t?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in a scratch project', () => {
  it('ships the built client, the CLI and no test or source files', () => {
    const pkg = join(scratch, 'node_modules/ledger-node-desktop');
    expect(existsSync(join(pkg, 'dist/node-core/client/index.js'))).toBe(true);
    expect(existsSync(join(pkg, 'bin/ledger-node.js'))).toBe(true);
    expect(readdirSync(pkg).sort()).toEqual(
      ['README.md', 'bin', 'dist', 'node_modules', 'package.json'].filter(
        (f) => f !== 'node_modules' || existsSync(join(pkg, f)),
      ),
    );
    // npm always packs the "main" file: Electron's entry, the only file of dist/electron.
    expect(readdirSync(join(pkg, 'dist')).sort()).toEqual(['electron', 'node-core']);
    expect(readdirSync(join(pkg, 'dist/electron'))).toEqual(['main.js']);
  });

  it('imports ledger-node-desktop/client on Node 22 and talks to a real node', async () => {
    const { stdout } = await run(process.execPath, ['consumer.mjs', t.node.url], { cwd: scratch });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toEqual({
      node: process.versions.node,
      pow: 'node-workers',
      progress: true,
      balance: { XE: '1234' },
      notFound: true,
      rejected: false,
      unreachable: true,
    });
  }, 60_000);

  it('runs on Node 20 too (the host node, when it is a 20)', async (ctx) => {
    let v: string;
    try {
      v = execFileSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).trim();
    } catch {
      v = '';
    }
    if (!v.startsWith('v20.')) {
      console.log(`skipped: no Node 20 at /usr/bin/node (found ${v || 'none'})`);
      ctx.skip();
    }
    const { stdout } = await run('/usr/bin/node', ['consumer.mjs', t.node.url], { cwd: scratch });
    const out = JSON.parse(stdout) as { node: string; balance: unknown; notFound: boolean };
    expect(out.node.startsWith('20.')).toBe(true);
    expect(out.balance).toEqual({ XE: '1234' });
    expect(out.notFound).toBe(true);
  }, 60_000);

  it("type-checks a consumer's TypeScript against the shipped declarations", async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const r = await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2023',
        'consumer.ts',
      ],
      { cwd: scratch },
    ).then(
      () => ({ code: 0, out: '' }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  }, 60_000);
});
