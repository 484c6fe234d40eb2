import { isIP } from 'node:net';
import { MIN_ADMIN_TOKEN_LENGTH } from '../admin-token.ts';
import { GENESIS_SET_FIELDS, type GenesisSet, type GenesisSetField } from '../genesis/genesis.ts';
import { MAX_PRICE_MULTIPLIER_MILLI, MIN_PRICE_MULTIPLIER_MILLI } from '../protocol/certificate.ts';
import { parseDifficulty } from '../protocol/pow.ts';
import type { ProviderCapacity } from '../leasing/marketplace/capacity.ts';
import { DEFAULT_PROVIDE } from '../leasing/provider/policy.ts';
import { LOG_FORMATS, type LogFormat } from './log-format.ts';

export { DEFAULT_PROVIDE };

/**
 * Command-line flags of `ledger-node`. Parsing is strict: an unknown flag or a bad value is a
 * one-line usage error, never a stack trace.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface CliOptions {
  help: boolean;
  version: boolean;
  dataDir?: string;
  apiPort: number;
  apiBind: string;
  powDifficulty?: bigint;
  /**
   * Capacity offered as a provider (`--vcpus`, `--memory`, `--disk`, `--max-concurrent-leases`);
   * absent: none. A development network provides by default (D9) unless `--no-provide`.
   */
  provide?: ProviderCapacity;
  /** `--provide` given (true), `--no-provide` (false), or neither. */
  provideFlag?: boolean;
  /** `--vm-driver`: how lease VMs run (default auto). */
  vmDriver: 'auto' | 'qemu' | 'sandbox';
  /** `--allow-sandbox`: the sandbox driver on a network that is not a development network. */
  allowSandbox: boolean;
  /** `--vm-image-dir`: the qemu guest's kernel and initramfs. */
  vmImageDir?: string;
  /** The lease policy flags, in seconds and micro-XUSD. */
  leasePolicy: { minDurationSecs?: bigint; maxDurationSecs?: bigint; minCost?: bigint; maxCost?: bigint };
  /** `--chat-retention-count N`, `--chat-retention-days D`: chat messages kept per account. */
  chatRetention: { maxPerAccount?: number; maxAgeNs?: bigint };
  /** `--genesis-set NAME=VALUE` overrides of a new development network. */
  genesisSet: GenesisSet;
  /** price_multiplier_milli of the node's own certificate (the node's default when unset). */
  priceMultiplierMilli?: bigint;
  genesisDir?: string;
  adminToken?: string | false;
  /** A file holding the admin token (keeps it out of the process list). */
  adminTokenFile?: string;
  rateLimit: boolean;
  p2p: boolean;
  p2pPort: number;
  p2pBind: string;
  dial: string[];
  /** Inbound peer-to-peer connections per IPv4 address or IPv6 /56 (the node's default when unset). */
  maxConnsPerIp?: number;
  /** Inbound peer-to-peer connections in all (the node's default when unset). */
  maxInboundConns?: number;
  /** HTTP API connections from one client, an IPv4 address or IPv6 /64 (the node's default when unset). */
  apiMaxConnsPerIp?: number;
  /** HTTP API connections in all (the node's default when unset). */
  apiMaxConns?: number;
  /** Signature-verification worker threads, at most (the node's default when unset). */
  verifyThreads?: number;
  /** Gossip window in ms (the node's default when unset). */
  gossipWindowMs?: number;
  /** Gossip window under a heavy stream in ms (the node's default when unset). */
  gossipHeavyWindowMs?: number;
  logLevel: string;
  /** `--log-format`: JSON lines, readable lines, or readable on a terminal only (auto). */
  logFormat: LogFormat;
  /** Folder of the built GUI; false serves none; undefined is the node's default. */
  uiDir?: string | false;
}

export const HELP = `Usage: ledger-node [options]
       ledger-node tunnel LEASE_HASH --key FILE [--node URL]   (see ledger-node tunnel --help)

Runs a full node of the XE ledger with its HTTP API. With an empty data directory and no
options it creates a private development network and acts as its representative.

Options:
  --data-dir DIR          where the node keeps its store and keys
                          (default: the platform's application-data folder)
  --api-port PORT         HTTP API port (default 8080; 0 picks a free port)
  --api-bind ADDR         HTTP API bind address (default 127.0.0.1)
  --pow-difficulty HEX    proof-of-work difficulty of a NEW development network
                          (default fffff80000000000)
  --provide, --no-provide run VMs for leases as a provider (a development network
                          provides by default where a VM driver works; a joined network
                          only with --provide)
  --vcpus N, --memory MB, --disk GB
                          capacity offered as a provider (default 2, 2048, 20); also
                          --provide-vcpus, --provide-memory-mb, --provide-disk-gb
  --vm-driver auto|qemu|sandbox
                          how lease VMs run: qemu is a real VM (KVM where it can boot a
                          stock kernel, else emulation); sandbox is bubblewrap namespaces
                          with NO VM boundary, for development; auto (default) takes qemu
                          when its image is built (npm run vm:image), else the sandbox on a
                          development network
  --allow-sandbox         let the sandbox driver run on a network that is not a
                          development network
  --vm-image-dir DIR      the qemu guest kernel and initramfs (default: npm run vm:image's
                          cache)
  --min-lease-duration S, --max-lease-duration S
                          lease durations this provider serves, in seconds
  --min-lease-cost X, --max-lease-cost X
                          lease costs this provider serves, in whole XUSD
  --max-concurrent-leases N
                          a provider's leases at once (default 0: no cap besides the
                          capacity)
  --chat-retention-count N
                          chat messages kept per account, both directions; the oldest
                          go first (default 10000)
  --chat-retention-days D chat messages older than D days are deleted (default 90)
  --genesis-set NAME=VALUE
                          a field of a NEW development network's genesis (repeatable), a
                          whole number. Lease timing: lease_min_duration_secs,
                          lease_settle_grace_ns, lease_force_settle_gap_ns,
                          lease_escrow_expiry_ns, lease_archive_gap_ns,
                          max_attestation_skew_ns. Certificate benchmark:
                          certificate_workload_version, certificate_iterations,
                          certificate_table_entries, certificate_reads
  --price-multiplier M    price multiplier of this node's performance certificate, in
                          thousandths (500 to 10000; default 1000)
  --genesis-dir DIR       join the network defined by ledger-genesis.json and
                          statechain-genesis.json in DIR
  --admin-token-file FILE read the operator token from FILE (mode 0600); the default is
                          LEDGER_NODE_ADMIN_TOKEN if set, else the admin-token file in the
                          data directory (created at first start); the node refuses to start
                          with a token file other users can read
  --admin-token TOKEN     operator token given directly (other local users can see it in the
                          process list: prefer the variable or the file); none disables
                          operator endpoints
  --rate-limit on|off     per-client rate limits (default on)
  --api-max-conns-per-ip N
                          open API connections from one IPv4 address or IPv6 /64
                          (default 128; raise it behind a reverse proxy on loopback)
  --api-max-conns N       open API connections in all (default 1024)
  --p2p-port PORT         peer-to-peer TCP port (default 7075; 0 picks a free port)
  --p2p-bind ADDR         peer-to-peer listen address (default 0.0.0.0)
  --dial ADDRS            comma-separated multiaddrs of peers to connect to, e.g.
                          /ip4/192.0.2.7/tcp/7075/p2p/12D3KooW...
  --max-conns-per-ip N    inbound peer connections from one IPv4 address or IPv6 /56
                          (default 8)
  --max-inbound-conns N   inbound peer connections in all (default 64)
  --no-p2p                do not start peer-to-peer networking
  --verify-threads N      most signature-verification worker threads (default 2 on more
                          than 2 cores, the second started under bursts of submissions;
                          0 on 1 or 2 cores: verified on the main thread, in short slices)
  --gossip-window MS      under a steady stream of blocks, gossip them and this node's votes
                          in batches at most once per MS ms (default 40; 0: every event-loop
                          turn); a block after a quiet spell always goes at once
  --gossip-window-heavy MS  the same under a heavy stream (a send of 128 blocks and votes or
                          more, about 1,600 blocks/s): default 100 (0 with --gossip-window
                          0); never shorter than --gossip-window
  --ui-dir DIR            serve the GUI built in DIR at /ui/
                          (default: renderer/dist, built by npm run build:renderer)
  --no-ui                 do not serve the GUI
  --log-level LEVEL       fatal, error, warn, info, debug or trace (default info)
  --log-format FORMAT     pretty (readable lines), json (one JSON object a line) or
                          auto: pretty on a terminal, json otherwise (default auto)
  --help                  show this help
  --version               show the version
`;

const PROVIDE_FLAGS: Record<string, keyof ProviderCapacity> = {
  '--provide-vcpus': 'vcpus',
  '--provide-memory-mb': 'memory_mb',
  '--provide-disk-gb': 'disk_gb',
  '--vcpus': 'vcpus',
  '--memory': 'memory_mb',
  '--disk': 'disk_gb',
  '--max-concurrent-leases': 'max_concurrent_leases',
};

const MICRO_PER_XUSD = 1_000_000n;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseArgs(argv: readonly string[]): CliOptions {
  const o: CliOptions = {
    help: false,
    version: false,
    apiPort: 8080,
    apiBind: '127.0.0.1',
    rateLimit: true,
    p2p: true,
    p2pPort: 7075,
    p2pBind: '0.0.0.0',
    dial: [],
    genesisSet: {},
    logLevel: 'info',
    logFormat: 'auto',
    vmDriver: 'auto',
    allowSandbox: false,
    leasePolicy: {},
    chatRetention: {},
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 && arg.startsWith('--') ? arg.slice(0, eq) : arg;
    const inline = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
      i++;
      return v;
    };
    switch (name) {
      case '--help':
      case '-h':
        o.help = true;
        break;
      case '--version':
      case '-v':
        o.version = true;
        break;
      case '--data-dir':
        o.dataDir = value();
        if (o.dataDir === '') throw new UsageError('--data-dir must not be empty');
        break;
      case '--api-port': {
        const v = value();
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535)
          throw new UsageError(`--api-port: "${v}" is not a port number (0-65535)`);
        o.apiPort = Number(v);
        break;
      }
      case '--api-bind': {
        const v = value();
        if (v !== 'localhost' && isIP(v) === 0)
          throw new UsageError(`--api-bind: "${v}" is not an IP address`);
        o.apiBind = v;
        break;
      }
      case '--pow-difficulty': {
        const v = value();
        try {
          o.powDifficulty = parseDifficulty(v);
        } catch {
          throw new UsageError(`--pow-difficulty: "${v}" is not a hex difficulty of at most 16 digits`);
        }
        break;
      }
      case '--genesis-set': {
        const [field, v] = genesisSetting(value());
        o.genesisSet[field] = v;
        break;
      }
      case '--price-multiplier': {
        const v = value();
        if (
          !/^\d{1,5}$/.test(v) ||
          BigInt(v) < MIN_PRICE_MULTIPLIER_MILLI ||
          BigInt(v) > MAX_PRICE_MULTIPLIER_MILLI
        )
          throw new UsageError(
            `--price-multiplier: "${v}" is not a whole number from ${MIN_PRICE_MULTIPLIER_MILLI} to ${MAX_PRICE_MULTIPLIER_MILLI} (thousandths)`,
          );
        o.priceMultiplierMilli = BigInt(v);
        break;
      }
      case '--provide-vcpus':
      case '--provide-memory-mb':
      case '--provide-disk-gb':
      case '--vcpus':
      case '--memory':
      case '--disk':
      case '--max-concurrent-leases': {
        const v = value();
        if (!/^(0|[1-9]\d{0,9})$/.test(v)) throw new UsageError(`${name}: "${v}" is not a whole number`);
        o.provide ??= { ...DEFAULT_PROVIDE };
        o.provide[PROVIDE_FLAGS[name]!] = BigInt(v);
        break;
      }
      case '--provide':
        o.provideFlag = true;
        break;
      case '--no-provide':
        o.provideFlag = false;
        break;
      case '--vm-driver': {
        const v = value();
        if (v !== 'auto' && v !== 'qemu' && v !== 'sandbox')
          throw new UsageError('--vm-driver takes auto, qemu or sandbox');
        o.vmDriver = v;
        break;
      }
      case '--allow-sandbox':
        o.allowSandbox = true;
        break;
      case '--vm-image-dir':
        o.vmImageDir = value();
        if (o.vmImageDir === '') throw new UsageError('--vm-image-dir must not be empty');
        break;
      case '--min-lease-duration':
      case '--max-lease-duration':
      case '--min-lease-cost':
      case '--max-lease-cost': {
        const v = value();
        if (!/^(0|[1-9]\d{0,9})$/.test(v)) throw new UsageError(`${name}: "${v}" is not a whole number`);
        const n = BigInt(v);
        const pol = o.leasePolicy;
        if (name === '--min-lease-duration') pol.minDurationSecs = n;
        else if (name === '--max-lease-duration') pol.maxDurationSecs = n;
        else if (name === '--min-lease-cost') pol.minCost = n * MICRO_PER_XUSD;
        else pol.maxCost = n * MICRO_PER_XUSD;
        break;
      }
      case '--chat-retention-count': {
        const v = value();
        if (!/^[1-9]\d{0,8}$/.test(v))
          throw new UsageError(`--chat-retention-count: "${v}" is not a whole number from 1`);
        o.chatRetention.maxPerAccount = Number(v);
        break;
      }
      case '--chat-retention-days': {
        const v = value();
        if (!/^[1-9]\d{0,5}$/.test(v))
          throw new UsageError(`--chat-retention-days: "${v}" is not a whole number of days from 1`);
        o.chatRetention.maxAgeNs = BigInt(v) * 86_400_000_000_000n;
        break;
      }
      case '--genesis-dir':
        o.genesisDir = value();
        break;
      case '--admin-token': {
        const v = value();
        if (v === 'none') o.adminToken = false;
        else if (v.length < MIN_ADMIN_TOKEN_LENGTH)
          throw new UsageError(
            `--admin-token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (or none)`,
          );
        else o.adminToken = v;
        break;
      }
      case '--admin-token-file':
        o.adminTokenFile = value();
        if (o.adminTokenFile === '') throw new UsageError('--admin-token-file must not be empty');
        break;
      case '--rate-limit': {
        const v = value();
        if (v !== 'on' && v !== 'off') throw new UsageError('--rate-limit takes on or off');
        o.rateLimit = v === 'on';
        break;
      }
      case '--no-p2p':
        o.p2p = false;
        break;
      case '--p2p-port': {
        const v = value();
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) {
          throw new UsageError(`--p2p-port: "${v}" is not a port number (0-65535)`);
        }
        o.p2pPort = Number(v);
        break;
      }
      case '--p2p-bind': {
        const v = value();
        if (isIP(v) === 0) throw new UsageError(`--p2p-bind: "${v}" is not an IP address`);
        o.p2pBind = v;
        break;
      }
      case '--dial': {
        const list = value()
          .split(',')
          .map((a) => a.trim())
          .filter((a) => a !== '');
        for (const a of list) {
          if (!/^\/(ip4|ip6|dns4|dns6|dns)\/[^/]+\/tcp\/\d+(\/p2p\/\w+)?$/.test(a)) {
            throw new UsageError(
              `--dial: "${a}" is not a multiaddr like /ip4/192.0.2.7/tcp/7075/p2p/<peer id>`,
            );
          }
        }
        o.dial.push(...list);
        break;
      }
      case '--max-conns-per-ip':
      case '--max-inbound-conns':
      case '--api-max-conns-per-ip':
      case '--api-max-conns': {
        const v = value();
        if (!/^\d{1,6}$/.test(v) || Number(v) < 1)
          throw new UsageError(`${name}: "${v}" is not a whole number of at least 1`);
        if (name === '--max-conns-per-ip') o.maxConnsPerIp = Number(v);
        else if (name === '--max-inbound-conns') o.maxInboundConns = Number(v);
        else if (name === '--api-max-conns-per-ip') o.apiMaxConnsPerIp = Number(v);
        else o.apiMaxConns = Number(v);
        break;
      }
      case '--verify-threads': {
        const v = value();
        if (!/^\d{1,2}$/.test(v) || Number(v) > 64)
          throw new UsageError(`--verify-threads: "${v}" is not a whole number from 0 to 64`);
        o.verifyThreads = Number(v);
        break;
      }
      case '--gossip-window':
        o.gossipWindowMs = windowMs(name, value());
        break;
      case '--gossip-window-heavy':
        o.gossipHeavyWindowMs = windowMs(name, value());
        break;
      case '--ui-dir':
        o.uiDir = value();
        if (o.uiDir === '') throw new UsageError('--ui-dir must not be empty');
        break;
      case '--no-ui':
        o.uiDir = false;
        break;
      case '--log-level': {
        const v = value();
        if (!LEVELS.includes(v)) throw new UsageError(`--log-level takes one of ${LEVELS.join(', ')}`);
        o.logLevel = v;
        break;
      }
      case '--log-format': {
        const v = value();
        if (!(LOG_FORMATS as readonly string[]).includes(v))
          throw new UsageError(`--log-format takes one of ${LOG_FORMATS.join(', ')}`);
        o.logFormat = v as LogFormat;
        break;
      }
      default:
        throw new UsageError(
          arg.startsWith('-')
            ? `unknown option ${name} (see --help)`
            : `unexpected argument "${arg}" (see --help)`,
        );
    }
  }
  if (o.provide && o.provide.vcpus + o.provide.memory_mb + o.provide.disk_gb === 0n)
    throw new UsageError('a provider needs --vcpus, --memory or --disk above 0');
  if (o.provideFlag === false && o.provide)
    throw new UsageError('--no-provide excludes the capacity flags (--vcpus, --memory, --disk)');
  // --provide alone, or a development network (no --genesis-dir) without --no-provide (D9).
  if (!o.provide && (o.provideFlag === true || (o.provideFlag === undefined && o.genesisDir === undefined)))
    o.provide = { ...DEFAULT_PROVIDE };
  if (o.adminToken !== undefined && o.adminTokenFile !== undefined)
    throw new UsageError('--admin-token and --admin-token-file exclude each other');
  return o;
}

/**
 * One `--genesis-set NAME=VALUE`: a known field and a whole number. Whether the values fit together
 * (the force-settle gap over twice the skew, ...) is checked when the genesis is made.
 */
function genesisSetting(arg: string): [GenesisSetField, bigint] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new UsageError(`--genesis-set: "${arg}" is not NAME=VALUE`);
  const name = arg.slice(0, eq);
  const v = arg.slice(eq + 1);
  if (!(GENESIS_SET_FIELDS as readonly string[]).includes(name))
    throw new UsageError(`--genesis-set: unknown field ${name} (one of ${GENESIS_SET_FIELDS.join(', ')})`);
  // At most i64's 19 digits: every field is a u64 or an i64 nanosecond count.
  if (!/^(0|[1-9]\d{0,18})$/.test(v) || BigInt(v) > 2n ** 63n - 1n)
    throw new UsageError(`--genesis-set: ${name}: "${v}" is not a whole number`);
  return [name as GenesisSetField, BigInt(v)];
}

/** A gossip window's milliseconds: a whole number from 0 to 1000. */
function windowMs(flag: string, v: string): number {
  if (!/^\d{1,4}$/.test(v) || Number(v) > 1000)
    throw new UsageError(`${flag}: "${v}" is not a whole number of ms from 0 to 1000`);
  return Number(v);
}
