/**
 * What must happen before the app is ready, in a module of its own: main.ts imports it first, and
 * with an ES-module main process only the entry's imports are sure to run before `ready`.
 *
 * The app's name and its userData folder are node-core's (cli/paths.ts), so the desktop app and the
 * `ledger-node` command share one node in `<appData>/node`. The single-instance lock lives in that
 * folder too.
 */
import { app } from 'electron';
import { APP_NAME, appDataDir } from '../node-core/cli/paths.ts';

app.setName(APP_NAME);
app.setPath('userData', appDataDir());

/** False in a second instance: it hands over to the first (which shows its window) and quits. */
export const isPrimaryInstance = app.requestSingleInstanceLock();
