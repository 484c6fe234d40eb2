import { api } from '../api.ts';
import { desktopBridge } from '../bridge.ts';
import { keystore } from '../keystore/index.ts';
import { powEngine } from '../pow/engine.ts';
import { AccountWriter } from './writer.ts';

let writer: AccountWriter | undefined;

/** The page's writer: the node's client, the keystore, and the proof-of-work engine chosen at start. */
export function accountWriter(): AccountWriter {
  writer ??= new AccountWriter({
    client: api(),
    keystore: keystore(),
    engine: () => powEngine(desktopBridge()),
  });
  return writer;
}
