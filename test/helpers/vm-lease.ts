import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { leaseCost } from '../../node-core/protocol/lease-cost.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import type { KeyPair } from '../../node-core/protocol/keys.ts';
import { opensshPrivateKey } from '../../node-core/protocol/ssh-key.ts';

/**
 * Leases to a providing node and SSH through its tunnel, as a consumer with a real OpenSSH client
 * does it: shared by the provider tests and the vm-access benchmark (no test framework in here).
 */

export const run = promisify(execFile);
export const CLI = join(fileURLToPath(new URL('../..', import.meta.url)), 'bin', 'ledger-node.js');

export interface LeaseTerms {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
}

/** The fields of a `lease` block from an account holding `xusd` to `provider`, at `cert`'s price. */
export function leaseFields(
  provider: string,
  cert: PerformanceCertificate,
  access: KeyPair,
  terms: LeaseTerms,
  xusd: bigint,
): Omit<Block, 'account' | 'previous' | 'timestamp'> {
  const cost = leaseCost(terms, cert.price_multiplier_milli);
  return {
    type: 'lease',
    asset: 'XUSD',
    destination: provider,
    amount: cost,
    ...terms,
    access_pub_key: access.pub_key,
    certificate_hash: cert.hash,
    balance: xusd - cost,
  };
}

/** Writes the access key as an OpenSSH private key file (mode 0600) and returns its path. */
export function writeKeyFile(dir: string, key: KeyPair): string {
  const path = join(dir, `${key.pub_key.slice(0, 12)}.key`);
  writeFileSync(path, opensshPrivateKey(hexToBytes(key.seed_hex), key.pub_key), { mode: 0o600 });
  return path;
}

/** ssh arguments: quiet, no host-key prompts, no passwords. */
export function sshArgs(key: string, target: string[], command: string): string[] {
  return [
    '-i',
    key,
    ...target,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'BatchMode=yes',
    command,
  ];
}

/** The ssh target of a lease's VM through `nodeUrl`'s tunnel, with `ledger-node tunnel` as ProxyCommand. */
export function viaTunnel(key: string, nodeUrl: string, lease: string): string[] {
  return [
    '-o',
    `ProxyCommand=${process.execPath} ${CLI} tunnel %h --key ${key} --node ${nodeUrl}`,
    `root@${lease}`,
  ];
}
