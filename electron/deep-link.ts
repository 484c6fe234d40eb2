import { isPaymentUri } from '../node-core/protocol/payment-uri.ts';

/**
 * `xe:` payment links opened from the desktop (a browser, a mail, a chat): the operating system
 * starts the app with the link, and the app's window opens the send form filled in from it.
 * - Windows and Linux start a second process with the link among its arguments; the first instance
 *   gets that argv in `second-instance` (the second quits at once, app-setup.ts), and a first start
 *   by a link has it in process.argv;
 * - macOS sends `open-url` to the running app.
 * Pure: main.ts wires these into those events; the page itself parses the link
 * (node-core/protocol/payment-uri.ts) and says what is wrong with a bad one.
 */
export const PAYMENT_SCHEME = 'xe';

/** The payment link among a process's arguments, or undefined (flags and paths are not links). */
export function paymentUriFromArgv(argv: readonly string[]): string | undefined {
  // The last one wins: a desktop appends the link after whatever arguments the launcher had.
  for (let i = argv.length - 1; i >= 0; i--) {
    const arg = argv[i]!;
    if (/^xe:/i.test(arg) && isPaymentUri(arg)) return arg;
  }
  return undefined;
}

/** Longer than a payment link can be (payment-uri.ts reads 2048 characters at most). */
const MAX_FORWARDED = 4096;

/**
 * The GUI address that opens a payment link: the send route with the link as its `uri` parameter
 * (renderer/src/deeplink/). The page checks the link; this only refuses what cannot be a link.
 */
export function paymentLinkUrl(uiUrl: string, uri: string): string | undefined {
  if (uri.length > MAX_FORWARDED || !/^xe:/i.test(uri)) return undefined;
  return `${uiUrl}#/send?uri=${encodeURIComponent(uri)}`;
}

/**
 * Arguments for app.setAsDefaultProtocolClient: an app run from source (`electron .`, where
 * process.defaultApp is true) must name its entry, or the desktop would start bare Electron.
 */
export function protocolClientArgs(
  defaultApp: boolean,
  execPath: string,
  entry: string | undefined,
): [string] | [string, string, string[]] {
  return defaultApp && entry !== undefined ? [PAYMENT_SCHEME, execPath, [entry]] : [PAYMENT_SCHEME];
}
