import type { JsonValue } from '../../node-core/protocol/json.ts';
import type {
  DocKey,
  StoreTransport,
  StoredDoc,
  WriteOutcome,
} from '../../renderer/src/window-store/window-store.ts';

/**
 * A STAND-IN for the node's app store (node-core/app-store) behind the window store's transport: it
 * keeps versions and refuses stale writes like the real one, whose HTTP side has its own integration
 * test (test/integration/app-store.test.ts). Unit tests use it to make two windows race on demand.
 */
export class AppStoreStandIn implements StoreTransport {
  docs = new Map<DocKey, StoredDoc>();
  revision = 0;
  writes: { key: DocKey; value: JsonValue | null; ifVersion: number }[] = [];
  down = false;
  refuse = false;
  /** Delay of each write, to let several changes pile up. */
  delayMs = 0;

  load(etag: string | undefined) {
    const now = `"app-${this.revision}"`;
    if (etag === now) return Promise.resolve(undefined);
    return Promise.resolve({ etag: now, docs: new Map(this.docs) });
  }

  async write(key: DocKey, value: JsonValue | null, ifVersion: number): Promise<WriteOutcome> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.down) throw new Error('cannot reach the node');
    this.writes.push({ key, value, ifVersion });
    if (this.refuse) return 'refused';
    if ((this.docs.get(key)?.version ?? 0) !== ifVersion) return 'conflict';
    return this.elsewhere(key, value);
  }

  /** A write by someone else (another window, an agent's rollback). */
  elsewhere(key: DocKey, value: JsonValue | null): number | null {
    this.revision += 1;
    if (value === null) {
      this.docs.delete(key);
      return null;
    }
    this.docs.set(key, { value, version: this.revision });
    return this.revision;
  }
}
