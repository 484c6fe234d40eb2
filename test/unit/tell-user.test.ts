import { describe, expect, it } from 'vitest';
import { proxyRouteOf } from '../../node-core/api/proxy.ts';
import { buildOpenApi } from '../../node-core/api/openapi.ts';
import { defineRoute, type RouteDef } from '../../node-core/api/route-table.ts';
import {
  blockCore,
  formatAmount,
  formatCount,
  formatDuration,
  formatTimeNs,
  genericTellUser,
  oneLine,
  shortId,
  TELL_USER_MAX,
  tellsUser,
} from '../../node-core/api/tell-user.ts';

/** tell_user (issue #14, agent verbs): the formatters, and how the proxy form applies a route's summary. */

describe('formatAmount: micro-units, exact as bigint', () => {
  it.each([
    [0n, 'XE', '0 XE'],
    [1n, 'XE', '0.000001 XE'],
    [10n, 'XUSD', '0.00001 XUSD'],
    [999_999n, 'XE', '0.999999 XE'],
    [1_000_000n, 'XE', '1 XE'],
    [2_500_000n, 'XE', '2.5 XE'],
    [1_000_000_000n, 'XE', '1,000 XE'],
    [1_234_567_890_123n, 'XUSD', '1,234,567.890123 XUSD'],
    // Beyond 2^53: a float would round these.
    [9_007_199_254_740_993n, 'XE', '9,007,199,254.740993 XE'],
    [18_446_744_073_709_551_615n, 'XE', '18,446,744,073,709.551615 XE'],
    [10n ** 30n + 1n, 'XE', '1,000,000,000,000,000,000,000,000.000001 XE'],
    [-2_500_000n, 'XE', '-2.5 XE'],
    [-1_000_000_001n, undefined, '-1,000.000001'],
  ])('%s %s is %s', (micro, asset, text) => {
    expect(formatAmount(micro, asset)).toBe(text);
  });
});

describe('small formatters', () => {
  it('groups counts, shortens ids, says durations and times', () => {
    expect([formatCount(0), formatCount(1024), formatCount(-1234567n), formatCount(2n ** 64n)]).toEqual([
      '0',
      '1,024',
      '-1,234,567',
      '18,446,744,073,709,551,616',
    ]);
    expect(shortId('3f9a' + '0'.repeat(58) + 'c1')).toBe('3f9a…c1');
    expect(shortId('abcdefgh')).toBe('abcdefgh');
    expect([60n, 90n, 1n, 3600n, 7200n, 86_400n * 30n, 31_536_000n].map(formatDuration)).toEqual([
      '1 minute',
      '90 seconds',
      '1 second',
      '1 hour',
      '2 hours',
      '30 days',
      '365 days',
    ]);
    expect(formatTimeNs(1_700_000_000_123_456_789n)).toBe('2023-11-14T22:13:20Z');
  });

  it('oneLine: no line break, at most TELL_USER_MAX characters', () => {
    expect(oneLine('a\nb\r\n\tc  d\u2028e')).toBe('a b c d e');
    const long = oneLine('x'.repeat(500));
    expect(long).toHaveLength(TELL_USER_MAX);
    expect(long.endsWith('…')).toBe(true);
    expect(oneLine('y'.repeat(TELL_USER_MAX))).toBe('y'.repeat(TELL_USER_MAX));
  });

  it('genericTellUser: the status and the description before its parenthesis', () => {
    expect(genericTellUser('register which node serves an account (signed; 30-minute TTL)', 200)).toBe(
      'Done (200 OK): register which node serves an account',
    );
    expect(genericTellUser('make a thing', 201)).toBe('Done (201 Created): make a thing');
  });
});

describe('blockCore', () => {
  const ledger = {
    getBlock: (h: string) =>
      h === 'aa'.repeat(32)
        ? { block: { account: '3f9a' + '1'.repeat(58) + 'c1', amount: 1n, asset: 'XE' }, finalized: true }
        : undefined,
  };
  it.each([
    [
      { type: 'send', amount: '2500000', asset: 'XE', destination: '3f9a' + '0'.repeat(58) + 'c1' },
      'Sent 2.5 XE to 3f9a…c1',
    ],
    [{ type: 'receive', source: 'aa'.repeat(32), asset: 'XE' }, 'Received 0.000001 XE from 3f9a…c1'],
    [{ type: 'receive', source: 'bb'.repeat(32), asset: 'XE' }, 'Received the send bbbb…bb'],
    [{ type: 'claim', amount: 1_000_000_000n, asset: 'XE' }, 'Claimed 1,000 XE'],
    [{ type: 'mint', amount: 10_000_000n, asset: 'XUSD' }, 'Minted 10 XUSD'],
    [{ type: 'burn', amount: 500_000n, asset: 'XUSD' }, 'Burned 0.5 XUSD'],
    [
      {
        type: 'lease',
        amount: '517',
        asset: 'XUSD',
        destination: 'cc'.repeat(32),
        vcpus: 1n,
        memory_mb: 1024n,
        disk_gb: 1n,
        duration: 60n,
      },
      'Leased 1 vCPU, 1,024 MB memory, 1 GB disk for 1 minute from provider cccc…cc, 0.000517 XUSD in escrow',
    ],
    [{ type: 'lease_cancel', source: 'dd'.repeat(32) }, 'Cancelled lease dddd…dd; its escrow is refunded'],
    [
      { type: 'multisig_open', account: 'ee'.repeat(32), keyset: { keys: ['a', 'b', 'c'], threshold: 2 } },
      'Opened eeee…ee as a 2-of-3 multisig account',
    ],
  ])('%o', (block, text) => {
    expect(blockCore(block, ledger)).toBe(text);
  });
});

describe('proxyRouteOf applies tell_user', () => {
  const answerWith = async (route: RouteDef, status = 200) => {
    const proxied = proxyRouteOf(route);
    const reply = { statusCode: status, sent: false };
    const req = { body: { n: 1 }, params: {}, log: { warn: () => undefined } };
    return proxied.handler(req as never, reply as never);
  };
  const post = (over: Partial<RouteDef> = {}): RouteDef =>
    defineRoute({
      method: 'POST',
      path: '/things',
      description: 'make a thing (an example)',
      auth: 'none',
      handler: async () => ({ ok: true }),
      ...over,
    });

  it("adds the route's own line, one line and cut, after the proxy transform", async () => {
    const r = post({
      tellUser: (a, req) => `Made ${String((req.body as { n: number }).n)}\nthing ${String(a.shaped)}`,
      proxy: { transform: (body) => ({ ...(body as object), shaped: 'yes' }) },
    });
    expect(await answerWith(r)).toEqual({ ok: true, shaped: 'yes', tell_user: 'Made 1 thing yes' });
    const long = await answerWith(post({ tellUser: () => 'z'.repeat(400) }));
    expect((long as { tell_user: string }).tell_user).toHaveLength(TELL_USER_MAX);
  });

  it('passes what before() read to text()', async () => {
    let state = 'old';
    const r = post({
      tellUser: { before: () => state, text: (_a, _r, _p, before) => `was ${String(before)}` },
      handler: async () => {
        state = 'new';
        return { ok: true };
      },
    });
    expect(await answerWith(r)).toEqual({ ok: true, tell_user: 'was old' });
  });

  it('a route without a summary, or whose summary throws, gets the generic line', async () => {
    expect(await answerWith(post(), 201)).toEqual({
      ok: true,
      tell_user: 'Done (201 Created): make a thing',
    });
    const throwing = post({
      tellUser: () => {
        throw new Error('boom');
      },
    });
    expect(await answerWith(throwing)).toEqual({ ok: true, tell_user: 'Done (200 OK): make a thing' });
  });

  it('leaves GET routes, non-object answers, non-2xx answers and tellUser: false alone', async () => {
    expect(await answerWith(post({ method: 'GET' }))).toEqual({ ok: true });
    expect(await answerWith(post({ handler: async () => [1, 2] }))).toEqual([1, 2]);
    expect(await answerWith(post({ handler: async () => undefined }))).toBeUndefined();
    expect(await answerWith(post(), 304)).toEqual({ ok: true });
    expect(await answerWith(post({ tellUser: false }))).toEqual({ ok: true });
    expect(tellsUser(post({ tellUser: false }))).toBe(false);
    expect(tellsUser(post())).toBe(true);
  });

  it('the node form is untouched: the route keeps its handler', async () => {
    const r = post({ tellUser: () => 'x' });
    expect(await r.handler({} as never, {} as never)).toEqual({ ok: true });
  });

  it('OpenAPI: tell_user on the 2xx answers of mutating routes in the proxy form only', () => {
    const r = post({
      schema: {
        response: {
          201: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
          400: { type: 'object' },
        },
      },
    });
    const get = post({ method: 'GET', path: '/things' });
    type Doc = {
      paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
    };
    const proxy = buildOpenApi([proxyRouteOf(r)], { title: 't', version: '1' }, 'proxy') as unknown as Doc;
    const node = buildOpenApi([r, get], { title: 't', version: '1' }, 'node') as unknown as Doc;
    const schemaOf = (d: Doc, method: string, status: string) =>
      (
        d.paths['/things']?.[method]?.responses[status]?.content as { 'application/json': { schema: object } }
      )['application/json'].schema;
    expect(schemaOf(proxy, 'post', '201')).toMatchObject({
      required: ['ok', 'tell_user'],
      properties: { ok: { type: 'boolean' }, tell_user: { type: 'string', maxLength: TELL_USER_MAX } },
    });
    expect(JSON.stringify(schemaOf(node, 'post', '201'))).not.toContain('tell_user');
    const getProxy = buildOpenApi([proxyRouteOf(get)], { title: 't', version: '1' }, 'proxy');
    expect(JSON.stringify(getProxy)).not.toContain('tell_user');
  });
});
