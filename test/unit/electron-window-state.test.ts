import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WINDOW_STATE,
  fitWindowState,
  loadWindowState,
  MIN_SIZE,
  parseWindowState,
  type Rect,
  saveWindowState,
} from '../../electron/window-state.ts';
import { tempDir } from '../helpers/node.ts';

const PRIMARY: Rect = { x: 0, y: 0, width: 1920, height: 1040 };
const RIGHT: Rect = { x: 1920, y: 0, width: 1280, height: 1000 };
const SMALL: Rect = { x: 0, y: 0, width: 1024, height: 600 };

describe('window state', () => {
  it('opens new users at the default size, centered', () => {
    expect(fitWindowState(undefined, [PRIMARY])).toEqual({ width: 1200, height: 800, maximized: false });
  });

  it('keeps a position that is fully visible', () => {
    const s = { x: 100, y: 50, width: 1000, height: 700, maximized: false };
    expect(fitWindowState(s, [PRIMARY])).toEqual(s);
    const onRight = { x: 2000, y: 100, width: 1000, height: 700, maximized: true };
    expect(fitWindowState(onRight, [PRIMARY, RIGHT])).toEqual(onRight);
  });

  it('centers a window left on a display that is gone', () => {
    const s = { x: 2000, y: 100, width: 1000, height: 700, maximized: false };
    expect(fitWindowState(s, [PRIMARY])).toEqual({ width: 1000, height: 700, maximized: false });
    expect(fitWindowState({ ...s, x: -5000, y: -5000 }, [PRIMARY, RIGHT])).not.toHaveProperty('x');
  });

  it('centers a window whose title bar is off screen (dragged above the top)', () => {
    const s = { x: 100, y: -600, width: 1000, height: 700, maximized: false };
    expect(fitWindowState(s, [PRIMARY])).toEqual({ width: 1000, height: 700, maximized: false });
  });

  it('pulls a partly visible window fully onto its display', () => {
    const s = { x: 1500, y: 800, width: 1000, height: 700, maximized: false };
    expect(fitWindowState(s, [PRIMARY])).toEqual({
      x: 920,
      y: 340,
      width: 1000,
      height: 700,
      maximized: false,
    });
    // Straddling two displays: it goes to the one holding most of its title bar.
    const straddle = { x: 1700, y: 0, width: 1000, height: 700, maximized: false };
    expect(fitWindowState(straddle, [PRIMARY, RIGHT])).toMatchObject({ x: 1920, y: 0 });
  });

  it('shrinks a window bigger than the display, never below the minimum the display allows', () => {
    const big = { x: 0, y: 0, width: 3000, height: 2000, maximized: false };
    expect(fitWindowState(big, [SMALL])).toEqual({ x: 0, y: 0, width: 1024, height: 600, maximized: false });
    const tiny = { x: 10, y: 10, width: 200, height: 100, maximized: false };
    expect(fitWindowState(tiny, [PRIMARY])).toMatchObject({ width: MIN_SIZE.width, height: MIN_SIZE.height });
    const phone: Rect = { x: 0, y: 0, width: 640, height: 480 };
    expect(fitWindowState(undefined, [phone])).toEqual({ width: 640, height: 480, maximized: false });
  });

  it('copes with no display information', () => {
    expect(fitWindowState(undefined, [])).toEqual(DEFAULT_WINDOW_STATE);
  });

  it('parses only sane saved states', () => {
    expect(parseWindowState({ x: 1, y: 2, width: 900, height: 600, maximized: true })).toEqual({
      x: 1,
      y: 2,
      width: 900,
      height: 600,
      maximized: true,
    });
    expect(parseWindowState({ width: 900, height: 600, x: 1 })).toEqual({
      width: 900,
      height: 600,
      maximized: false,
    });
    for (const bad of [
      null,
      'x',
      [],
      { width: 0, height: 600 },
      { width: 1.5, height: 600 },
      { width: '900', height: 600 },
    ]) {
      expect(parseWindowState(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('saves privately and loads back; a missing or corrupt file is no error', () => {
    const dir = tempDir();
    const file = join(dir, 'window-state.json');
    expect(loadWindowState(file)).toBeUndefined();
    const s = { x: 5, y: 6, width: 1000, height: 700, maximized: true };
    expect(saveWindowState(file, s)).toBeUndefined();
    expect(loadWindowState(file)).toEqual(s);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(s);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, '{not json');
    expect(loadWindowState(file)).toBeUndefined();
    expect(saveWindowState(join(dir, 'missing', 'dir', 'x.json'), s)).toBeInstanceOf(Error);
  });
});
