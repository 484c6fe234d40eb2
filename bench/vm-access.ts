/**
 * VM access (issue #12), with the sandbox driver on a development node in this process:
 * - lease to shell: from submitting the `lease` block to the first `ssh ... true` that succeeds
 *   through the node's tunnel (the provider provisions, attests and accepts in between);
 * - exec round trip: `POST /vms/{lease}/exec` of `true`, sequential, median;
 * - tunnel throughput: 64 MiB piped into `ssh ... 'cat > /dev/null'` through the tunnel, against
 *   the same ssh straight to the VM's loopback port and a plain loopback TCP copy, all in this run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerClient } from '../node-core/client/client.ts';
import { Wallet } from '../node-core/client/wallet.ts';
import type { DevnetKeys } from '../node-core/genesis/genesis.ts';
import { leaseCost } from '../node-core/leasing/pricing.ts';
import { LedgerNode } from '../node-core/node.ts';
import { bytesToHex, hexToBytes } from '../node-core/protocol/hex.ts';
import { generateKeyPair, signBytes } from '../node-core/protocol/keys.ts';
import { signLeaseAccess } from '../node-core/protocol/payloads.ts';
import { leaseFields, run, sshArgs, viaTunnel, writeKeyFile } from '../test/helpers/vm-lease.ts';
import { median, nowNs } from './measure.ts';

const XE = 1_000_000n;
const COPY_BYTES = 64 * 1024 * 1024;

async function until<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`bench: no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Seconds to pipe `file` into `ssh ... cat > /dev/null`. */
function sshCopy(args: string[], file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fd = openSync(file, 'r');
    const t0 = performance.now();
    const p = spawn('ssh', args, { stdio: [fd, 'ignore', 'pipe'] });
    let err = '';
    p.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (code) => {
      closeSync(fd);
      if (code === 0) resolve((performance.now() - t0) / 1000);
      else reject(new Error(`ssh copy failed (${code}): ${err}`));
    });
  });
}

/** Seconds to copy COPY_BYTES over a plain loopback TCP connection into a sink. */
function loopbackCopy(): Promise<number> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(64 * 1024, 7);
    let got = 0;
    let t0 = 0;
    const server = createServer((s) => {
      s.on('data', (d: Buffer) => {
        got += d.length;
        if (got >= COPY_BYTES) {
          s.destroy();
          server.close();
          resolve((performance.now() - t0) / 1000);
        }
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const c = connect((server.address() as { port: number }).port, '127.0.0.1', () => {
        t0 = performance.now();
        let sent = 0;
        const pump = () => {
          while (sent < COPY_BYTES) {
            sent += chunk.length;
            if (!c.write(chunk)) return void c.once('drain', pump);
          }
          c.end();
        };
        pump();
      });
      c.on('error', () => {});
    });
  });
}

/** Opens the console of `lease` as the window does and resolves at the shell's first prompt. */
function consolePrompt(url: string, lease: string, seed: Uint8Array): Promise<void> {
  const ts = nowNs();
  const sig = signLeaseAccess(lease, seed, ts);
  const ws = new WebSocket(
    `${url.replace(/^http/, 'ws')}/vms/${lease}/console?ts=${ts}&sig=${sig}&cols=80&rows=24`,
  );
  ws.binaryType = 'arraybuffer';
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('bench: no console prompt within 30 s')), 30_000);
    ws.onmessage = (e: MessageEvent) => {
      if (typeof e.data === 'string') {
        const m = JSON.parse(e.data) as { type: string; id?: number; data?: string; message?: string };
        if (m.type === 'sign')
          ws.send(
            JSON.stringify({
              type: 'signature',
              id: m.id,
              signature: bytesToHex(signBytes(hexToBytes(m.data!), seed)),
            }),
          );
        if (m.type === 'error') reject(new Error(`bench: console error ${m.message}`));
        return;
      }
      out += Buffer.from(e.data as ArrayBuffer).toString('latin1');
      if (/[#$] $/.test(out)) {
        clearTimeout(timer);
        ws.close();
        resolve();
      }
    };
    ws.onerror = () => reject(new Error('bench: console socket failed'));
  });
}

export default async function vmAccess(log: (line: string) => void): Promise<Record<string, number>> {
  if (spawnSync('bwrap', ['--version']).status !== 0) {
    log('vm-access: skipped, bubblewrap is not installed (apt-get install bubblewrap dropbear-bin)');
    return {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-vm-'));
  const node = new LedgerNode({
    dataDir: join(dir, 'node'),
    apiPort: 0,
    powDifficulty: 2n,
    rateLimit: false,
    p2p: false,
    uiDir: false,
    verifyThreads: 0,
    genesisSet: {
      certificate_iterations: 20_000n,
      certificate_table_entries: 1024n,
      certificate_reads: 1000n,
    },
    provide: { vcpus: 2n, memory_mb: 1024n, disk_gb: 2n, max_concurrent_leases: 0n },
    vm: { driver: 'sandbox', provider: { watchMs: 100, keepVmsOnStop: false } },
  });
  await node.start();
  try {
    const client = new LedgerClient(node.url, { adminToken: node.adminToken });
    const keys = JSON.parse(readFileSync(join(dir, 'node', 'devnet-keys.json'), 'utf8')) as DevnetKeys;
    const minter = await Wallet.open(client, hexToBytes(keys.minter.seed_hex));
    const consumer = await Wallet.open(client, globalThis.crypto.getRandomValues(new Uint8Array(32)));
    await consumer.claim(XE);
    await minter.mint(10n * XE);
    await minter.send(consumer.address, 10n * XE, 'XUSD');
    await consumer.receiveAll();
    const cert = await until(
      () => node.certificates.newestValid(node.nodeKey.address, nowNs()),
      30_000,
      'certificate',
    );
    const access = generateKeyPair();
    const key = writeKeyFile(dir, access);
    const terms = { vcpus: 1n, memory_mb: 256n, disk_gb: 1n, duration: 3600n };
    const cost = leaseCost(terms, cert.price_multiplier_milli);
    const t0 = performance.now();
    const lease = await consumer.prepare(leaseFields(node.nodeKey.address, cert, access, terms, 10n * XE));
    await client.submit(lease);
    consumer.advance(lease);
    const hash = lease.hash!;
    const tunnel = viaTunnel(key, node.url, hash);
    // Asynchronous: the node answering the tunnel runs in this very process.
    await until(
      () =>
        run('ssh', sshArgs(key, tunnel, 'true'), { timeout: 10_000 }).then(
          () => true,
          () => false,
        ),
      60_000,
      'shell',
    );
    const leaseToShellMs = performance.now() - t0;
    log(`lease block submitted to a shell through the tunnel: ${leaseToShellMs.toFixed(0)} ms`);

    // The same through the console's WebSocket, as the window does it: a second lease, from the
    // lease block to the shell's first prompt on the console.
    const t1 = performance.now();
    const second = await consumer.prepare(
      leaseFields(node.nodeKey.address, cert, access, terms, 10n * XE - cost),
    );
    await client.submit(second);
    consumer.advance(second);
    await until(() => node.ledger.leases.get(second.hash!)?.state === 'accepted', 60_000, 'second accept');
    await consolePrompt(node.url, second.hash!, hexToBytes(access.seed_hex));
    const leaseToConsoleMs = performance.now() - t1;
    log(
      `lease block submitted to a shell prompt in the console (WebSocket, SSH): ${leaseToConsoleMs.toFixed(0)} ms`,
    );

    const rtts: number[] = [];
    for (let i = 0; i < 30; i++) {
      const ts = nowNs();
      const s = performance.now();
      const r = await fetch(`${node.url}/vms/${hash}/exec`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature': signLeaseAccess(hash, hexToBytes(access.seed_hex), ts),
          'x-timestamp': String(ts),
        },
        body: JSON.stringify({ command: 'true' }),
      });
      await r.text();
      if (r.status !== 200) throw new Error(`exec answered ${r.status}`);
      rtts.push(performance.now() - s);
    }
    const execMs = median(rtts);
    log(`exec round trip (true), median of 30: ${execMs.toFixed(1)} ms`);

    const file = join(dir, 'payload');
    writeFileSync(file, Buffer.alloc(COPY_BYTES, 1));
    const handle = node.provider!.vm(hash)!.handle!;
    const direct = ['-p', String(handle.sshPort), 'root@127.0.0.1'];
    const mb = COPY_BYTES / 1024 / 1024;
    const tunnelS = await sshCopy(sshArgs(key, tunnel, 'cat > /dev/null'), file);
    const directS = await sshCopy(sshArgs(key, direct, 'cat > /dev/null'), file);
    const rawS = await loopbackCopy();
    const throughTunnel = mb / tunnelS;
    const sshDirect = mb / directS;
    const raw = mb / rawS;
    log(
      `ssh copy of ${mb} MiB: through the tunnel ${throughTunnel.toFixed(0)} MB/s, straight to the VM ${sshDirect.toFixed(0)} MB/s ` +
        `(${(throughTunnel / sshDirect).toFixed(2)}x); plain loopback TCP copy ${raw.toFixed(0)} MB/s (tunnel ${(throughTunnel / raw).toFixed(3)}x)`,
    );
    return {
      lease_to_shell_ms: leaseToShellMs,
      lease_to_console_prompt_ms: leaseToConsoleMs,
      exec_rtt_ms: execMs,
      tunnel_mb_s: throughTunnel,
      ssh_direct_mb_s: sshDirect,
      loopback_mb_s: raw,
      tunnel_vs_direct_ssh: throughTunnel / sshDirect,
      tunnel_vs_loopback: throughTunnel / raw,
    };
  } finally {
    await node.provider?.destroyAll();
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
