import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnNode } from '../../bench/spawn-node.ts';
import { tempDir, waitFor } from '../helpers/node.ts';

const BIN = new URL('../../bin/ledger-node.js', import.meta.url).pathname;

function run(
  args: string[],
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error('cli timed out'));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A started node's operator route answers: 400 (no providers) with the right token, else 401. */
async function operatorStatus(url: string, token: string): Promise<number> {
  const r = await fetch(`${url}/lease/request`, {
    method: 'POST',
    body: JSON.stringify({ vcpus: 1, duration: 60, access_pub_key: 'ab'.repeat(32) }),
    headers: { authorization: `Bearer ${token}` },
  });
  return r.status;
}

describe('the ledger-node command', () => {
  it('prints help and version', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--genesis-dir DIR');
    const v = await run(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^ledger-node \d+\.\d+\.\d+\n$/);
  });

  for (const [args, pattern] of [
    [['--bogus'], /unknown option --bogus/],
    [['--api-port', 'eighty'], /--api-port/],
    [['--api-port', '70000'], /--api-port/],
    [['--api-bind', 'not-an-ip'], /--api-bind/],
    [['--pow-difficulty', 'xyz'], /--pow-difficulty/],
    [['--rate-limit', 'maybe'], /--rate-limit/],
    [['--data-dir'], /--data-dir needs a value/],
    [['--genesis-set', 'bogus=1'], /--genesis-set: unknown field bogus/],
    [
      ['--genesis-set', 'lease_min_duration_secs=soon'],
      /lease_min_duration_secs: "soon" is not a whole number/,
    ],
    [['--price-multiplier', '20000'], /--price-multiplier: "20000"/],
    [['stray'], /unexpected argument/],
  ] as const) {
    it(`refuses ${args.join(' ')} with one line and exit code 2`, async () => {
      const r = await run([...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }

  it('refuses --genesis-set values a genesis cannot take, with one line and exit code 1', async () => {
    const r = await run([
      '--data-dir',
      tempDir(),
      '--api-port',
      '0',
      '--no-p2p',
      '--genesis-set',
      'lease_force_settle_gap_ns=1000',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^ledger-node: --genesis-set: .*force-settle gap must exceed twice/);
  });

  it('--genesis-set shapes a new development network whose node certifies itself', async () => {
    const node = await spawnNode([
      ...['--data-dir', tempDir(), '--api-port', '0', '--pow-difficulty', '2', '--no-p2p'],
      ...['--genesis-set', 'lease_min_duration_secs=5', '--genesis-set', 'certificate_iterations=5000'],
      ...['--price-multiplier', '1500'],
    ]);
    try {
      const info = (await (await fetch(`${node.url}/node`)).json()) as {
        lease_timing: { min_duration_secs: number };
      };
      expect(info.lease_timing.min_duration_secs).toBe(5);
      const kv = (await (await fetch(`${node.url}/statechain/kv/sys.certificate_workload`)).json()) as {
        value: unknown;
      };
      expect(kv.value).toMatchObject({ workload_version: 3, iterations: 5000 });
      const cert = await waitFor(
        async () => {
          const r = await fetch(`${node.url}/certificate`);
          return r.status === 200 ? ((await r.json()) as { price_multiplier_milli: number }) : undefined;
        },
        20_000,
        'the certificate',
      );
      expect(cert!.price_multiplier_milli).toBe(1500);
    } finally {
      await node.stop();
    }
  });

  it('refuses an unusable data directory with one line and exit code 1', async () => {
    const file = join(tempDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const r = await run(['--data-dir', file, '--api-port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^ledger-node: data directory .* is not a directory$/);
  });

  it('refuses a data directory another running node has, naming that process', async () => {
    const dir = tempDir();
    const a = await spawnNode(['--data-dir', dir, '--api-port', '0', '--pow-difficulty', '2', '--no-p2p']);
    try {
      const r = await run(['--data-dir', dir, '--api-port', '0', '--no-p2p']);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        `ledger-node: data directory ${dir} is in use by another node (process ${a.proc.pid})`,
      );
    } finally {
      await a.stop();
    }
    // Stopped, it leaves the directory to the next node.
    const b = await spawnNode(['--data-dir', dir, '--api-port', '0', '--no-p2p']);
    await b.stop();
  });

  it('refuses a port that is taken, saying so', async () => {
    const a = await spawnNode([
      '--data-dir',
      tempDir(),
      '--api-port',
      '0',
      '--pow-difficulty',
      '2',
      '--no-p2p',
    ]);
    try {
      const port = new URL(a.url).port;
      const r = await run(['--data-dir', tempDir(), '--api-port', port, '--no-p2p']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await a.stop();
    }
  });

  it('creates a development network with private key files, serves it, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    const node = await spawnNode([
      '--data-dir',
      dir,
      '--api-port',
      '0',
      '--pow-difficulty',
      '2',
      '--p2p-port',
      '0',
      '--p2p-bind',
      '127.0.0.1',
    ]);
    const info = (await (await fetch(`${node.url}/node`)).json()) as Record<string, unknown>;
    expect(info.network_id).toMatch(/^devnet-[0-9a-f]{8}$/);
    expect(info.pow_difficulty).toBe('0000000000000002');
    for (const f of ['devnet-keys.json', 'admin-token', 'node.key']) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    }
    const keys = JSON.parse(readFileSync(join(dir, 'devnet-keys.json'), 'utf8')) as Record<string, unknown>;
    expect(keys.network_id).toBe(info.network_id);
    expect(Object.keys(keys).sort()).toEqual([
      'dao',
      'dao_threshold',
      'minter',
      'network_id',
      'oracle',
      'representative',
      'timekeepers',
      'treasury',
    ]);
    expect(existsSync(join(dir, 'genesis', 'ledger-genesis.json'))).toBe(true);
    expect(existsSync(join(dir, 'genesis', 'statechain-genesis.json'))).toBe(true);
    // The admin token from the file opens operator routes; a wrong one is 401.
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    const body = JSON.stringify({ vcpus: 1, duration: 60, access_pub_key: 'ab'.repeat(32) });
    const wrong = await fetch(`${node.url}/lease/request`, {
      method: 'POST',
      body,
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${node.url}/lease/request`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${token}` },
    });
    // Past the token check, the request itself is refused (the node offers itself as provider now
    // that it certifies itself, but holds no XUSD to stake; with no provider it would be 'no providers').
    expect(right.status).toBe(400);
    expect(((await right.json()) as { error: string }).error).toMatch(/no providers|insufficient XUSD/);
    const exited = new Promise<number | null>((r) => node.proc.once('exit', (c) => r(c)));
    node.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses to start with an admin token file other users can read, saying how to fix it', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'admin-token');
    writeFileSync(file, 'a-token-that-others-can-read\n');
    chmodSync(file, 0o644);
    const r = await run(['--data-dir', dir, '--api-port', '0', '--no-p2p']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `ledger-node: the admin token file ${file} is open to other users (mode 0644): ` +
        `run chmod 600 ${file}, and replace the token if someone may have read it`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o644); // refused, not silently changed
    // The same for a file named with --admin-token-file.
    const other = join(tempDir(), 'token');
    writeFileSync(other, 'a-token-that-others-can-read\n', { mode: 0o640 });
    const r2 = await run([
      '--data-dir',
      tempDir(),
      '--admin-token-file',
      other,
      '--api-port',
      '0',
      '--no-p2p',
    ]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`the admin token file ${other} is open to other users (mode 0640)`);
  });

  it('takes the admin token from --admin-token-file or the environment, and warns when it is an argument', async () => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'token-from-a-private-file\n', { mode: 0o600 });
    const fromFile = await spawnNode([
      '--data-dir',
      tempDir(),
      '--admin-token-file',
      file,
      '--api-port',
      '0',
      '--no-p2p',
    ]);
    try {
      expect(await operatorStatus(fromFile.url, 'token-from-a-private-file')).toBe(400);
      expect(await operatorStatus(fromFile.url, 'a-wrong-token-of-some-length')).toBe(401);
    } finally {
      await fromFile.stop();
    }
    const env = { ...process.env, LEDGER_NODE_ADMIN_TOKEN: 'token-from-the-environment' };
    const fromEnv = await spawnNode(['--data-dir', tempDir(), '--api-port', '0', '--no-p2p'], { env });
    try {
      expect(await operatorStatus(fromEnv.url, 'token-from-the-environment')).toBe(400);
    } finally {
      await fromEnv.stop();
    }
    // Given as an argument it still works, but the node warns that other local users can see it
    // (without repeating the token in its logs).
    const proc = spawn(
      process.execPath,
      [
        BIN,
        '--data-dir',
        tempDir(),
        '--admin-token',
        'token-on-the-command-line',
        '--api-port',
        '0',
        '--no-p2p',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
    try {
      await waitFor(
        () => /every local user can read it in the process list/.test(stderr),
        30_000,
        'the warning',
      );
      expect(stderr).toContain('use --admin-token-file or LEDGER_NODE_ADMIN_TOKEN instead');
      expect(stderr).not.toContain('token-on-the-command-line');
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  });

  it('answers 403 on operator routes when started with --admin-token none', async () => {
    const node = await spawnNode([
      '--data-dir',
      tempDir(),
      '--api-port',
      '0',
      '--admin-token',
      'none',
      '--no-p2p',
    ]);
    try {
      const r = await fetch(`${node.url}/lease/request`, {
        method: 'POST',
        body: '{}',
        headers: { authorization: 'Bearer x' },
      });
      expect(r.status).toBe(403);
      expect(((await r.json()) as { error: string }).error).toMatch(/no admin token configured/);
    } finally {
      await node.stop();
    }
  });
});
