/**
 * Writes the packaging icons to build/icons/ from the icon drawn in electron/icon.ts (the same one
 * the tray uses): icon.png (512x512, for macOS and Windows; electron-builder converts it) and the
 * sized PNGs Linux packages take (16x16.png ... 512x512.png). Run with `node scripts/gen-icons.ts`
 * after changing the drawing; the output is committed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { iconPng } from '../electron/icon.ts';

const dir = fileURLToPath(new URL('../build/icons/', import.meta.url));
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'icon.png'), iconPng(512));
for (const size of [16, 32, 48, 64, 128, 256, 512])
  writeFileSync(join(dir, `${size}x${size}.png`), iconPng(size));
process.stdout.write(`icons written to ${dir}\n`);
