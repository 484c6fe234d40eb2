import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { opensshPrivateKey } from '../../node-core/protocol/ssh-key.ts';
import type { VmHandle, VmSpec } from '../../node-core/vm/driver.ts';

/** The real OpenSSH client against a VM driver's guest: key files, one-shot commands, leak checks. */

export interface SshKey {
  file: string;
  pubHex: string;
}

/** A fresh Ed25519 key written as an OpenSSH private key file (mode 0600) by opensshPrivateKey. */
export function writeSshKey(dir: string, name: string): SshKey {
  const seed = randomSeed();
  const pair = keyPairFromSeed(seed);
  const file = join(dir, name);
  writeFileSync(file, opensshPrivateKey(seed, pair.pub_key, name), { mode: 0o600 });
  return { file, pubHex: pair.pub_key };
}

export interface SshResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `ssh -i key -p port root@127.0.0.1 command`, host keys not checked (every guest has a new one). */
export function sshRun(
  port: number,
  keyFile: string,
  command: string,
  timeoutMs = 20_000,
): Promise<SshResult> {
  return new Promise((resolve) => {
    const child = spawn(
      'ssh',
      [
        '-i',
        keyFile,
        '-p',
        String(port),
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'BatchMode=yes',
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'IdentityAgent=none',
        '-o',
        'ConnectTimeout=10',
        '-o',
        'LogLevel=ERROR',
        'root@127.0.0.1',
        command,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * Creates a VM from a separate Node process that exits right after: the handle then belongs to a
 * "previous provider process", the case a node restart makes. `module` is the driver's file, `cls`
 * its class, `opts` its constructor options (JSON).
 */
export function createInChild(module: string, cls: string, opts: object, spec: VmSpec): Promise<VmHandle> {
  const code = [
    `import { ${cls} } from ${JSON.stringify(pathToFileURL(module).href)};`,
    `const d = new ${cls}(${JSON.stringify(opts)});`,
    `const h = await d.create(${JSON.stringify(spec)});`,
    `process.stdout.write(JSON.stringify(h));`,
    `process.exit(0);`,
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (status) => {
      if (status === 0) resolve(JSON.parse(out) as VmHandle);
      else reject(new Error(`create in a child process failed (${status}): ${err.trim()}`));
    });
  });
}
