import { crc32, deflateSync } from 'node:zlib';

/**
 * The app's icon, drawn in code: a rounded square in a colour with three white ledger lines. The
 * same drawing makes the packaging icons (scripts/gen-icons.ts writes build/icons/) and the tray
 * icon, whose colour shows the node's state. Output is a PNG (RGBA, 8 bits), encoded here with
 * node:zlib so no image library is needed.
 */
export type Rgb = readonly [number, number, number];

export const ICON_COLORS = {
  brand: [37, 99, 235],
  running: [22, 163, 74],
  starting: [217, 119, 6],
  error: [220, 38, 38],
} as const satisfies Record<string, Rgb>;

const SUPERSAMPLE = 4;

/** Coverage (0..1) of the rounded square and of the white lines at a point in unit coordinates. */
function shapesAt(u: number, v: number): { tile: boolean; line: boolean } {
  const m = 0.04; // margin
  const r = 0.2; // corner radius
  const lo = m;
  const hi = 1 - m;
  let tile = u >= lo && u <= hi && v >= lo && v <= hi;
  if (tile) {
    const cx = Math.min(Math.max(u, lo + r), hi - r);
    const cy = Math.min(Math.max(v, lo + r), hi - r);
    tile = (u - cx) ** 2 + (v - cy) ** 2 <= r * r;
  }
  // Three lines; the last one shorter, like a page of entries.
  const lines: [number, number, number][] = [
    [0.3, 0.24, 0.76],
    [0.47, 0.24, 0.76],
    [0.64, 0.24, 0.58],
  ];
  const h = 0.09;
  const line = tile && lines.some(([y, x0, x1]) => v >= y && v <= y + h && u >= x0 && u <= x1);
  return { tile, line };
}

/** RGBA pixels of the icon, row by row. */
export function iconPixels(size: number, color: Rgb): Uint8Array {
  if (!Number.isInteger(size) || size < 8 || size > 4096) throw new RangeError('icon size must be 8..4096');
  const px = new Uint8Array(size * size * 4);
  const n = SUPERSAMPLE * SUPERSAMPLE;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let tile = 0;
      let line = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const s = shapesAt((x + (sx + 0.5) / SUPERSAMPLE) / size, (y + (sy + 0.5) / SUPERSAMPLE) / size);
          if (s.tile) tile++;
          if (s.line) line++;
        }
      }
      const i = (y * size + x) * 4;
      const white = tile === 0 ? 0 : line / tile;
      for (let c = 0; c < 3; c++) px[i + c] = Math.round(color[c]! * (1 - white) + 255 * white);
      px[i + 3] = Math.round((255 * tile) / n);
    }
  }
  return px;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG file of RGBA pixels (filter 0 on every row). */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) throw new RangeError('pixel buffer does not match the size');
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0;
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

export function iconPng(size: number, color: Rgb = ICON_COLORS.brand): Buffer {
  return encodePng(size, size, iconPixels(size, color));
}
