import { existsSync } from 'node:fs';
import { AGENT_PORT_NAME, CMDLINE_KEY, CMDLINE_PROBE } from './guest-files.ts';
import type { VmImage } from './vm-image.ts';

/** QEMU's command line for a lease's VM and for the KVM probe: one place, so both boot alike. */

const QBOOT = '/usr/share/qemu/qboot.rom';

/**
 * Kernel parameters that cut boot time under emulation: no speculative-execution mitigations (each
 * costs many emulated instructions, and the guest owns the whole VM anyway), a preset delay-loop
 * calibration, no ACPI (its interrupt-link set-up is slow to emulate; PCI routing and SMP come from
 * the MP tables), quiet console.
 */
const FAST_BOOT = ['quiet', 'mitigations=off', 'lpj=4000000', 'tsc=reliable', 'no_timer_check', 'acpi=off'];

export interface QemuBootArgs {
  image: VmImage;
  accel: 'kvm' | 'tcg';
  vcpus: number;
  memoryMb: number;
  /** Base64 of the SSH public key blob (the lease's key); absent for the probe. */
  authorizedKey?: string;
  probe?: boolean;
}

export function bootArgs(o: QemuBootArgs): string[] {
  const append = ['console=ttyS0', 'panic=-1', ...FAST_BOOT];
  if (o.authorizedKey) append.push(`${CMDLINE_KEY}=${o.authorizedKey}`);
  if (o.probe) append.push(`${CMDLINE_PROBE}=1`);
  return [
    '-accel',
    o.accel === 'tcg' ? 'tcg,thread=multi' : 'kvm',
    '-machine',
    'pc',
    '-cpu',
    o.accel === 'kvm' ? 'host' : 'max',
    // qboot: a firmware that only loads the kernel, much faster than SeaBIOS under emulation.
    ...(existsSync(QBOOT) ? ['-bios', QBOOT] : []),
    '-smp',
    String(o.vcpus),
    '-m',
    String(o.memoryMb),
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-no-reboot',
    '-kernel',
    o.image.kernel,
    '-initrd',
    o.image.initrd,
    '-append',
    append.join(' '),
  ];
}

export interface QemuVmArgs extends QemuBootArgs {
  dir: string;
  sshPort: number;
  /** Path of the sparse raw data disk, when the lease has one. */
  disk?: string;
}

export function vmArgs(o: QemuVmArgs): string[] {
  return [
    ...bootArgs(o),
    '-name',
    `ledger-vm,process=ledger-vm`,
    // The console goes to a file in the VM's folder (launch diagnostics); its absolute path on the
    // command line also lets alive() tell our qemu from a process that reused the pid.
    '-serial',
    `file:${o.dir}/console.log`,
    '-netdev',
    `user,id=net0,hostfwd=tcp:127.0.0.1:${o.sshPort}-:22`,
    '-device',
    'virtio-net-pci,netdev=net0',
    '-device',
    'virtio-rng-pci', // entropy for the guest's SSH host key and key exchange from the first second
    ...(o.disk ? ['-drive', `file=${o.disk},format=raw,if=virtio,cache=writeback,discard=unmap`] : []),
    '-device',
    'virtio-serial-pci',
    // The guest agent's channel: a unix socket in the VM's folder (mode 0700), relative to qemu's
    // working folder (the VM's folder) so the path stays under the 108 bytes a socket path may have.
    '-chardev',
    'socket,id=agent,path=agent.sock,server=on,wait=off',
    '-device',
    `virtserialport,chardev=agent,name=${AGENT_PORT_NAME}`,
    '-pidfile',
    `${o.dir}/qemu.pid`,
  ];
}
