import { pinoPackage } from '../cjs-packages.ts';
import type { LedgerNode } from '../node.ts';
import { NODE_VERSION } from '../version.ts';
import { HELP, parseArgs, UsageError } from './args.ts';
import { prettyDestination, wantsColor, wantsPretty } from './log-format.ts';
import { defaultDataDir } from './paths.ts';
import { WALLET_HELP_LINE, WALLET_WORDS } from './wallet/words.ts';

const { pino } = pinoPackage;

export interface MainHooks {
  /** Called once the node is ready, after the ready line (`npm start` prints the GUI address). */
  onReady?: (node: LedgerNode) => void;
}

/**
 * `ledger-node`: runs a node until SIGINT or SIGTERM. Logs go to stderr (readable lines on a terminal,
 * JSON lines otherwise or with `--log-format json`, log-format.ts); one plain line
 * on stdout says when the node is ready and where (scripts can wait for it).
 */
export async function main(argv: readonly string[], hooks: MainHooks = {}): Promise<number> {
  if (argv[0] === 'tunnel') return (await import('./tunnel.ts')).runTunnel(argv.slice(1));
  if (argv[0] !== undefined && WALLET_WORDS.has(argv[0]))
    return (await import('./wallet/index.ts')).runWallet(argv);
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`ledger-node: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(HELP + WALLET_HELP_LINE);
    return 0;
  }
  if (opts.version) {
    process.stdout.write(`ledger-node ${NODE_VERSION}\n`);
    return 0;
  }
  const logger = pino(
    { level: opts.logLevel, base: { name: 'ledger-node' } },
    wantsPretty(opts.logFormat, process.stderr.isTTY === true)
      ? prettyDestination(process.stderr, { color: wantsColor(process.stderr.isTTY === true, process.env) })
      : pino.destination(2),
  );
  // Loaded here, not at the top: the wallet commands above never start a node and start in half the time.
  const { LedgerNode, NodeStartError } = await import('../node.ts');
  const dataDir = opts.dataDir ?? defaultDataDir();
  const node = new LedgerNode({
    dataDir,
    apiPort: opts.apiPort,
    apiBind: opts.apiBind,
    powDifficulty: opts.powDifficulty,
    provide: opts.provide,
    vm: {
      driver: opts.vmDriver,
      allowSandbox: opts.allowSandbox,
      imageDir: opts.vmImageDir,
      policy: opts.leasePolicy,
    },
    genesisSet: opts.genesisSet,
    chat: { retention: opts.chatRetention },
    ownCertificate: { priceMultiplierMilli: opts.priceMultiplierMilli },
    genesisDir: opts.genesisDir,
    adminToken: opts.adminToken,
    adminTokenFile: opts.adminTokenFile,
    rateLimit: opts.rateLimit,
    p2p: opts.p2p,
    p2pPort: opts.p2pPort,
    p2pBind: opts.p2pBind,
    dial: opts.dial,
    p2pMaxInboundPerIp: opts.maxConnsPerIp,
    p2pMaxInbound: opts.maxInboundConns,
    apiConnections: { maxPerClient: opts.apiMaxConnsPerIp, maxTotal: opts.apiMaxConns },
    verifyThreads: opts.verifyThreads,
    gossipWindowMs: opts.gossipWindowMs,
    gossipHeavyWindowMs: opts.gossipHeavyWindowMs,
    uiDir: opts.uiDir,
    logger,
  });
  try {
    await node.start();
  } catch (e) {
    if (e instanceof NodeStartError) {
      process.stderr.write(`ledger-node: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`ledger-node: failed to start: ${(e as Error).message}\n`);
    logger.error({ err: e }, 'start failed');
    return 1;
  }
  if (!opts.rateLimit) logger.warn('rate limits are off (--rate-limit off)');
  if (typeof opts.adminToken === 'string') {
    logger.warn(
      'the admin token was given with --admin-token: every local user can read it in the process ' +
        'list; use --admin-token-file or LEDGER_NODE_ADMIN_TOKEN instead',
    );
  }
  // Signal handlers before the ready line: a script that stops the node as soon as it reads that
  // line gets a clean stop, not the default action of a signal nobody handles yet (which kills).
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping');
      node.stop().then(
        () => {
          logger.info('stopped');
          resolve(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'stop failed');
          resolve(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  const uiUrl = node.uiUrl;
  logger.info(
    { url: node.url, ui_url: uiUrl, data_dir: dataDir, network_id: node.statechain.networkId },
    'ready',
  );
  // The API address stays the first word after "API": scripts read it with /API (\S+)/.
  process.stdout.write(
    `ledger-node ready: API ${node.url}${uiUrl === undefined ? '' : ` UI ${uiUrl}`} ` +
      `(network ${node.statechain.networkId}, data ${dataDir})\n`,
  );
  if (uiUrl === undefined && node.uiDir !== undefined) {
    logger.warn({ ui_dir: node.uiDir }, 'the GUI is not built (npm run build:renderer): /ui/ says so');
  }
  hooks.onReady?.(node);

  return stopped;
}
