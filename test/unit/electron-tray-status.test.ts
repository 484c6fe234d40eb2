import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ICON_COLORS, iconPixels, iconPng, PNG_SIGNATURE } from '../../electron/icon.ts';
import { fetchNodeStatus, parseNodeStatus, statusLine, trayColor } from '../../electron/tray-status.ts';

describe('the tray status', () => {
  it('shows network, blocks and peers in one line', () => {
    expect(
      statusLine({ kind: 'running', status: { network: 'devnet-1a2b3c4d', blocks: 12345, peers: 0 } }),
    ).toBe('devnet-1a2b3c4d · 12,345 blocks · 0 peers');
    expect(statusLine({ kind: 'running', status: { network: 'n', blocks: 1, peers: 1 } })).toBe(
      'n · 1 block · 1 peer',
    );
    expect(statusLine({ kind: 'starting' })).toBe('Node starting…');
    expect(statusLine({ kind: 'stopping' })).toBe('Node stopping…');
    expect(statusLine({ kind: 'unreachable', reason: 'timeout' })).toBe('Node not answering: timeout');
  });

  it('colours the icon by state', () => {
    expect(trayColor({ kind: 'running', status: { network: 'n', blocks: 0, peers: 0 } })).toEqual(
      ICON_COLORS.running,
    );
    expect(trayColor({ kind: 'unreachable', reason: '' })).toEqual(ICON_COLORS.error);
    expect(trayColor({ kind: 'starting' })).toEqual(ICON_COLORS.starting);
  });

  it('reads the figures from GET /node', async () => {
    const body = { network_id: 'devnet-1', block_count: 9, peer_count: 2, peers: [] };
    expect(parseNodeStatus(body)).toEqual({ network: 'devnet-1', blocks: 9, peers: 2 });
    expect(parseNodeStatus({ network_id: 'x', block_count: '18', peers: ['a', 'b'] })).toEqual({
      network: 'x',
      blocks: 18,
      peers: 2,
    });
    for (const bad of [
      null,
      {},
      { network_id: 'x', block_count: -1, peer_count: 0 },
      { block_count: 1, peer_count: 0 },
    ]) {
      expect(parseNodeStatus(bad)).toBeUndefined();
    }
    const fake = (async (url: string) => {
      expect(url).toBe('http://127.0.0.1:8080/node');
      return new Response(JSON.stringify(body), { status: 200 });
    }) as unknown as typeof fetch;
    expect(await fetchNodeStatus('http://127.0.0.1:8080', fake)).toEqual({
      network: 'devnet-1',
      blocks: 9,
      peers: 2,
    });
    const failing = (async () => new Response('{}', { status: 503 })) as unknown as typeof fetch;
    await expect(fetchNodeStatus('http://127.0.0.1:8080', failing)).rejects.toThrow(/503/);
  });
});

describe('the app icon', () => {
  it('is a valid RGBA PNG of the asked size', () => {
    const png = iconPng(64);
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(64);
    expect(png.readUInt32BE(20)).toBe(64);
    expect(png[24]).toBe(8);
    expect(png[25]).toBe(6);
    // The pixels survive the round trip through zlib.
    const idatLen = png.readUInt32BE(33);
    expect(png.subarray(37, 41).toString('ascii')).toBe('IDAT');
    const raw = inflateSync(png.subarray(41, 41 + idatLen));
    expect(raw.length).toBe((64 * 4 + 1) * 64);
    expect(png.subarray(-8, -4).toString('ascii')).toBe('IEND');
  });

  it('has transparent corners, the colour on the tile, white lines', () => {
    const size = 64;
    const px = iconPixels(size, ICON_COLORS.brand);
    const at = (x: number, y: number) => [...px.subarray((y * size + x) * 4, (y * size + x) * 4 + 4)];
    expect(at(0, 0)[3]).toBe(0);
    expect(at(size / 2, Math.round(size * 0.12))).toEqual([...ICON_COLORS.brand, 255]);
    expect(at(size / 2, Math.round(size * 0.34))).toEqual([255, 255, 255, 255]);
    expect(() => iconPixels(4, ICON_COLORS.brand)).toThrow(RangeError);
  });
});
