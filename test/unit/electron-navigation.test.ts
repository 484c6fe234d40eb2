import { describe, expect, it } from 'vitest';
import { decideNavigation, isNodeUrl, originOf, permissionAllowed } from '../../electron/navigation.ts';

const ORIGIN = 'http://127.0.0.1:8080';

describe('the navigation guard', () => {
  it('allows the node origin only', () => {
    for (const url of [
      `${ORIGIN}/ui/`,
      `${ORIGIN}/ui/wallet?x=1#top`,
      `${ORIGIN}/accounts/xe_1/balance`,
      `${ORIGIN}`,
    ]) {
      expect(decideNavigation(url, ORIGIN), url).toBe('allow');
      expect(isNodeUrl(url, ORIGIN), url).toBe(true);
    }
  });

  it('sends other web addresses to the system browser', () => {
    for (const url of ['https://example.org/docs', 'http://example.org', 'https://127.0.0.1:8080/ui/']) {
      expect(decideNavigation(url, ORIGIN), url).toBe('open-external');
    }
  });

  it('refuses everything else, including other local ports and lookalikes', () => {
    for (const url of [
      'http://127.0.0.1:8081/ui/', // another local service
      'http://localhost:8080/ui/', // same port, other origin
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,<script>1</script>',
      'blob:http://127.0.0.1:8080/1234',
      'ledger://pay',
      'about:blank',
      'http://user:pass@example.org/',
      'not a url',
      '',
    ]) {
      const d = decideNavigation(url, ORIGIN);
      if (url.startsWith('http://127.0.0.1:8081') || url.startsWith('http://localhost')) {
        // http links elsewhere leave the app for the browser; they never load in the window.
        expect(d, url).toBe('open-external');
      } else {
        expect(d, url).toBe('deny');
      }
      expect(isNodeUrl(url, ORIGIN), url).toBe(false);
    }
  });

  it('compares whole origins', () => {
    expect(originOf('http://127.0.0.1:8080/x')).toBe(ORIGIN);
    expect(originOf('HTTP://127.0.0.1:8080')).toBe(ORIGIN);
    expect(originOf('data:,x')).toBeUndefined();
    expect(originOf('::')).toBeUndefined();
    expect(isNodeUrl('http://127.0.0.1:80800/', ORIGIN)).toBe(false);
    expect(isNodeUrl('http://127.0.0.1.evil.example:8080/', ORIGIN)).toBe(false);
  });

  it('denies permissions by default; clipboard writes only for the node page', () => {
    for (const p of [
      'media',
      'geolocation',
      'notifications',
      'clipboard-read',
      'openExternal',
      'usb',
      'unknown',
    ]) {
      expect(permissionAllowed(p, `${ORIGIN}/ui/`, ORIGIN), p).toBe(false);
    }
    expect(permissionAllowed('clipboard-sanitized-write', `${ORIGIN}/ui/`, ORIGIN)).toBe(true);
    expect(permissionAllowed('clipboard-sanitized-write', ORIGIN, ORIGIN)).toBe(true);
    expect(permissionAllowed('clipboard-sanitized-write', 'https://example.org/', ORIGIN)).toBe(false);
  });
});
