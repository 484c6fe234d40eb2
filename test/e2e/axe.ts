import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core in the page under test, for the end-to-end tests' accessibility audits. The script goes
 * in through the DevTools protocol rather than addScriptTag: the app's CSP (rightly) refuses inline
 * scripts, and the audit must see the page with its CSP on.
 */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Every axe violation on the page as it is, one line each (rule, impact, where; contrast figures). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: unknown[] }> } }
    ).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return (violations as Violation[]).map(
    (v) =>
      `${v.impact ?? '?'} ${v.id}: ${v.help} — ${v.nodes
        .slice(0, 4)
        .map(
          (n) =>
            `${n.target.join(' ')}${v.id === 'color-contrast' ? ` (${n.failureSummary?.split('\n').pop()?.trim()})` : ''}`,
        )
        .join(' | ')}`,
  );
}
