import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeIco } from '../../electron/ico.ts';
import { iconPng } from '../../electron/icon.ts';

const at = (p: string) => new URL(`../../${p}`, import.meta.url);

describe('encodeIco', () => {
  it('writes the ICO header and one entry per PNG, pointing at its bytes', () => {
    const a = Uint8Array.from([1, 2, 3]);
    const b = Uint8Array.from([9, 8]);
    const ico = encodeIco([
      { size: 16, png: a },
      { size: 256, png: b },
    ]);
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)]).toEqual([0, 1, 2]);
    expect([
      ico[6],
      ico[7],
      ico.readUInt16LE(10),
      ico.readUInt16LE(12),
      ico.readUInt32LE(14),
      ico.readUInt32LE(18),
    ]).toEqual([16, 16, 1, 32, 3, 38]);
    expect([ico[22], ico[23], ico.readUInt32LE(30), ico.readUInt32LE(34)]).toEqual([0, 0, 2, 41]);
    expect([...ico.subarray(38)]).toEqual([1, 2, 3, 9, 8]);
  });

  it('refuses sizes an icon cannot hold', () => {
    expect(() => encodeIco([])).toThrow(/1 to 65535/);
    expect(() => encodeIco([{ size: 300, png: new Uint8Array(1) }])).toThrow(/300 is not 1 to 256/);
  });
});

describe('the committed icons', () => {
  it('are the drawing of electron/icon.ts (run node scripts/gen-icons.ts after changing it)', () => {
    const ico = encodeIco([16, 32, 48].map((size) => ({ size, png: iconPng(size) })));
    expect(readFileSync(at('renderer/public/favicon.ico')).equals(ico)).toBe(true);
    expect(readFileSync(at('renderer/public/icon.png')).equals(iconPng(512))).toBe(true);
    expect(readFileSync(at('build/icons/icon.png')).equals(iconPng(512))).toBe(true);
  });
});
