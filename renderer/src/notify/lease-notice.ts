/**
 * Lease events as notices (issue #16: desktop notifications "for lease and chat events"): a lease of
 * the person's about to run out, run out, or held without the funds for its next renewal. Each
 * lease is told once per state it enters (not on every poll), and again only if it leaves that
 * state and comes back. Pure: the runner shows what this returns.
 */
export type LeaseAlertKind = 'soon' | 'expired' | 'low_funds';

export interface LeaseAlert {
  lease: string;
  kind: LeaseAlertKind;
}

export interface LeaseNotice {
  lease: string;
  title: string;
  body: string;
}

const TITLES: Record<LeaseAlertKind, string> = {
  soon: 'A lease runs out soon',
  expired: 'A lease has run out',
  low_funds: 'A held lease cannot be renewed',
};

function body(a: LeaseAlert): string {
  const name = `Lease ${a.lease.slice(0, 8)}`;
  if (a.kind === 'soon') return `${name} runs out soon: renew it, or turn on Hold, in Leasing.`;
  if (a.kind === 'expired') return `${name} has run out; its VM stops.`;
  return `${name} is held, but the account lacks the XUSD for its next renewal.`;
}

export class LeaseAlertTracker {
  readonly #told = new Map<string, LeaseAlertKind>();

  /** The notices for alerts not told yet; alerts gone since are forgotten (told again if back). */
  update(alerts: readonly LeaseAlert[]): LeaseNotice[] {
    const now = new Map(alerts.map((a) => [a.lease, a.kind] as const));
    for (const lease of [...this.#told.keys()]) if (!now.has(lease)) this.#told.delete(lease);
    const out: LeaseNotice[] = [];
    for (const a of alerts) {
      if (this.#told.get(a.lease) === a.kind) continue;
      this.#told.set(a.lease, a.kind);
      out.push({ lease: a.lease, title: TITLES[a.kind], body: body(a) });
    }
    return out;
  }
}
