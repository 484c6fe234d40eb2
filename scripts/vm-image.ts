/**
 * `npm run vm:image [-- --dir DIR]`: builds the qemu driver's kernel + initramfs (decisions D16) into
 * the cache folder (default `$XDG_CACHE_HOME/ledger-node/vm-image`, or `~/.cache/...`; also
 * `LEDGER_VM_IMAGE_DIR`), installing the Debian packages it needs with apt-get when one is missing.
 * A second run with the same inputs does nothing.
 */
import { spawnSync } from 'node:child_process';
import { findBinary } from '../node-core/vm/host-tools.ts';
import { defaultImageDir, ensureVmImage } from '../node-core/vm/vm-image.ts';

const args = process.argv.slice(2);
const dirFlag = args.indexOf('--dir');
const dir = dirFlag >= 0 ? args[dirFlag + 1] : process.env.LEDGER_VM_IMAGE_DIR || defaultImageDir();
if (!dir) {
  console.error('vm-image: --dir needs a folder');
  process.exit(2);
}

/** Debian package → a file it installs: present means installed. */
const packages: [string, () => boolean][] = [
  ['qemu-system-x86', () => findBinary('qemu-system-x86_64') !== undefined],
  ['linux-image-amd64', () => spawnSync('sh', ['-c', 'ls /boot/vmlinuz-* >/dev/null 2>&1']).status === 0],
  // The initramfs needs the static busybox (the `busybox` package's is linked against libc).
  ['busybox-static', () => spawnSync('dpkg', ['-s', 'busybox-static'], { stdio: 'ignore' }).status === 0],
  ['dropbear-bin', () => findBinary('dropbear') !== undefined],
  ['cpio', () => findBinary('cpio') !== undefined],
  ['xz-utils', () => findBinary('xz') !== undefined],
];
const missing = packages.filter(([, present]) => !present()).map(([name]) => name);
if (missing.length > 0) {
  console.log(`vm-image: installing ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const steps = [
    [...sudo, 'apt-get', 'update', '-qq'],
    [...sudo, 'apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing],
  ];
  for (const [cmd, ...rest] of steps) {
    const r = spawnSync(cmd!, rest, { stdio: 'inherit', env });
    if (r.status !== 0) {
      console.error(`vm-image: ${[cmd, ...rest].join(' ')} failed`);
      process.exit(1);
    }
  }
} else {
  console.log(
    'vm-image: packages present (qemu-system-x86, linux-image-amd64, busybox-static, dropbear-bin, cpio, xz-utils)',
  );
}

const started = performance.now();
try {
  const image = await ensureVmImage({ dir, onProgress: (m) => console.log(`vm-image: ${m}`) });
  console.log(`vm-image: kernel ${image.kernel}`);
  console.log(`vm-image: initrd ${image.initrd}`);
  console.log(`vm-image: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} catch (e) {
  console.error(`vm-image: ${(e as Error).message}`);
  process.exit(1);
}
