import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { authorizedKeyLine, base64, opensshPrivateKey } from '../../node-core/protocol/ssh-key.ts';

const seed = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
const pair = keyPairFromSeed(seed);
const haveKeygen = spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error === undefined;
if (!haveKeygen) console.warn('ssh-key test: ssh-keygen not installed, the OpenSSH round trips are skipped');

describe('ssh-key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ssh-key-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('base64 matches Node for every tail length', () => {
    for (let n = 0; n < 10; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => 250 - i * 31);
      expect(base64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    }
  });

  it('authorizedKeyLine is the wire form: type, then string(type) || string(pub) in base64', () => {
    const line = authorizedKeyLine(pair.pub_key, 'lease-1');
    const [type, b64, comment] = line.split(' ');
    expect(type).toBe('ssh-ed25519');
    expect(comment).toBe('lease-1');
    const blob = Buffer.from(b64!, 'base64');
    expect(blob.readUInt32BE(0)).toBe(11);
    expect(blob.subarray(4, 15).toString()).toBe('ssh-ed25519');
    expect(blob.readUInt32BE(15)).toBe(32);
    expect(bytesToHex(blob.subarray(19))).toBe(pair.pub_key);
    expect(b64!.startsWith('AAAAC3NzaC1lZDI1NTE5AAAAI')).toBe(true);
    expect(authorizedKeyLine(pair.pub_key)).toBe(`ssh-ed25519 ${b64}`);
  });

  it('refuses a comment that would start a second key line, and a bad key', () => {
    expect(() => authorizedKeyLine(pair.pub_key, 'x\nssh-ed25519 AAAA evil')).toThrow(ProtocolError);
    expect(() => authorizedKeyLine('ab')).toThrow(ProtocolError);
    const other = keyPairFromSeed(new Uint8Array(32).fill(9));
    expect(() => opensshPrivateKey(seed, other.pub_key)).toThrow(/does not belong/);
    expect(() => opensshPrivateKey(seed.subarray(1), pair.pub_key)).toThrow(ProtocolError);
  });

  it('the private key file has the openssh-key-v1 layout, padded to 8', () => {
    const pem = opensshPrivateKey(seed, pair.pub_key, 'c');
    expect(pem.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----\n')).toBe(true);
    expect(pem.endsWith('\n-----END OPENSSH PRIVATE KEY-----\n')).toBe(true);
    const lines = pem.trim().split('\n').slice(1, -1);
    expect(lines.every((l) => l.length <= 70)).toBe(true);
    const raw = Buffer.from(lines.join(''), 'base64');
    expect(raw.subarray(0, 15).toString('latin1')).toBe('openssh-key-v1\0');
    // magic(15) + "none"(8) + "none"(8) + ""(4) + nkeys(4) + pubblob(4+51) = 94, then the private section
    const privLen = raw.readUInt32BE(94);
    expect(privLen % 8).toBe(0);
    expect(raw.length).toBe(98 + privLen);
  });

  it.skipIf(!haveKeygen)('ssh-keygen -y reads the private key back to the same public line', () => {
    const file = join(dir, 'id_ed25519');
    writeFileSync(file, opensshPrivateKey(seed, pair.pub_key, 'lease-key'), { mode: 0o600 });
    const out = execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
    // ssh-keygen -y prints the comment it found in the file.
    expect(out).toBe(authorizedKeyLine(pair.pub_key, 'lease-key'));
  });

  it.skipIf(!haveKeygen)(
    'a key ssh-keygen made gives the line ssh-keygen prints (independent implementation)',
    () => {
      const file = join(dir, 'gen');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'made-by-keygen', '-f', file]);
      const expected = execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
      const blob = Buffer.from(expected.split(' ')[1]!, 'base64');
      const pubHex = bytesToHex(blob.subarray(19));
      expect(authorizedKeyLine(pubHex, 'made-by-keygen')).toBe(expected);
    },
  );
});
