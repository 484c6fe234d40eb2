import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { AGENT, GROUP, GUEST_MODULES, INITTAB, PASSWD, RC_BOOT, SHELLS } from './guest-files.ts';
import { findBinary, run } from './host-tools.ts';

/**
 * The qemu driver's boot image (decisions D16): the host's Debian kernel (linux-image-amd64) and a
 * small initramfs made here from Debian packages (busybox-static, dropbear-bin with the libraries it
 * links, the virtio modules), kept in a cache folder and rebuilt only when an input changes (the
 * cache key hashes every input file and the guest scripts). `npm run vm:image` builds it.
 */

export interface VmImage {
  /** Hash of the inputs, hex. */
  key: string;
  /**
   * The kernel to boot: the uncompressed ELF `vmlinux` taken out of Debian's bzImage when that
   * worked (QEMU boots it through its PVH entry, skipping the in-guest decompression that costs
   * seconds under emulation), else the bzImage itself.
   */
  kernel: string;
  /** Whether `kernel` is the uncompressed ELF (PVH boot). */
  pvh: boolean;
  initrd: string;
  kernelVersion: string;
  /** Unix milliseconds of the build. */
  builtAt: number;
}

/** Bumped when the layout the builder writes changes in a way the inputs do not show. */
const FORMAT = 'ledger-vm-image/2';
const MANIFEST = 'image.json';

export function defaultImageDir(): string {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'ledger-node', 'vm-image');
}

/** The image last built in `dir` (default: the cache folder), when its files are all there. */
export function findVmImage(dir = defaultImageDir()): VmImage | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as VmImage;
    if (
      typeof m.key === 'string' &&
      typeof m.pvh === 'boolean' &&
      existsSync(m.kernel) &&
      existsSync(m.initrd)
    ) {
      return m;
    }
  } catch {
    /* none built */
  }
  return undefined;
}

export class VmImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VmImageError';
  }
}

interface Inputs {
  kernelVersion: string;
  vmlinuz: string;
  busybox: string;
  dropbear: string;
  /** Shared libraries dropbear loads, the dynamic loader included (absolute paths). */
  libs: string[];
  /** Module files in load order (dependencies first), relative to /lib/modules/<version>. */
  modules: string[];
}

/** The newest kernel that has both /boot/vmlinuz-<v> and its modules. */
function pickKernel(): { version: string; vmlinuz: string } {
  const versions = existsSync('/lib/modules') ? readdirSync('/lib/modules') : [];
  const usable = versions
    .filter((v) => existsSync(`/boot/vmlinuz-${v}`) && existsSync(`/lib/modules/${v}/modules.dep`))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const version = usable.at(-1);
  if (!version) throw new VmImageError('no kernel in /boot with modules (apt-get install linux-image-amd64)');
  return { version, vmlinuz: `/boot/vmlinuz-${version}` };
}

/** The module files for `wanted`, each after the modules it depends on. */
function resolveModules(version: string, wanted: string[]): string[] {
  const dep = new Map<string, string[]>();
  const byName = new Map<string, string>();
  for (const line of readFileSync(`/lib/modules/${version}/modules.dep`, 'utf8').split('\n')) {
    const [file, rest] = line.split(':');
    if (!file || rest === undefined) continue;
    dep.set(file, rest.trim() ? rest.trim().split(/\s+/) : []);
    byName.set(moduleName(file), file);
  }
  const order: string[] = [];
  const visit = (file: string): void => {
    if (order.includes(file)) return;
    for (const d of dep.get(file) ?? []) visit(d);
    order.push(file);
  };
  for (const w of wanted) {
    const file = byName.get(w.replace(/-/g, '_'));
    // Built into the kernel (=y) is fine too: then there is no file to load.
    if (file) visit(file);
  }
  return order;
}

function moduleName(file: string): string {
  return file
    .split('/')
    .pop()!
    .replace(/\.ko(\.\w+)?$/, '')
    .replace(/-/g, '_');
}

async function gatherInputs(): Promise<Inputs> {
  const { version, vmlinuz } = pickKernel();
  const busybox = ['/usr/bin/busybox', '/bin/busybox'].find((p) => existsSync(p));
  if (!busybox) throw new VmImageError('busybox missing (apt-get install busybox-static)');
  // The initramfs has no libc for busybox: it must be the static build.
  const linked = await run('ldd', [busybox]);
  if (linked.code === 0 && linked.stdout.toString().includes('=>')) {
    throw new VmImageError(`${busybox} is dynamically linked (apt-get install busybox-static)`);
  }
  const bb = await run(busybox, ['--list-full']);
  if (bb.code !== 0) throw new VmImageError('busybox does not list its applets');
  const dropbear = findBinary('dropbear');
  if (!dropbear) throw new VmImageError('dropbear missing (apt-get install dropbear-bin)');
  const ldd = await run('ldd', [dropbear]);
  if (ldd.code !== 0) throw new VmImageError(`ldd ${dropbear} failed: ${ldd.stderr.trim()}`);
  const libs = [...ldd.stdout.toString().matchAll(/(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
  const modules = resolveModules(version, GUEST_MODULES);
  if (modules.length === 0) throw new VmImageError(`no virtio modules for kernel ${version}`);
  return { kernelVersion: version, vmlinuz, busybox, dropbear, libs, modules };
}

function inputKey(inp: Inputs): string {
  const h = createHash('sha256');
  h.update(FORMAT + '\0' + inp.kernelVersion + '\0');
  for (const t of [INITTAB, RC_BOOT, AGENT, PASSWD, GROUP, SHELLS]) h.update(t + '\0');
  const files = [
    inp.vmlinuz,
    inp.busybox,
    inp.dropbear,
    ...inp.libs,
    ...inp.modules.map((m) => `/lib/modules/${inp.kernelVersion}/${m}`),
  ];
  for (const f of files) h.update(f + '\0').update(readFileSync(f));
  return h.digest('hex');
}

/** ELF magic, and the xz stream magic Debian's amd64 bzImage (CONFIG_KERNEL_XZ) carries its kernel in. */
const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);
const XZ = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);

/**
 * Writes the ELF kernel found inside a bzImage to `to`; false when it cannot (another compressor,
 * no xz on the host), and the bzImage is booted instead.
 */
async function extractVmlinux(bzImage: string, to: string): Promise<boolean> {
  const bz = readFileSync(bzImage);
  const at = bz.indexOf(XZ);
  const xz = findBinary('xz');
  if (at < 0 || !xz) return false;
  const r = await run(xz, ['-dc', '--single-stream'], { input: bz.subarray(at) });
  if (r.stdout.length < 1 << 20 || !r.stdout.subarray(0, 4).equals(ELF)) return false;
  writeFileSync(to, r.stdout);
  return true;
}

export interface EnsureOptions {
  dir?: string;
  onProgress?: (msg: string) => void;
}

/**
 * The image for this host's current inputs: the cached one when its key matches, else a new build.
 * Needs the packages installed (scripts/vm-image.ts installs them); throws VmImageError otherwise.
 */
export async function ensureVmImage(opts: EnsureOptions = {}): Promise<VmImage> {
  const dir = opts.dir ?? defaultImageDir();
  const progress = opts.onProgress ?? (() => {});
  const inp = await gatherInputs();
  const key = inputKey(inp);
  const have = findVmImage(dir);
  if (have?.key === key) {
    progress(`vm image up to date (${key.slice(0, 12)}, kernel ${inp.kernelVersion})`);
    return have;
  }
  progress(`building vm image ${key.slice(0, 12)} (kernel ${inp.kernelVersion})`);
  mkdirSync(dir, { recursive: true });
  const stage = mkdtempSync(join(dir, '.stage-'));
  try {
    const root = join(stage, 'root');
    for (const d of [
      'bin',
      'sbin',
      'usr/bin',
      'usr/sbin',
      'etc',
      'proc',
      'sys',
      'dev',
      'run',
      'tmp',
      'root',
      'lib/modules',
    ]) {
      mkdirSync(join(root, d), { recursive: true });
    }
    // busybox and a link per applet; /init is busybox's init.
    copyFileSync(inp.busybox, join(root, 'bin/busybox'));
    chmodSync(join(root, 'bin/busybox'), 0o755);
    const applets = (await run(inp.busybox, ['--list-full'])).stdout.toString().split('\n').filter(Boolean);
    for (const a of applets) {
      const p = join(root, a);
      if (existsSync(p)) continue;
      mkdirSync(dirname(p), { recursive: true });
      symlinkSync('/bin/busybox', p);
    }
    symlinkSync('/bin/busybox', join(root, 'init'));
    progress(`  busybox with ${applets.length} applets`);
    // dropbear and its libraries at the paths the dynamic loader looks in.
    copyFileSync(inp.dropbear, join(root, 'usr/sbin/dropbear'));
    chmodSync(join(root, 'usr/sbin/dropbear'), 0o755);
    for (const lib of inp.libs) {
      const to = join(root, lib);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(lib, to); // copyFileSync follows the symlink: the file itself
      chmodSync(to, 0o755);
    }
    progress(`  dropbear with ${inp.libs.length} libraries`);
    const names: string[] = [];
    for (const m of inp.modules) {
      const name = moduleName(m);
      copyFileSync(`/lib/modules/${inp.kernelVersion}/${m}`, join(root, 'lib/modules', `${name}.ko`));
      names.push(name);
    }
    progress(`  modules: ${names.join(' ')}`);
    writeFileSync(join(root, 'etc/modules'), names.join('\n') + '\n');
    writeFileSync(join(root, 'etc/inittab'), INITTAB);
    writeFileSync(join(root, 'etc/rc.boot'), RC_BOOT, { mode: 0o755 });
    writeFileSync(join(root, 'sbin/ledger-agent'), AGENT, { mode: 0o755 });
    writeFileSync(join(root, 'etc/passwd'), PASSWD);
    writeFileSync(join(root, 'etc/group'), GROUP);
    writeFileSync(join(root, 'etc/shells'), SHELLS);
    chmodSync(join(root, 'root'), 0o700);

    // An uncompressed newc archive: under emulation the kernel unpacks it faster than it inflates gzip.
    const list = await run('sh', ['-c', 'find . -mindepth 1 | sort'], { cwd: root });
    const cpio = await run('cpio', ['--quiet', '-o', '-H', 'newc', '-R', '0:0'], {
      cwd: root,
      input: list.stdout,
    });
    if (cpio.code !== 0) throw new VmImageError(`cpio failed: ${cpio.stderr.trim()} (apt-get install cpio)`);
    const out = join(dir, key.slice(0, 16));
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out);
    writeFileSync(join(out, 'initrd.cpio'), cpio.stdout);
    const vmlinux = await extractVmlinux(inp.vmlinuz, join(out, 'vmlinux'));
    if (!vmlinux) copyFileSync(inp.vmlinuz, join(out, 'vmlinuz'));
    progress(
      vmlinux ? '  kernel: uncompressed vmlinux (PVH boot)' : '  kernel: bzImage (no PVH: slower boot)',
    );
    const image: VmImage = {
      key,
      kernel: join(out, vmlinux ? 'vmlinux' : 'vmlinuz'),
      pvh: vmlinux,
      initrd: join(out, 'initrd.cpio'),
      kernelVersion: inp.kernelVersion,
      builtAt: Date.now(),
    };
    // The manifest last, renamed into place: a half-built image is never found.
    writeFileSync(join(stage, MANIFEST), JSON.stringify(image, null, 1) + '\n');
    renameSync(join(stage, MANIFEST), join(dir, MANIFEST));
    progress(`vm image ready: ${out} (initramfs ${(cpio.stdout.length / 1048576).toFixed(1)} MiB)`);
    // Older builds go: only the current one is ever used.
    // A stage folder of another build still running is young; an old one was left by a crash.
    for (const e of readdirSync(dir)) {
      if (e === MANIFEST || e === key.slice(0, 16)) continue;
      const p = join(dir, e);
      if (e.startsWith('.stage-') && Date.now() - statSync(p).mtimeMs < 600_000) continue;
      rmSync(p, { recursive: true, force: true });
    }
    return image;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
