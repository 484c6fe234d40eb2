/**
 * Entry of the proof-of-work utility process (`utilityProcess.fork` from main.ts, built as
 * dist/electron/pow-utility.js): PowService over node-core's PowSolver, whose worker threads use all
 * cores but one (the node and the window keep theirs). Messages come and go through
 * `process.parentPort`. Long searches never touch the main process's event loop.
 */
import { availableParallelism } from 'node:os';
import type { ParentPort } from 'electron';
import { PowSolver } from '../node-core/fastpath/pow-solver.ts';
import { PowService } from './pow-service.ts';

const port: ParentPort = process.parentPort;
const solver = new PowSolver({ threads: Math.max(1, availableParallelism() - 1), progressIntervalMs: 250 });
const service = new PowService(solver, (m) => port.postMessage(m));

port.on('message', (event) => service.handle(event.data));

const shutdown = (): void => {
  void service.stop().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
