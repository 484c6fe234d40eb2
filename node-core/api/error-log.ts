import { LogThrottle } from '../log-throttle.ts';
import type { LevelLogger, LogThrottleOptions } from '../log-throttle.ts';
import type { ApiError } from './errors.ts';

/** Longest request target written to the log: a client chooses it, up to the header size limit. */
const MAX_LOGGED_URL = 200;

/**
 * How the API logs the errors it answers. A rejection the client caused (any 4xx, or a 503 telling
 * it to come back later) is routine: one line without a stack, at debug, or at info for 503s, which
 * an operator may want to notice. Only an internal error carries its cause and stack, at error
 * level. Every line goes through one throttle keyed by the error's code, so that no client can fill
 * the disk through the log, whatever it sends and however fast.
 */
export class ErrorLog {
  private readonly throttle: LogThrottle;

  constructor(opts?: LogThrottleOptions) {
    this.throttle = new LogThrottle(opts);
  }

  /** Logs `e`, answered to `request` (absent for malformed HTTP, which never became a request). */
  answered(log: LevelLogger, e: ApiError, request?: { method: string; originalUrl: string }): void {
    if (e.code === 'internal') {
      this.throttle.log(log, 'error', e.code, { err: e.cause ?? e, details: e.details }, 'request failed');
      return;
    }
    const line: Record<string, unknown> = { status: e.status, code: e.code, error: e.message };
    if (e.details !== undefined) line.details = e.details;
    if (request !== undefined) {
      line.method = request.method;
      // As the client sent it (an alias request is routed under the base: server.ts rewriteUrl).
      const url = request.originalUrl;
      line.url = url.length > MAX_LOGGED_URL ? `${url.slice(0, MAX_LOGGED_URL)}...` : url;
    }
    this.throttle.log(log, e.status >= 500 ? 'info' : 'debug', e.code, line, 'request rejected');
  }

  /** Writes what is still suppressed and stops the throttle's timer. */
  close(): void {
    this.throttle.close();
  }
}
