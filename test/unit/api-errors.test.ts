import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_REGISTRY, toApiError, validationMessage } from '../../node-core/api/errors.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { StoreFullError } from '../../node-core/store/errors.ts';

describe('API error registry', () => {
  it('holds the contract statuses and messages', () => {
    expect(ERROR_REGISTRY.invalid_body).toEqual({ status: 400, message: 'invalid request body' });
    expect(ERROR_REGISTRY.payload_too_large).toEqual({ status: 400, message: 'invalid request body' });
    expect(ERROR_REGISTRY.unauthorized).toEqual({ status: 401, message: 'invalid or missing admin token' });
    expect(ERROR_REGISTRY.forbidden).toEqual({
      status: 403,
      message: 'operator endpoint disabled: no admin token configured',
    });
    expect(ERROR_REGISTRY.rate_limited).toEqual({ status: 429, message: 'rate limit exceeded' });
    expect(ERROR_REGISTRY.not_found.status).toBe(404);
    expect(ERROR_REGISTRY.method_not_allowed.status).toBe(405);
    expect(ERROR_REGISTRY.host_not_allowed.status).toBe(403);
    expect(ERROR_REGISTRY.internal).toEqual({ status: 500, message: 'internal error' });
    expect(ERROR_REGISTRY.unavailable.status).toBe(503);
  });

  it('builds node-form bodies through the helpers', () => {
    expect(ApiError.notFound('account not found').toBody()).toEqual({ error: 'account not found' });
    expect(ApiError.notFound().status).toBe(404);
    expect(ApiError.badRequest('amount: not an integer').toBody()).toEqual({
      error: 'amount: not an integer',
    });
    expect(ApiError.invalidBody().toBody()).toEqual({ error: 'invalid request body' });
    const rejected = ApiError.blockRejected('bad signature', false);
    expect(rejected.status).toBe(400);
    expect(rejected.toBody()).toEqual({ error: 'block rejected: bad signature', retryable: false });
    const retry = ApiError.blockRejected('fork in progress', true);
    expect(retry.status).toBe(503);
    expect(retry.toBody()).toEqual({ error: 'block rejected: fork in progress', retryable: true });
  });

  it('carries Retry-After and Allow headers', () => {
    expect(ApiError.rateLimited(0.2).headers).toEqual({ 'retry-after': '1' });
    expect(ApiError.rateLimited(2.5).headers).toEqual({ 'retry-after': '3' });
    expect(ApiError.methodNotAllowed(['GET', 'POST']).headers).toEqual({ allow: 'GET, POST' });
    expect(ApiError.unavailable('syncing', 5).headers).toEqual({ 'retry-after': '5' });
  });
});

describe('toApiError', () => {
  it('keeps ApiErrors as they are', () => {
    const e = ApiError.forbidden();
    expect(toApiError(e)).toBe(e);
  });

  it('maps protocol errors to 400 (bad input is never a 5xx)', () => {
    const e = toApiError(new ProtocolError('ERR_HEX', 'not lowercase hex', 'hash'));
    expect(e.status).toBe(400);
    expect(e.message).toBe('hash: not lowercase hex');
    expect(toApiError(new ProtocolError('ERR_JSON', 'bad')).toBody()).toEqual({
      error: 'invalid request body',
    });
  });

  it('maps fastify body errors to invalid request body', () => {
    for (const code of [
      'FST_ERR_CTP_BODY_TOO_LARGE',
      'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      'FST_ERR_CTP_EMPTY_JSON_BODY',
    ]) {
      const e = toApiError(Object.assign(new Error('x'), { code, statusCode: 413 }));
      expect(e.status).toBe(400);
      expect(e.message).toBe('invalid request body');
    }
  });

  it('names the field of a validation failure', () => {
    const err = Object.assign(new Error('x'), {
      validation: [{ instancePath: '/limit', keyword: 'maximum', message: 'must be <= 100', params: {} }],
      validationContext: 'querystring',
    });
    const e = toApiError(err);
    expect(e.status).toBe(400);
    expect(e.message).toBe("invalid query parameter 'limit': must be <= 100");
    expect(
      validationMessage('querystring', [
        { keyword: 'required', instancePath: '', params: { missingProperty: 'a' } },
      ]),
    ).toBe("missing query parameter 'a'");
    expect(
      validationMessage('params', [{ instancePath: '/address', message: 'must match pattern "^x"' }]),
    ).toBe('invalid path parameter \'address\': must match pattern "^x"');
  });

  it('keeps other framework 4xx errors 4xx, with a generic message', () => {
    const e = toApiError(
      Object.assign(new Error('internal detail'), { code: 'FST_SOMETHING', statusCode: 414 }),
    );
    expect(e.status).toBe(400);
    expect(e.message).toBe('bad request');
  });

  it('turns anything else into a 500 that hides the message', () => {
    for (const thrown of [new Error('secret'), 'a string', 42, null, undefined, { statusCode: 500 }]) {
      const e = toApiError(thrown);
      expect(e.status).toBe(500);
      expect(e.toBody()).toEqual({ error: 'internal error' });
    }
  });

  it('answers a full disk 503, retryable, saying so', () => {
    const e = toApiError(new StoreFullError(Object.assign(new Error('No space left'), { code: 28 })));
    expect(e.status).toBe(503);
    expect(e.toBody()).toEqual({ error: "the node's disk is full; retry later", retryable: true });
  });
});
