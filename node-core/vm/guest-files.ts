/**
 * The guest side of the qemu driver, built into the initramfs by vm-image.ts. These texts are part of
 * the image's cache key: changing one rebuilds the image.
 *
 * Boot: the kernel runs /init, which is busybox init; it runs /etc/rc.boot once (mounts, modules,
 * network, the lease's key), then keeps dropbear and the guest agent running (respawn).
 */

/** Printed on the serial console once init runs: the KVM probe waits for it. */
export const INIT_MARKER = 'ledger-vm: init';
/** Printed once the SSH server is about to start. */
export const READY_MARKER = 'ledger-vm: ready';
/** The virtio-serial port name of the guest agent. */
export const AGENT_PORT_NAME = 'org.ledger.agent';
/** Kernel command-line parameters the guest reads. */
export const CMDLINE_KEY = 'ledger_ak'; // base64 of the SSH public key blob: the only login key
export const CMDLINE_PROBE = 'ledger_probe'; // 1: print the init marker and power off (KVM probe)

export const INITTAB = `::sysinit:/etc/rc.boot
::respawn:/usr/sbin/dropbear -F -E -s -R -p 22
::respawn:/sbin/ledger-agent
::ctrlaltdel:/bin/poweroff -f
`;

export const RC_BOOT = `#!/bin/sh
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /run
echo "${INIT_MARKER}"
ak=""
probe=""
for w in $(cat /proc/cmdline); do
  case "$w" in
    ${CMDLINE_KEY}=*) ak="\${w#${CMDLINE_KEY}=}" ;;
    ${CMDLINE_PROBE}=1) probe=1 ;;
  esac
done
if [ -n "$probe" ]; then poweroff -f; fi
for m in $(cat /etc/modules); do insmod "/lib/modules/$m.ko"; done
hostname ledger-vm
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
echo "nameserver 10.0.2.3" > /etc/resolv.conf
# The lease's key is the only way in: no password is set, dropbear runs with -s (no passwords).
mkdir -p /root/.ssh /etc/dropbear
if [ -n "$ak" ]; then echo "ssh-ed25519 $ak lease" > /root/.ssh/authorized_keys; fi
chmod 700 /root /root/.ssh
chmod 600 /root/.ssh/authorized_keys 2>/dev/null
echo "${READY_MARKER}"
`;

/**
 * The guest agent: one request line from the host on the virtio-serial port, one answer line back.
 * Request: \`<id> <timeout s> <max bytes> <base64 command>\`; answer: \`<id> <exit code> <stdout
 * bytes> <stderr bytes> <base64 stdout or -> <base64 stderr or ->\`, the outputs cut at max bytes and
 * the full sizes telling the host whether they were. Requests run one at a time, in order.
 */
export const AGENT = `#!/bin/sh
export PATH=/sbin:/bin:/usr/sbin:/usr/bin HOME=/root
port=""
for d in /sys/class/virtio-ports/*; do
  [ "$(cat "$d/name" 2>/dev/null)" = "${AGENT_PORT_NAME}" ] && port="/dev/\${d##*/}"
done
if [ -z "$port" ]; then sleep 2; exit 1; fi
exec 3<>"$port"
cd /root
# With no host on the other end the port reads as end-of-file at once: wait and read again (the
# descriptor stays good for the next host connection) instead of exiting and being respawned.
while :; do
  if ! read -r id secs max cmd <&3; then sleep 0.1; continue; fi
  [ -n "$cmd" ] || continue
  c="$(echo "$cmd" | base64 -d)"
  timeout -s KILL "$secs" sh -c "$c" </dev/null >/run/agent.out 2>/run/agent.err
  rc=$?
  os=$(wc -c </run/agent.out)
  es=$(wc -c </run/agent.err)
  o=$(head -c "$max" /run/agent.out | base64 -w 0)
  e=$(head -c "$max" /run/agent.err | base64 -w 0)
  rm -f /run/agent.out /run/agent.err
  echo "$id $rc $os $es \${o:--} \${e:--}" >&3
done
`;

export const PASSWD = 'root:x:0:0:root:/root:/bin/sh\n';
export const GROUP = 'root:x:0:\ntty:x:5:\n';
export const SHELLS = '/bin/sh\n';

/** Kernel modules the guest needs (their dependencies come from modules.dep). */
export const GUEST_MODULES = ['virtio_pci', 'virtio_net', 'virtio_blk', 'virtio_console', 'virtio-rng'];
