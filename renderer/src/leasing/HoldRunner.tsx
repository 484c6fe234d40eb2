import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { AccountInfo } from '../keystore/index.ts';
import { href } from '../router.ts';
import { errorMessage } from '../api.ts';
import { type LeaseAlertKind, LeaseAlertTracker } from '../notify/lease-notice.ts';
import { tellAway } from '../notify/tell-away.ts';
import { expiryAlert, holdDecision } from './hold.ts';
import { renewalCost, spanText } from './quote.ts';
import { holdOf, holdStore, leasing, renewLease } from './service.ts';

/**
 * While the app runs and the keystore is open: renews held leases shortly before they run out, and
 * shows an alert for any of the user's leases about to run out (or held without the funds to go on).
 */
export function HoldRunner({ accounts }: { accounts: readonly AccountInfo[] }) {
  const qc = useQueryClient();
  const holds = holdStore.use();
  const key = accounts.map((a) => a.address).join(',');
  const leases = useQuery({
    queryKey: ['leasing', 'active', key],
    queryFn: async () =>
      (
        await Promise.all(accounts.map((a) => leasing().leases({ consumer: a.address, state: 'accepted' })))
      ).flat(),
    refetchInterval: 5000,
    enabled: accounts.length > 0,
  });
  const [now, setNow] = useState(() => BigInt(Date.now()) * 1_000_000n);
  useEffect(() => {
    const i = setInterval(() => setNow(BigInt(Date.now()) * 1_000_000n), 2000);
    return () => clearInterval(i);
  }, []);
  const inFlight = useRef(new Set<string>());
  const failures = useRef(new Map<string, bigint>());
  const [lastError, setLastError] = useState<string>();
  const [lowFunds, setLowFunds] = useState<Set<string>>(new Set());

  useEffect(() => {
    for (const lease of leases.data ?? []) {
      const setting = holdOf(holds, lease.lease_hash);
      if (!setting?.enabled || inFlight.current.has(lease.lease_hash)) continue;
      void (async () => {
        const [cert, bal] = await Promise.all([
          leasing().certificate(lease.provider),
          leasing().client.balances(lease.consumer),
        ]);
        if (!cert) return;
        const d = holdDecision({
          lease,
          now,
          setting,
          spendable: bal.XUSD ?? 0n,
          segmentCost: renewalCost(lease, setting.segmentSecs, cert.price_multiplier_milli),
          lastFailure: failures.current.get(lease.lease_hash),
          inFlight: inFlight.current.has(lease.lease_hash),
        });
        setLowFunds((s) => {
          const low = d.kind === 'low-funds' || (d.kind === 'wait' && d.lowFunds !== undefined);
          if (low === s.has(lease.lease_hash)) return s;
          const n = new Set(s);
          if (low) n.add(lease.lease_hash);
          else n.delete(lease.lease_hash);
          return n;
        });
        if (d.kind !== 'renew' || inFlight.current.has(lease.lease_hash)) return;
        inFlight.current.add(lease.lease_hash);
        try {
          await renewLease(lease, d.duration);
          failures.current.delete(lease.lease_hash);
          setLastError(undefined);
        } catch (e) {
          failures.current.set(lease.lease_hash, BigInt(Date.now()) * 1_000_000n);
          setLastError(`Hold could not renew ${lease.lease_hash.slice(0, 8)}: ${errorMessage(e)}`);
        } finally {
          inFlight.current.delete(lease.lease_hash);
          void qc.invalidateQueries({ queryKey: ['leasing'] });
        }
      })().catch(() => {});
    }
  }, [now, leases.data, holds]);

  const alerts = (leases.data ?? [])
    .map((l) => ({ l, a: expiryAlert(l, now), held: holdOf(holds, l.lease_hash)?.enabled === true }))
    .filter((x) => (x.a && !x.held) || lowFunds.has(x.l.lease_hash));

  // Each alert is also told once as a notice: a toast, and a desktop notification when away.
  const tracker = useRef(new LeaseAlertTracker());
  const alertKey = alerts
    .map(({ l, a }) => `${l.lease_hash}:${lowFunds.has(l.lease_hash) ? 'low_funds' : (a?.level ?? '')}`)
    .join(',');
  useEffect(() => {
    const notices = tracker.current.update(
      alertKey === ''
        ? []
        : alertKey.split(',').map((e) => {
            const [lease, kind] = e.split(':') as [string, LeaseAlertKind];
            return { lease, kind };
          }),
    );
    for (const n of notices) tellAway(n.title, n.body, href('leasing', 'lease', n.lease, 'renewals'));
  }, [alertKey]);

  if (alerts.length === 0 && !lastError) return null;
  return (
    <div className="lease-alerts" role="status" data-testid="lease-alerts">
      {alerts.map(({ l, a }) => (
        <div key={l.lease_hash} className="error box" data-testid="lease-expiry-alert">
          <a href={href('leasing', 'lease', l.lease_hash, 'renewals')} className="mono">
            Lease {l.lease_hash.slice(0, 8)}
          </a>{' '}
          {lowFunds.has(l.lease_hash)
            ? 'is held, but the account lacks the XUSD for its next renewal.'
            : a?.level === 'expired'
              ? 'has run out.'
              : `runs out in ${spanText(a && a.level === 'soon' ? a.secondsLeft : 0n)}.`}
        </div>
      ))}
      {lastError && <div className="error box">{lastError}</div>}
    </div>
  );
}
