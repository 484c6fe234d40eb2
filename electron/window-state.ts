import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../node-core/genesis/genesis.ts';

/**
 * The remembered size and position of the app window (a small JSON file in userData), and the pure
 * rules that make a remembered position safe to reuse: a window saved on a monitor that is gone, or
 * at a size bigger than the screen it lands on, is brought back fully onto a visible display.
 */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  /** Left and top in screen coordinates; both absent means "center on the primary display". */
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

export const WINDOW_STATE_FILE = 'window-state.json';
export const DEFAULT_WINDOW_STATE: Readonly<WindowState> = { width: 1200, height: 800, maximized: false };
export const MIN_SIZE = { width: 800, height: 560 } as const;
/** How much of the title bar must lie on a display for the saved position to count as visible. */
export const MIN_VISIBLE = { width: 100, height: 40 } as const;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** A WindowState from untrusted JSON, or undefined when it does not look like one. */
export function parseWindowState(value: unknown): WindowState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (!isInt(v.width) || !isInt(v.height) || v.width <= 0 || v.height <= 0) return undefined;
  const state: WindowState = { width: v.width, height: v.height, maximized: v.maximized === true };
  if (isInt(v.x) && isInt(v.y)) {
    state.x = v.x;
    state.y = v.y;
  }
  return state;
}

function overlap(a: Rect, b: Rect): { width: number; height: number } {
  return {
    width: Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)),
    height: Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)),
  };
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), Math.max(lo, hi));

/**
 * The state to open the window with, given the saved one (if any) and the work areas of the
 * displays (primary first). The size never exceeds the target display's work area nor goes below
 * MIN_SIZE (unless the display itself is smaller); a position whose title bar is not visible enough
 * on any display is dropped (the window opens centered on the primary display); a visible one is
 * moved so the whole window lies on its display.
 */
export function fitWindowState(saved: WindowState | undefined, workAreas: readonly Rect[]): WindowState {
  const primary = workAreas[0];
  const base = saved ?? DEFAULT_WINDOW_STATE;
  if (primary === undefined) return { ...base };

  const sizeFor = (area: Rect) => ({
    width: clamp(base.width, Math.min(MIN_SIZE.width, area.width), area.width),
    height: clamp(base.height, Math.min(MIN_SIZE.height, area.height), area.height),
  });

  if (base.x !== undefined && base.y !== undefined) {
    const titleBar: Rect = { x: base.x, y: base.y, width: base.width, height: MIN_VISIBLE.height };
    let best: Rect | undefined;
    let bestArea = 0;
    for (const area of workAreas) {
      const o = overlap(titleBar, area);
      if (o.width >= Math.min(MIN_VISIBLE.width, base.width) && o.height >= MIN_VISIBLE.height / 2) {
        if (o.width * o.height > bestArea) {
          best = area;
          bestArea = o.width * o.height;
        }
      }
    }
    if (best !== undefined) {
      const size = sizeFor(best);
      return {
        x: clamp(base.x, best.x, best.x + best.width - size.width),
        y: clamp(base.y, best.y, best.y + best.height - size.height),
        ...size,
        maximized: base.maximized,
      };
    }
  }
  return { ...sizeFor(primary), maximized: base.maximized };
}

/** The saved state, or undefined when there is none or it is unreadable (never an error). */
export function loadWindowState(file: string): WindowState | undefined {
  try {
    return parseWindowState(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** Saves the state; a failure only loses the remembered position, so it is reported, not thrown. */
export function saveWindowState(file: string, state: WindowState): Error | undefined {
  try {
    writeFileAtomic(file, `${JSON.stringify(state)}\n`, 0o600);
    return undefined;
  } catch (e) {
    return e as Error;
  }
}
