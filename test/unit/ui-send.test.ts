import { describe, expect, it } from 'vitest';
import { acceptedEncodings } from '../../node-core/api/ui-send.ts';

/** Which precompressed copy of a GUI file a browser's Accept-Encoding takes (ui-send.ts). */
const names = (header: string | undefined) => acceptedEncodings(header).map((e) => e.name);

describe('acceptedEncodings', () => {
  it('prefers Brotli over gzip when both are taken alike', () => {
    expect(names('gzip, deflate, br, zstd')).toEqual(['br', 'gzip']);
    expect(names('br')).toEqual(['br']);
    expect(names('GZIP')).toEqual(['gzip']);
  });

  it('orders by q-value and refuses q=0', () => {
    expect(names('br;q=0.2, gzip;q=0.8')).toEqual(['gzip', 'br']);
    expect(names('br;q=0, gzip;q=0.5')).toEqual(['gzip']);
    expect(names('br; q=0 , gzip;q=0')).toEqual([]);
  });

  it('takes * as gzip unless gzip is named itself', () => {
    expect(names('*')).toEqual(['gzip']);
    expect(names('gzip;q=0, *')).toEqual([]);
    expect(names('br, *;q=0.1')).toEqual(['br', 'gzip']);
  });

  it('gives nothing for no header, identity, unknown codings or a bad q', () => {
    expect(names(undefined)).toEqual([]);
    expect(names('')).toEqual([]);
    expect(names('identity')).toEqual([]);
    expect(names('deflate, zstd')).toEqual([]);
    expect(names('br;q=x')).toEqual([]);
  });
});
