import { parentPort } from 'node:worker_threads';
import { type VerifyRequest, verifyPacked } from './verify-packed.ts';

/** Worker side of the signature verification pool: one answer per packed request (verify-packed.ts). */
parentPort?.on('message', (req: VerifyRequest) => {
  const results = verifyPacked(req.count, req.data);
  parentPort!.postMessage({ id: req.id, results }, [results.buffer as ArrayBuffer]);
});
// Tells the pool this module has loaded: a worker that dies before saying so could not start.
parentPort?.postMessage({ ready: true });
