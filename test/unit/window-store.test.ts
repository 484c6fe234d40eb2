import { describe, expect, it } from 'vitest';
import { WindowStore } from '../../renderer/src/window-store/window-store.ts';
import { AppStoreStandIn } from '../helpers/app-store-stand-in.ts';

/**
 * The window store's rules (renderer/src/window-store/window-store.ts) against a stand-in for the
 * node's store (test/helpers/app-store-stand-in.ts): writes coalesce and go out one at a time, a
 * stale vault is handed to the keystore, a stale document of another kind is merged with the node's
 * copy, an unreachable node is retried and shows as unsaved, a refused document reverts, and polling
 * reports changes made elsewhere.
 */

async function opened(node: AppStoreStandIn): Promise<WindowStore> {
  const s = new WindowStore(node);
  await s.load();
  return s;
}

describe('window store', () => {
  it('reads its own change at once, and the node gets the newest value of a burst', async () => {
    const node = new AppStoreStandIn();
    node.delayMs = 5;
    const s = await opened(node);
    for (let i = 1; i <= 5; i++) s.set('settings', { n: i });
    expect(s.get('settings')).toEqual({ n: 5 });
    expect(s.saveState().unsaved).toBe(1);
    await s.flush();
    expect(node.docs.get('settings')?.value).toEqual({ n: 5 });
    // The first write went out at once; the four others coalesced into one.
    expect(node.writes.map((w) => (w.value as { n: number }).n)).toEqual([1, 5]);
    expect(node.writes.map((w) => w.ifVersion)).toEqual([0, 1]);
    expect(s.saveState()).toEqual({ unsaved: 0 });
  });

  it('hands a stale vault to the keystore (reloaded, own change dropped) instead of overwriting', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('vault', 'v1');
    const s = await opened(node);
    const heard: string[] = [];
    s.onChange((key, origin) => heard.push(`${key}:${origin}`));
    node.elsewhere('vault', 'v2-from-another-window');
    s.set('vault', 'v1-plus-my-account');
    await s.flush();
    expect(node.docs.get('vault')?.value).toBe('v2-from-another-window');
    expect(s.get('vault')).toBe('v2-from-another-window');
    expect(heard).toContain('vault:remote');
  });

  it('sends a stale settings change again, merged: where both changed one setting, this window wins', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('settings', { theme: 'light' });
    const s = await opened(node);
    node.elsewhere('settings', { theme: 'dark' });
    s.set('settings', { theme: 'system' });
    await s.flush();
    expect(node.docs.get('settings')?.value).toEqual({ theme: 'system' });
    expect(node.writes.map((w) => w.ifVersion)).toEqual([1, 2]);
  });

  it('keeps an unsaved change while the node is down, says so, and sends it once it is back', async () => {
    const node = new AppStoreStandIn();
    const s = await opened(node);
    node.down = true;
    let flushed = false;
    s.set('address_book', [{ name: 'A', address: 'a'.repeat(64) }]);
    void s.flush().then(() => (flushed = true));
    await expect.poll(() => s.saveState().error).toBe('cannot reach the node');
    expect(s.saveState().unsaved).toBe(1);
    expect(s.get('address_book')).toEqual([{ name: 'A', address: 'a'.repeat(64) }]);
    expect(flushed).toBe(false);
    node.down = false;
    await expect.poll(() => flushed, { timeout: 5000 }).toBe(true);
    expect(node.docs.get('address_book')?.value).toEqual([{ name: 'A', address: 'a'.repeat(64) }]);
    expect(s.saveState()).toEqual({ unsaved: 0 });
  });

  it('shows what the node holds again when it refuses a document', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('wallet_labels', { ['a'.repeat(64)]: 'Savings' });
    const s = await opened(node);
    node.refuse = true;
    s.set('wallet_labels', { bad: 'x' });
    await s.flush();
    expect(s.get('wallet_labels')).toEqual({ ['a'.repeat(64)]: 'Savings' });
  });

  it('removes a document with null, and polling reports changes made elsewhere', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('chat_read', { x: '1' });
    const s = await opened(node);
    s.set('chat_read', null);
    await s.flush();
    expect(s.has('chat_read')).toBe(false);
    expect(node.docs.has('chat_read')).toBe(false);

    const heard: string[] = [];
    s.onChange((key, origin) => heard.push(`${key}:${origin}`));
    await s.refresh();
    expect(heard).toEqual([]); // nothing changed: the ETag answered "same"
    node.elsewhere('settings', { theme: 'dark' });
    await s.refresh();
    expect(heard).toEqual(['settings:remote']);
    expect(s.get('settings')).toEqual({ theme: 'dark' });
  });
});
