import { useSyncExternalStore } from 'react';
import { windowStore } from './index.ts';

/**
 * Says so while a change (a new account, a contact, a setting) has not reached the node yet because
 * the node cannot be reached: the change is kept in this window and sent as soon as it can be.
 */
export function SaveNotice() {
  const store = windowStore();
  const state = useSyncExternalStore(
    (l) => store.onSaveState(l),
    () => store.saveState(),
  );
  if (state.unsaved === 0 || state.error === undefined) return null;
  return (
    <div className="save-notice error box" role="status" data-testid="save-notice">
      Not saved yet: {state.error}. This window keeps the change and retries; do not close it.
    </div>
  );
}
