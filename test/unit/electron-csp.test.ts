import { describe, expect, it } from 'vitest';
import { UI_CONTENT_SECURITY_POLICY } from '../../node-core/api/ui-csp.ts';
import { checkOrigin, desktopCsp, withCsp } from '../../electron/csp.ts';

const ORIGIN = 'http://127.0.0.1:8080';

function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values];
    }),
  );
}

describe('the desktop Content-Security-Policy', () => {
  const policy = desktopCsp(ORIGIN);
  const d = directives(policy);

  it('is the GUI policy with connect-src narrowed to the node origin only (and its ws:// form)', () => {
    expect(d.get('connect-src')).toEqual([ORIGIN, 'ws://127.0.0.1:8080']);
    expect(policy).toBe(
      UI_CONTENT_SECURITY_POLICY.replace("connect-src 'self'", `connect-src ${ORIGIN} ws://127.0.0.1:8080`),
    );
  });

  it('allows no eval, only WebAssembly compilation', () => {
    expect(policy).not.toMatch(/'unsafe-eval'/);
    expect(d.get('script-src')).toEqual(["'self'", "'wasm-unsafe-eval'"]);
    expect(d.get('default-src')).toEqual(["'self'"]);
  });

  it('forbids plugins, base tags, framing and form posts', () => {
    expect(d.get('object-src')).toEqual(["'none'"]);
    expect(d.get('base-uri')).toEqual(["'none'"]);
    expect(d.get('frame-ancestors')).toEqual(["'none'"]);
    expect(d.get('form-action')).toEqual(["'none'"]);
    expect(d.get('worker-src')).toEqual(["'self'", 'blob:']);
    expect(d.get('img-src')).toEqual(["'self'", 'data:']);
  });

  it('follows the node to another port', () => {
    expect(directives(desktopCsp('http://127.0.0.1:41234')).get('connect-src')).toEqual([
      'http://127.0.0.1:41234',
      'ws://127.0.0.1:41234',
    ]);
    expect(directives(desktopCsp('https://node.example')).get('connect-src')).toEqual([
      'https://node.example',
      'wss://node.example',
    ]);
  });

  it('refuses anything that is not an exact http(s) origin', () => {
    for (const bad of [
      '*',
      "'self' https:",
      'http://127.0.0.1:8080/',
      'file:///x',
      'ws://127.0.0.1:1',
      'nonsense',
    ]) {
      expect(() => desktopCsp(bad), bad).toThrow(TypeError);
    }
    expect(checkOrigin('https://example.org')).toBe('https://example.org');
  });

  it('replaces any policy the response carried, whatever its case, and keeps other headers', () => {
    const out = withCsp(
      {
        'content-security-policy': ["default-src *; script-src 'unsafe-eval'"],
        'Content-Security-Policy-Report-Only': ['default-src none'],
        'Content-Type': ['text/html'],
        ETag: 'W/"1"' as unknown as string[],
      },
      policy,
    );
    expect(out['Content-Security-Policy']).toEqual([policy]);
    expect(out['content-security-policy']).toBeUndefined();
    expect(out['Content-Type']).toEqual(['text/html']);
    expect(out.ETag).toEqual(['W/"1"']);
    expect(out['Content-Security-Policy-Report-Only']).toEqual(['default-src none']);
    expect(withCsp(undefined, policy)).toEqual({ 'Content-Security-Policy': [policy] });
  });
});
