import type { LedgerNode } from '../../node.ts';
import { defineRoutes, type RouteDef } from '../route-table.ts';
import { accountRoutes } from './accounts.ts';
import { agentRoutes } from './agent.ts';
import { appRoutes } from './app.ts';
import { blockRoutes } from './blocks.ts';
import { chatRoutes } from './chat.ts';
import { directoryRoutes } from './directory.ts';
import { leaseRoutes } from './leases.ts';
import { leasingRoutes } from './leasing.ts';
import { networkRoutes } from './network.ts';
import { nodeOpsRoutes } from './node-ops.ts';
import { statechainRoutes } from './statechain.ts';
import { vmRoutes } from './vms.ts';

/**
 * The node's route table, in manifest order: node and network, accounts, pending and frontiers,
 * blocks, conflicts and delegation, leases, certificates and attestations, lease requests, state
 * chain, directory, chat, agent verbs, the window's app store. One table drives
 * routes, manifest and OpenAPI.
 */
export function buildRoutes(node: LedgerNode): readonly RouteDef[] {
  const net = networkRoutes(node);
  const pick = (...paths: string[]) => paths.map((p) => net.find((r) => `${r.method} ${r.path}` === p)!);
  return defineRoutes(
    pick('GET /node', 'GET /network/activations', 'GET /network/readiness', 'GET /health', 'GET /ready'),
    nodeOpsRoutes(node),
    accountRoutes(node),
    pick('GET /frontiers', 'GET /supply', 'GET /pending', 'GET /pending/:address'),
    blockRoutes(node),
    pick('GET /conflicts', 'GET /delegation', 'GET /conflicts/:account'),
    leasingRoutes(node),
    leaseRoutes(node),
    vmRoutes(node),
    statechainRoutes(node),
    directoryRoutes(node),
    chatRoutes(node),
    agentRoutes(node),
    appRoutes(node),
  );
}
