import { describe, expect, it } from 'vitest';
import { createSecurity, parseHost } from '../../node-core/api/security.ts';

describe('Host check (DNS rebinding)', () => {
  const sec = createSecurity({ bindAddress: '192.168.1.20', allowedHosts: ['MyNode.local'] });
  const allowed = (host: string | undefined, version = '1.1'): boolean =>
    sec.checkHost(host, version) === undefined;

  it('parses host headers', () => {
    expect(parseHost('LocalHost:8080')).toEqual({ name: 'localhost', port: 8080 });
    expect(parseHost('[::1]:80')).toEqual({ name: '[::1]', port: 80 });
    expect(parseHost('[::1]')).toEqual({ name: '[::1]', port: undefined });
    expect(parseHost('a:')).toBeUndefined();
    expect(parseHost('a:99999')).toBeUndefined();
    expect(parseHost('a:1:2')).toBeUndefined();
    expect(parseHost(':80')).toBeUndefined();
    expect(parseHost('[::1')).toBeUndefined();
  });

  it('allows loopback names, the bind address and configured names, with or without port', () => {
    for (const h of [
      'localhost',
      'localhost:8080',
      '127.0.0.1',
      '127.0.0.1:1',
      '127.4.5.6:9000',
      '[::1]',
      '[::1]:8080',
      '192.168.1.20:8080',
      'mynode.local',
      'mynode.local:80',
    ]) {
      expect(allowed(h), h).toBe(true);
    }
  });

  it('refuses every other name with 403', () => {
    for (const h of [
      'evil.example',
      'evil.example:8080',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '::1',
      '10.0.0.1',
    ]) {
      const e = sec.checkHost(h, '1.1');
      expect(e?.status, h).toBe(403);
      expect(e?.toBody()).toEqual({ error: 'host not allowed' });
    }
  });

  it('answers a missing Host with 400 on HTTP/1.1 only', () => {
    expect(sec.checkHost(undefined, '1.1')?.status).toBe(400);
    expect(sec.checkHost('', '1.1')?.status).toBe(400);
    expect(allowed(undefined, '1.0')).toBe(true);
  });

  it('gives the same verdicts asked again, after many passing values (it remembers only those)', () => {
    for (let round = 0; round < 2; round++) {
      for (let port = 1; port <= 200; port++) {
        for (let ask = 0; ask < 2; ask++) {
          expect(allowed(`localhost:${port}`)).toBe(true);
          // Same name, a port that is no port: refused however often its name passed.
          expect(sec.checkHost(`localhost:${port}x`, '1.1')?.status).toBe(403);
          expect(sec.checkHost(`evil.example:${port}`, '1.1')?.status).toBe(403);
        }
      }
      expect(sec.checkHost(' ', '1.1')?.status).toBe(400);
      expect(sec.checkHost(' ', '1.1')?.status).toBe(400);
    }
  });

  it('brackets an IPv6 bind address', () => {
    const v6 = createSecurity({ bindAddress: 'fd00::5' });
    expect(v6.checkHost('[fd00::5]:8080', '1.1')).toBeUndefined();
  });
});

describe('Host check of a whole request (RFC 9112)', () => {
  const sec = createSecurity({ bindAddress: '127.0.0.1' });
  const check = (url: string, rawHeaders: string[], httpVersion = '1.1') =>
    sec.checkRequestHost({ url, httpVersion, rawHeaders });

  it('answers two Host headers with 400, even when both name the node', () => {
    for (const rawHeaders of [
      ['Host', 'localhost', 'Host', 'evil.example'],
      ['Host', 'evil.example', 'host', 'localhost'],
      ['host', 'localhost', 'Accept', '*/*', 'HOST', 'localhost'],
    ]) {
      const e = check('/node', rawHeaders);
      expect(e?.status, rawHeaders.join(' ')).toBe(400);
      expect(e?.toBody()).toEqual({ error: 'duplicate Host header' });
    }
    expect(check('/node', ['Host', 'localhost', 'X-Host', 'evil.example'])).toBeUndefined();
    expect(check('/node', ['Accept', '*/*'])?.toBody()).toEqual({ error: 'missing Host header' });
  });

  it('judges an absolute-form target by its authority, ignoring Host', () => {
    for (const url of [
      'http://evil.example/node',
      'http://evil.example',
      'HTTP://evil.example:8080/node?x=1',
      'http://localhost.evil.example/node',
      'http://localhost@evil.example/node',
      'http://user@localhost/node',
    ]) {
      const e = check(url, ['Host', 'localhost']);
      expect(e?.status, url).toBe(403);
      expect(e?.toBody()).toEqual({ error: 'host not allowed' });
    }
    expect(check('http://127.0.0.1:8080/node', ['Host', 'evil.example'])).toBeUndefined();
    expect(check('http://[::1]/node?x=1', [])).toBeUndefined();
    expect(check('*', ['Host', 'localhost'])).toBeUndefined(); // OPTIONS *: the Host decides
    expect(check('http://localhost/node', ['Host', 'localhost', 'Host', 'localhost'])?.status).toBe(400);
  });
});

describe('CORS', () => {
  const sec = createSecurity({ bindAddress: '127.0.0.1', corsOrigins: ['http://127.0.0.1:8080'] });

  it('echoes an allowed origin with the full header set', () => {
    expect(sec.corsHeaders('http://127.0.0.1:8080')).toEqual({
      'access-control-allow-origin': 'http://127.0.0.1:8080',
      vary: 'Origin',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'Content-Type, Authorization, Idempotency-Key, X-Source, X-Ledger-App',
      'access-control-allow-credentials': 'true',
      'access-control-max-age': '3600',
    });
  });

  it('sends nothing for other origins', () => {
    expect(sec.corsHeaders('http://evil.example')).toBeUndefined();
    expect(sec.corsHeaders('http://127.0.0.1:8081')).toBeUndefined();
    expect(sec.corsHeaders(undefined)).toBeUndefined();
  });
});

describe('admin token', () => {
  it('is 403 when no token is configured', () => {
    for (const token of [undefined, '']) {
      const sec = createSecurity({ bindAddress: '127.0.0.1', adminToken: token });
      expect(sec.checkAdmin('Bearer anything')?.status).toBe(403);
    }
  });

  it('is 401 for a wrong or missing token, ok for the right one', () => {
    const sec = createSecurity({ bindAddress: '127.0.0.1', adminToken: 's3cret' });
    expect(sec.checkAdmin(undefined)?.status).toBe(401);
    expect(sec.checkAdmin('Bearer wrong')?.status).toBe(401);
    expect(sec.checkAdmin('Bearer s3cret-longer')?.status).toBe(401);
    expect(sec.checkAdmin('Basic s3cret')?.status).toBe(401);
    expect(sec.checkAdmin('s3cret')?.status).toBe(401);
    expect(sec.checkAdmin('Bearer s3cret')).toBeUndefined();
    expect(sec.checkAdmin('bearer s3cret')).toBeUndefined();
  });
});
