/**
 * Writes every icon file from the icon drawn in electron/icon.ts (the same one the tray uses):
 * - build/icons/: icon.png (512x512, for macOS and Windows; electron-builder converts it) and the
 *   sized PNGs Linux packages take (16x16.png ... 512x512.png);
 * - renderer/public/: favicon.ico (16, 32 and 48 px) and icon.png (512 px), which the GUI links and
 *   the node also answers at /favicon.ico.
 * Run with `node scripts/gen-icons.ts` after changing the drawing; the output is committed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeIco } from '../electron/ico.ts';
import { iconPng } from '../electron/icon.ts';

const buildDir = fileURLToPath(new URL('../build/icons/', import.meta.url));
mkdirSync(buildDir, { recursive: true });
writeFileSync(join(buildDir, 'icon.png'), iconPng(512));
for (const size of [16, 32, 48, 64, 128, 256, 512])
  writeFileSync(join(buildDir, `${size}x${size}.png`), iconPng(size));
process.stdout.write(`icons written to ${buildDir}\n`);

const publicDir = fileURLToPath(new URL('../renderer/public/', import.meta.url));
mkdirSync(publicDir, { recursive: true });
writeFileSync(
  join(publicDir, 'favicon.ico'),
  encodeIco([16, 32, 48].map((size) => ({ size, png: iconPng(size) }))),
);
writeFileSync(join(publicDir, 'icon.png'), iconPng(512));
process.stdout.write(`favicon.ico and icon.png written to ${publicDir}\n`);
