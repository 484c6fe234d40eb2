/**
 * `npm start`: starts the app. Today that is the ledger node, headless, on a development network in
 * the platform's application-data folder (or --data-dir); any ledger-node flag may follow `--`.
 */
import { main } from '../node-core/cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
