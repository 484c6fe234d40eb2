import { keepPreviousData, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useMemo, useState, type FormEvent } from 'react';
import type { LeaseInfo, LeaseOffer, NodeLeasing, ProviderInfo } from '../../../node-core/client/leasing.ts';
import { type LeaseDimensions } from '../../../node-core/protocol/lease-cost.ts';
import { Amount, Empty, ErrorText, Loading, short, timeOf } from '../components/common.tsx';
import { useKeystore, type AccountInfo } from '../keystore/index.ts';
import { expiryAlert, holdDecision, holdLeadSecs } from '../leasing/hold.ts';
import {
  DURATION_UNITS,
  type DurationUnit,
  leaseActions,
  leaseExpiry,
  type LeaseForm,
  multiplierText,
  NS_PER_SEC,
  parseLeaseForm,
  quoteLease,
  renewalCost,
  renewalProblem,
  spanText,
} from '../leasing/quote.ts';
import {
  cancelLease,
  forceSettleLease,
  holdOf,
  holdStore,
  leasing,
  renewLease,
  requestOffers,
  setHold,
  takeOffer,
} from '../leasing/service.ts';
import { href } from '../router.ts';
import { settings } from '../settings.ts';
import { invalidateAccounts, useBalances } from '../wallet/queries.ts';
import { useAction } from '../wallet/useAction.ts';

// The terminal (xterm.js) loads only when a console is opened.
const VmConsole = lazy(() => import('../components/VmConsole.tsx'));

export const lk = {
  node: ['leasing', 'node'] as const,
  providers: ['leasing', 'providers'] as const,
  leases: (consumers: string) => ['leasing', 'leases', consumers] as const,
  lease: (h: string) => ['leasing', 'lease', h] as const,
  cert: (p: string) => ['leasing', 'cert', p] as const,
  rep: (p: string) => ['leasing', 'rep', p] as const,
  vms: ['leasing', 'vms'] as const,
  providerLeases: (p: string) => ['leasing', 'provider-leases', p] as const,
};

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

function useNow(ms = 1000): bigint {
  const [t, setT] = useState(nowNs);
  useEffect(() => {
    const i = setInterval(() => setT(nowNs()), ms);
    return () => clearInterval(i);
  }, [ms]);
  return t;
}

export function useNodeLeasing() {
  return useQuery({ queryKey: lk.node, queryFn: () => leasing().nodeLeasing(), refetchInterval: 5000 });
}

/** Leasing: providers and a quote, the user's leases, a lease's details, console and renewals; provider tab. */
export default function LeasingPage({ route }: { route: string[] }) {
  const node = useNodeLeasing();
  const provides = node.data?.provider?.enabled === true;
  const tab = route[1] === 'provider' ? 'provider' : route[1] === 'lease' && route[2] ? 'lease' : 'consumer';
  return (
    <div className="page" data-testid="leasing-page">
      <h1>Leasing</h1>
      <nav className="tabs" aria-label="Leasing">
        <a
          href={href('leasing')}
          className={`tab${tab !== 'provider' ? ' active' : ''}`}
          data-testid="leasing-tab-consumer"
        >
          Lease compute
        </a>
        <a
          href={href('leasing', 'provider')}
          className={`tab${tab === 'provider' ? ' active' : ''}`}
          data-testid="leasing-tab-provider"
        >
          Provider{provides ? '' : ' (off)'}
        </a>
      </nav>
      {tab === 'provider' ? (
        <ProviderSection node={node.data} />
      ) : tab === 'lease' ? (
        <LeaseDetail hash={route[2]!} tab={route[3] ?? 'details'} node={node.data} />
      ) : (
        <ConsumerOverview node={node.data} />
      )}
    </div>
  );
}

// ---- consumer overview ---------------------------------------------------------------------------

function useProviders() {
  const providers = useQuery({
    queryKey: lk.providers,
    queryFn: () => leasing().providers(),
    refetchInterval: 10_000,
  });
  const list = providers.data ?? [];
  const certs = useQueries({
    queries: list.map((p) => ({
      queryKey: lk.cert(p.address),
      queryFn: () => leasing().certificate(p.address),
      staleTime: 30_000,
    })),
  });
  const reps = useQueries({
    queries: list.map((p) => ({
      queryKey: lk.rep(p.address),
      queryFn: () => leasing().reputation(p.address),
      staleTime: 30_000,
    })),
  });
  return { providers, list, certs, reps };
}

function ConsumerOverview({ node }: { node: NodeLeasing | undefined }) {
  const ks = useKeystore();
  const { providers, list, certs, reps } = useProviders();
  return (
    <>
      <section className="card">
        <h2>Providers</h2>
        {providers.isLoading ? (
          <Loading what="Providers" />
        ) : providers.isError ? (
          <ErrorText error={providers.error} />
        ) : list.length === 0 ? (
          <Empty>No provider has advertised yet.</Empty>
        ) : (
          <table data-testid="providers">
            <thead>
              <tr>
                <th>Provider</th>
                <th className="num">Free vCPU</th>
                <th className="num">Free memory</th>
                <th className="num">Free disk</th>
                <th className="num">Active leases</th>
                <th className="num">Price</th>
                <th>Reputation</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p, i) => {
                const c = certs[i]?.data;
                return (
                  <tr key={p.address} data-testid="provider-row" data-address={p.address}>
                    <td className="mono" title={p.address}>
                      {short(p.address)}
                      {p.address === node?.account ? ' (this node)' : ''}
                    </td>
                    <td className="num">
                      {p.available_vcpus.toString()} / {p.vcpus.toString()}
                    </td>
                    <td className="num">
                      {p.available_memory_mb.toString()} / {p.memory_mb.toString()} MB
                    </td>
                    <td className="num">
                      {p.available_disk_gb.toString()} / {p.disk_gb.toString()} GB
                    </td>
                    <td className="num">{p.active_leases}</td>
                    <td
                      className="num"
                      data-testid="provider-multiplier"
                      data-milli={c?.price_multiplier_milli.toString()}
                    >
                      {c ? multiplierText(c.price_multiplier_milli) : 'no certificate known'}
                    </td>
                    <td className="small">{reputationText(reps[i]?.data)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
      {ks.accounts.length > 0 && (
        <NewLease
          accounts={ks.accounts}
          providers={list}
          multipliers={certs.map((c) => c.data?.price_multiplier_milli)}
          node={node}
        />
      )}
      <LeaseList accounts={ks.accounts} />
    </>
  );
}

function reputationText(r: Record<string, unknown> | undefined): string {
  if (!r) return '—';
  const parts = Object.entries(r)
    .filter(
      ([k, v]) =>
        k !== 'address' && (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string'),
    )
    .slice(0, 4)
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${String(v)}`);
  return parts.length ? parts.join(', ') : '—';
}

const DEFAULT_FORM: LeaseForm = { vcpus: '1', memory_mb: '512', disk_gb: '1', duration: '10', unit: 'min' };

function NewLease({
  accounts,
  providers,
  multipliers,
  node,
}: {
  accounts: readonly AccountInfo[];
  providers: ProviderInfo[];
  multipliers: (bigint | undefined)[];
  node: NodeLeasing | undefined;
}) {
  const qc = useQueryClient();
  const selected = settings.use().selectedAccount;
  const [account, setAccount] = useState(
    accounts.find((a) => a.address === selected)?.address ?? accounts[0]!.address,
  );
  const [form, setForm] = useState<LeaseForm>(DEFAULT_FORM);
  const bal = useBalances(account);
  const spendable = bal.data?.spendable.XUSD ?? 0n;
  const parsed = parseLeaseForm(form, node?.lease_timing?.min_duration_secs);
  // The quote: the cheapest known certificate price among providers with room, before anything is signed.
  const fitting =
    'dims' in parsed
      ? providers
          .map((p, i) => ({ p, m: multipliers[i] }))
          .filter(({ p, m }) => m !== undefined && fits(p, parsed.dims))
      : [];
  const best = fitting.reduce<bigint | undefined>(
    (a, { m }) => (a === undefined || m! < a ? m : a),
    undefined,
  );
  const quote = 'dims' in parsed && best !== undefined ? quoteLease(parsed.dims, best, spendable) : undefined;
  const [offers, setOffers] = useState<{ dims: LeaseDimensions; offers: LeaseOffer[] }>();
  const [chosen, setChosen] = useState<LeaseOffer>();
  const ask = useAction(async (dims: LeaseDimensions) => {
    setOffers(undefined);
    setChosen(undefined);
    const r = await requestOffers(account, dims);
    setOffers({ dims, offers: r.offers });
    return r;
  });
  const take = useAction(async (offer: LeaseOffer) => {
    const hash = await takeOffer(account, offer);
    setOffers(undefined);
    setChosen(undefined);
    await invalidateAccounts(qc, account);
    await qc.invalidateQueries({ queryKey: ['leasing'] });
    return hash;
  });
  const set = (k: keyof LeaseForm) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if ('dims' in parsed) void ask.run(parsed.dims);
  };
  return (
    <section className="card" data-testid="new-lease">
      <h2>New lease</h2>
      <form onSubmit={submit} className="row form-row">
        <label className="field">
          <span>Paying account</span>
          <select value={account} onChange={(e) => setAccount(e.target.value)} data-testid="lease-account">
            {accounts.map((a) => (
              <option key={a.address} value={a.address}>
                {a.label} ({short(a.address, 6)})
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>vCPUs</span>
          <input
            value={form.vcpus}
            onChange={set('vcpus')}
            size={4}
            inputMode="numeric"
            data-testid="lease-vcpus"
          />
        </label>
        <label className="field">
          <span>Memory (MB)</span>
          <input
            value={form.memory_mb}
            onChange={set('memory_mb')}
            size={7}
            inputMode="numeric"
            data-testid="lease-memory"
          />
        </label>
        <label className="field">
          <span>Disk (GB)</span>
          <input
            value={form.disk_gb}
            onChange={set('disk_gb')}
            size={5}
            inputMode="numeric"
            data-testid="lease-disk"
          />
        </label>
        <label className="field">
          <span>Duration</span>
          <span className="controls">
            <input
              value={form.duration}
              onChange={set('duration')}
              size={5}
              inputMode="numeric"
              data-testid="lease-duration"
            />
            <select value={form.unit} onChange={set('unit')} data-testid="lease-unit">
              {(Object.keys(DURATION_UNITS) as DurationUnit[]).map((u) => (
                <option key={u} value={u}>
                  {u}
                </option>
              ))}
            </select>
          </span>
        </label>
        <button
          type="submit"
          className="primary"
          disabled={!quote || quote.shortfall !== undefined || ask.busy}
          data-testid="lease-request"
        >
          {ask.busy ? 'Asking providers…' : 'Lease'}
        </button>
      </form>
      <div className="hint" data-testid="lease-quote">
        {'error' in parsed ? (
          <span className="error" data-testid="lease-form-error">
            {parsed.field}: {parsed.error}
          </span>
        ) : best === undefined ? (
          'No provider with a known price has room for this.'
        ) : (
          <>
            Quote: <Amount micro={quote!.cost} asset="XUSD" testId="quote-cost" /> at {multiplierText(best)}{' '}
            (billed per started minute) · spendable{' '}
            <Amount micro={spendable} asset="XUSD" testId="quote-spendable" />
            {quote!.shortfall !== undefined ? (
              <span className="error" data-testid="quote-shortfall">
                {' '}
                · <Amount micro={quote!.shortfall} asset="XUSD" /> short
              </span>
            ) : (
              <span data-testid="quote-ok">
                {' '}
                · after paying: <Amount micro={quote!.after} asset="XUSD" />
              </span>
            )}
          </>
        )}
      </div>
      <ErrorText error={ask.error} testId="offers-error" />
      {offers && (
        <div data-testid="offers">
          <h3>Offers (cheapest first)</h3>
          {offers.offers.length === 0 ? (
            <Empty>No provider offered within the wait. Try again, or smaller.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Provider</th>
                  <th className="num">Price</th>
                  <th className="num">Total</th>
                  <th>
                    <span className="visually-hidden">Choose</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {offers.offers.map((o) => (
                  <tr key={`${o.provider}-${o.signature}`} data-testid="offer-row" data-provider={o.provider}>
                    <td className="mono">{short(o.provider)}</td>
                    <td className="num">
                      {o.price_multiplier_milli !== undefined
                        ? multiplierText(o.price_multiplier_milli)
                        : '—'}
                    </td>
                    <td className="num">
                      <Amount micro={o.total_cost} asset="XUSD" testId="offer-cost" />
                    </td>
                    <td>
                      <button
                        type="button"
                        onClick={() => setChosen(o)}
                        disabled={o.total_cost > spendable}
                        data-testid="offer-choose"
                      >
                        {o.total_cost > spendable ? 'Not enough XUSD' : 'Choose'}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      {chosen && (
        <div className="box" data-testid="lease-confirm">
          <p>
            Lease {chosen.vcpus.toString()} vCPU, {chosen.memory_mb.toString()} MB,{' '}
            {chosen.disk_gb.toString()} GB for {spanText(chosen.duration)} from{' '}
            <span className="mono">{short(chosen.provider)}</span>: escrow{' '}
            <Amount micro={chosen.total_cost} asset="XUSD" /> from{' '}
            {accounts.find((a) => a.address === account)?.label}. A new access key for its console is made and
            kept encrypted in this keystore.
          </p>
          <div className="row">
            <button
              type="button"
              className="primary"
              disabled={take.busy}
              onClick={() => void take.run(chosen)}
              data-testid="lease-confirm-submit"
            >
              {take.busy ? 'Signing…' : 'Confirm and sign'}
            </button>
            <button type="button" onClick={() => setChosen(undefined)} disabled={take.busy}>
              Back
            </button>
          </div>
        </div>
      )}
      <ErrorText error={take.error} testId="lease-error" />
      {take.result && (
        <div className="success box" data-testid="lease-submitted" data-hash={take.result}>
          Lease submitted:{' '}
          <a href={href('leasing', 'lease', take.result)} className="mono">
            {short(take.result)}
          </a>
        </div>
      )}
    </section>
  );
}

function fits(p: ProviderInfo, d: LeaseDimensions): boolean {
  return (
    p.available_vcpus >= d.vcpus && p.available_memory_mb >= d.memory_mb && p.available_disk_gb >= d.disk_gb
  );
}

export function useMyLeases(accounts: readonly AccountInfo[]) {
  const key = accounts.map((a) => a.address).join(',');
  return useQuery({
    queryKey: lk.leases(key),
    queryFn: async () => {
      const lists = await Promise.all(accounts.map((a) => leasing().leases({ consumer: a.address })));
      return lists
        .flat()
        .sort((a, b) => (a.created_at > b.created_at ? -1 : a.created_at < b.created_at ? 1 : 0));
    },
    refetchInterval: 3000,
    enabled: accounts.length > 0,
  });
}

function LeaseList({ accounts }: { accounts: readonly AccountInfo[] }) {
  const leases = useMyLeases(accounts);
  const now = useNow();
  return (
    <section className="card">
      <h2>Your leases</h2>
      {leases.isLoading ? (
        <Loading what="Leases" />
      ) : leases.isError ? (
        <ErrorText error={leases.error} />
      ) : (leases.data ?? []).length === 0 ? (
        <Empty>No leases yet.</Empty>
      ) : (
        <table data-testid="leases">
          <thead>
            <tr>
              <th>Lease</th>
              <th>State</th>
              <th>Resources</th>
              <th>Expires</th>
              <th className="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {leases.data!.map((l) => {
              const alert = expiryAlert(l, now);
              return (
                <tr key={l.lease_hash} data-testid="lease-row" data-hash={l.lease_hash} data-state={l.state}>
                  <td>
                    <a
                      href={href('leasing', 'lease', l.lease_hash)}
                      className="mono"
                      data-testid="lease-link"
                    >
                      {short(l.lease_hash)}
                    </a>
                  </td>
                  <td>
                    <span className={`badge state-${l.state}`} data-testid="lease-state">
                      {l.state}
                    </span>
                  </td>
                  <td className="small">
                    {l.vcpus.toString()} vCPU · {l.memory_mb.toString()} MB · {l.disk_gb.toString()} GB
                  </td>
                  <td className={alert ? 'error' : ''}>
                    <Countdown lease={l} now={now} />
                  </td>
                  <td className="num">
                    <Amount micro={l.cost} asset="XUSD" />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Countdown({ lease, now }: { lease: LeaseInfo; now: bigint }) {
  const expiry = leaseExpiry(lease);
  if (lease.state === 'created') return <span className="muted">waiting for the provider</span>;
  if (expiry === undefined || lease.state !== 'accepted') return <span className="muted">—</span>;
  if (now >= expiry)
    return <span data-testid="countdown">expired {spanText((now - expiry) / NS_PER_SEC)} ago</span>;
  return <span data-testid="countdown">in {spanText((expiry - now) / NS_PER_SEC)}</span>;
}

// ---- a lease ---------------------------------------------------------------------------------------

const LEASE_TABS = [
  { id: 'details', label: 'Details' },
  { id: 'console', label: 'Console' },
  { id: 'renewals', label: 'Renewals' },
] as const;

function LeaseDetail({ hash, tab, node }: { hash: string; tab: string; node: NodeLeasing | undefined }) {
  const q = useQuery({
    queryKey: lk.lease(hash),
    queryFn: () => leasing().lease(hash),
    refetchInterval: 2000,
  });
  const ks = useKeystore();
  const now = useNow();
  if (q.isLoading) return <Loading what="Lease" />;
  if (q.isError) return <ErrorText error={q.error} />;
  const lease = q.data;
  if (!lease) return <Empty>No lease {short(hash)} on this node.</Empty>;
  const mine = ks.accounts.some((a) => a.address === lease.consumer);
  const alert = expiryAlert(lease, now);
  return (
    <div data-testid="lease-detail" data-state={lease.state} data-hash={lease.lease_hash}>
      <div className="row between">
        <h2 className="mono">Lease {short(lease.lease_hash)}</h2>
        <span className={`badge state-${lease.state}`} data-testid="lease-detail-state">
          {lease.state}
        </span>
      </div>
      {alert && (
        <div className="error box" role="alert" data-testid="lease-alert">
          {alert.level === 'expired'
            ? 'This lease has run out.'
            : `This lease runs out in ${spanText(alert.secondsLeft)}: renew it or turn on hold.`}
        </div>
      )}
      <nav className="tabs" aria-label="Lease">
        {LEASE_TABS.map((t) => (
          <a
            key={t.id}
            href={href('leasing', 'lease', hash, t.id)}
            className={`tab${tab === t.id ? ' active' : ''}`}
            data-testid={`lease-tab-${t.id}`}
          >
            {t.label}
          </a>
        ))}
      </nav>
      {tab === 'console' ? (
        lease.state !== 'accepted' ? (
          <Empty>The console opens once the provider has accepted the lease (it is {lease.state}).</Empty>
        ) : !lease.access_pub_key || !ks.accounts.length ? (
          <Empty>This lease has no access key.</Empty>
        ) : (
          <Suspense fallback={<Loading what="Terminal" />}>
            <VmConsole leaseHash={lease.lease_hash} accessPub={lease.access_pub_key} />
          </Suspense>
        )
      ) : tab === 'renewals' ? (
        <Renewals lease={lease} mine={mine} node={node} now={now} />
      ) : (
        <Details lease={lease} mine={mine} node={node} now={now} />
      )}
    </div>
  );
}

function Details({
  lease,
  mine,
  node,
  now,
}: {
  lease: LeaseInfo;
  mine: boolean;
  node: NodeLeasing | undefined;
  now: bigint;
}) {
  const qc = useQueryClient();
  const acts = leaseActions(lease, now, node?.lease_timing);
  const cancel = useAction(async () => {
    const h = await cancelLease(lease);
    await qc.invalidateQueries({ queryKey: ['leasing'] });
    await invalidateAccounts(qc, lease.consumer);
    return h;
  });
  const force = useAction(async () => {
    const h = await forceSettleLease(lease);
    await qc.invalidateQueries({ queryKey: ['leasing'] });
    await invalidateAccounts(qc, lease.consumer);
    return h;
  });
  const expiry = leaseExpiry(lease);
  return (
    <>
      <dl className="card grid2">
        <dt>Consumer</dt>
        <dd className="mono">{lease.consumer}</dd>
        <dt>Provider</dt>
        <dd className="mono">{lease.provider}</dd>
        <dt>Resources</dt>
        <dd>
          {lease.vcpus.toString()} vCPU · {lease.memory_mb.toString()} MB · {lease.disk_gb.toString()} GB
        </dd>
        <dt>Duration</dt>
        <dd data-testid="lease-duration-secs" data-secs={lease.duration.toString()}>
          {spanText(lease.duration)} ({lease.renewal_count.toLocaleString('en')} renewal
          {lease.renewal_count === 1 ? '' : 's'})
        </dd>
        <dt>Cost (escrowed)</dt>
        <dd>
          <Amount micro={lease.cost} asset="XUSD" testId="lease-cost" />
        </dd>
        <dt>Started</dt>
        <dd>{lease.start_time === 0n ? 'not yet accepted' : timeOf(lease.start_time)}</dd>
        <dt>Expires</dt>
        <dd>
          {expiry !== undefined ? (
            <>
              {timeOf(expiry)} <Countdown lease={lease} now={now} />
            </>
          ) : lease.state === 'created' ? (
            <Countdown lease={lease} now={now} />
          ) : (
            '—'
          )}
        </dd>
      </dl>
      {mine && (
        <section className="card" data-testid="lease-actions">
          <h3>Actions</h3>
          <div className="row">
            <button
              type="button"
              disabled={!acts.cancel.ok || cancel.busy}
              onClick={() => void cancel.run()}
              data-testid="cancel-button"
            >
              {cancel.busy ? 'Cancelling…' : 'Cancel'}
            </button>
            <span className="small muted">
              {acts.cancel.ok ? (
                <>
                  refunds <Amount micro={lease.cost} asset="XUSD" />
                </>
              ) : (
                acts.cancel.why
              )}
            </span>
          </div>
          <div className="row">
            <button
              type="button"
              disabled={!acts.forceSettle.ok || force.busy}
              onClick={() => void force.run()}
              data-testid="force-settle-button"
            >
              {force.busy ? 'Force-settling…' : 'Force-settle'}
            </button>
            <span className="small muted" data-testid="force-settle-note">
              {acts.forceSettle.ok ? (
                <>
                  refunds <Amount micro={lease.cost} asset="XUSD" /> (the provider never settled)
                </>
              ) : acts.forceSettle.from !== undefined ? (
                `${acts.forceSettle.why}: from ${timeOf(acts.forceSettle.from)} to ${timeOf(acts.forceSettle.until!)}`
              ) : (
                acts.forceSettle.why
              )}
            </span>
          </div>
          <div className="small muted">Renew and hold: see the Renewals tab.</div>
          <ErrorText error={cancel.error ?? force.error} testId="lease-action-error" />
          {(cancel.result ?? force.result) && (
            <div className="success box" data-testid="lease-action-done">
              Submitted {short(cancel.result ?? force.result)}
            </div>
          )}
        </section>
      )}
    </>
  );
}

function Renewals({
  lease,
  mine,
  node,
  now,
}: {
  lease: LeaseInfo;
  mine: boolean;
  node: NodeLeasing | undefined;
  now: bigint;
}) {
  const qc = useQueryClient();
  const [ext, setExt] = useState('5');
  const [unit, setUnit] = useState<DurationUnit>('min');
  const cert = useQuery({
    queryKey: lk.cert(lease.provider),
    queryFn: () => leasing().certificate(lease.provider),
  });
  const bal = useBalances(lease.consumer);
  const spendable = bal.data?.spendable.XUSD ?? 0n;
  const acts = leaseActions(lease, now, node?.lease_timing);
  const extSecs = /^[0-9]{1,9}$/.test(ext.trim()) ? BigInt(ext.trim()) * DURATION_UNITS[unit] : undefined;
  const problem =
    extSecs === undefined
      ? 'a whole number'
      : renewalProblem(lease, extSecs, node?.lease_timing?.min_duration_secs);
  const cost =
    cert.data && extSecs !== undefined && !problem
      ? renewalCost(lease, extSecs, cert.data.price_multiplier_milli)
      : undefined;
  const renew = useAction(async (secs: bigint) => {
    const r = await renewLease(lease, secs);
    await qc.invalidateQueries({ queryKey: ['leasing'] });
    await invalidateAccounts(qc, lease.consumer);
    return r;
  });
  const holds = holdStore.use();
  const hold = holdOf(holds, lease.lease_hash);
  const segment = hold?.segmentSecs ?? extSecs ?? 300n;
  const segCost = cert.data ? safeCost(lease, segment, cert.data.price_multiplier_milli) : undefined;
  const decision =
    segCost !== undefined
      ? holdDecision({ lease, now, setting: hold, spendable, segmentCost: segCost })
      : undefined;
  return (
    <>
      {mine && (
        <section className="card" data-testid="renew-section">
          <h3>Renew</h3>
          <form
            className="row form-row"
            onSubmit={(e) => {
              e.preventDefault();
              if (extSecs !== undefined && !problem) void renew.run(extSecs);
            }}
          >
            <label className="field">
              <span>Extend by</span>
              <span className="controls">
                <input
                  value={ext}
                  onChange={(e) => setExt(e.target.value)}
                  size={5}
                  data-testid="renew-duration"
                />
                <select
                  value={unit}
                  onChange={(e) => setUnit(e.target.value as DurationUnit)}
                  data-testid="renew-unit"
                >
                  {(Object.keys(DURATION_UNITS) as DurationUnit[]).map((u) => (
                    <option key={u} value={u}>
                      {u}
                    </option>
                  ))}
                </select>
              </span>
            </label>
            <button
              type="submit"
              className="primary"
              disabled={!acts.renew.ok || cost === undefined || cost > spendable || renew.busy}
              data-testid="renew-button"
            >
              {renew.busy ? 'Renewing…' : 'Renew'}
            </button>
            <span className="small" data-testid="renew-note">
              {!acts.renew.ok ? (
                acts.renew.why
              ) : problem ? (
                problem
              ) : cost === undefined ? (
                'the provider’s current price is not known'
              ) : (
                <>
                  costs <Amount micro={cost} asset="XUSD" testId="renew-cost" /> at the provider’s current
                  price {multiplierText(cert.data!.price_multiplier_milli)}
                  {cost > spendable ? ' · not enough spendable XUSD' : ''}
                </>
              )}
            </span>
          </form>
          <ErrorText error={renew.error} testId="renew-error" />
          {renew.result && (
            <div className="success box" data-testid="renew-done">
              Renewed for <Amount micro={renew.result.cost} asset="XUSD" />
            </div>
          )}
          <h3 className="after-row">Hold</h3>
          {/* The sentence in one span: as flex items, its pieces would each stand apart by the gap. */}
          <label className="check">
            <input
              type="checkbox"
              checked={hold?.enabled === true}
              onChange={(e) => setHold(lease.lease_hash, { enabled: e.target.checked, segmentSecs: segment })}
              data-testid="hold-toggle"
            />
            <span>
              While this app runs, renew by {spanText(segment)}, {spanText(holdLeadSecs(segment))} before it
              runs out
              {segCost !== undefined && (
                <>
                  {' '}
                  (<Amount micro={segCost} asset="XUSD" /> each time)
                </>
              )}
            </span>
          </label>
          <div className="small" data-testid="hold-status">
            {decision?.kind === 'wait'
              ? `next renewal at ${timeOf(decision.at)}`
              : decision?.kind === 'low-funds'
                ? 'not enough spendable XUSD for the next renewal'
                : decision?.kind === 'renew'
                  ? 'renewing…'
                  : decision?.kind === 'off'
                    ? 'Hold is off'
                    : (decision?.kind ?? '')}
            {decision?.kind === 'wait' && decision.lowFunds && (
              <span className="error" data-testid="hold-low-funds">
                {' '}
                · low funds: the next renewal needs more XUSD than is spendable
              </span>
            )}
          </div>
        </section>
      )}
      <RenewalHistory lease={lease} />
    </>
  );
}

function safeCost(lease: LeaseInfo, secs: bigint, m: bigint): bigint | undefined {
  try {
    return renewalCost(lease, secs, m);
  } catch {
    return undefined;
  }
}

// ---- provider side -----------------------------------------------------------------------------------

function ProviderSection({ node }: { node: NodeLeasing | undefined }) {
  const vms = useQuery({ queryKey: lk.vms, queryFn: () => leasing().vms(), refetchInterval: 3000 });
  const account = node?.account ?? '';
  const leases = useQuery({
    queryKey: lk.providerLeases(account),
    queryFn: () => leasing().leases({ provider: account }),
    enabled: account !== '',
    refetchInterval: 5000,
  });
  const p = node?.provider;
  const earnings = useMemo(() => {
    let paid = 0n;
    let escrowed = 0n;
    for (const l of leases.data ?? []) {
      if (l.state === 'settled') paid += l.emission ?? 0n;
      else if (l.state === 'accepted') escrowed += l.cost;
    }
    return { paid, escrowed };
  }, [leases.data]);
  if (!node) return <Loading what="Node" />;
  const used = (vms.data ?? []).filter((v) => v.status === 'running' || v.status === 'creating');
  const usedV = used.reduce((a, v) => a + v.vcpus, 0n);
  const usedM = used.reduce((a, v) => a + v.memory_mb, 0n);
  const usedD = used.reduce((a, v) => a + v.disk_gb, 0n);
  return (
    <div data-testid="provider-section" data-enabled={String(p?.enabled === true)}>
      {!p?.enabled && (
        <div className="hint box" data-testid="not-provider">
          This node is not a provider{p?.detail ? `: ${p.detail}` : ''}. Start it with --provide (capacity
          with --vcpus, --memory, --disk) to offer compute.
        </div>
      )}
      <section className="card">
        <h2>Certificate</h2>
        <div data-testid="provider-certificate" data-valid={String(node.certificate.valid)}>
          {node.certificate.valid
            ? `valid until ${timeOf(node.certificate.expires_at ?? 0n)} (${short(node.certificate.hash)})`
            : 'no valid certificate yet'}
        </div>
        <div className="row small meter" data-testid="benchmark">
          <span>
            Benchmark: {node.benchmark.state}
            {node.benchmark.state === 'running' ? ` ${Math.round(node.benchmark.progress * 100)} %` : ''}
            {node.benchmark.error ? ` (${node.benchmark.error})` : ''}
          </span>
          <progress value={node.benchmark.progress} max={1} />
        </div>
      </section>
      {p?.enabled && (
        <section className="card" data-testid="provider-capacity">
          <h2>Capacity</h2>
          <div className="small">
            Driver: {p.driver ?? 'unknown'}
            {p.vm_boundary === false && (
              <span className="badge error spaced" data-testid="no-vm-boundary">
                no VM boundary
              </span>
            )}
          </div>
          {p.capacity && (
            <div>
              <Meter label="vCPU" used={usedV} total={p.capacity.vcpus} />
              <Meter label="Memory (MB)" used={usedM} total={p.capacity.memory_mb} />
              <Meter label="Disk (GB)" used={usedD} total={p.capacity.disk_gb} />
            </div>
          )}
        </section>
      )}
      <section className="card">
        <h2>VMs</h2>
        {(vms.data ?? []).length === 0 ? (
          <Empty>No VMs.</Empty>
        ) : (
          <table data-testid="vms">
            <thead>
              <tr>
                <th>Lease</th>
                <th>Status</th>
                <th>Resources</th>
                <th>Driver</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {vms.data!.map((v) => (
                <tr key={v.lease} data-testid="vm-row" data-status={v.status}>
                  <td className="mono">{short(v.lease)}</td>
                  <td>
                    {v.status}
                    {v.error ? ` (${v.error})` : ''}
                  </td>
                  <td className="small">
                    {v.vcpus.toString()} vCPU · {v.memory_mb.toString()} MB · {v.disk_gb.toString()} GB
                  </td>
                  <td>
                    {v.driver ?? '—'}
                    {v.vm_boundary === false && <span className="badge error spaced">no VM boundary</span>}
                  </td>
                  <td>{timeOf(v.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card">
        <h2>Earnings</h2>
        <div>
          Paid by settles: <Amount micro={earnings.paid} asset="XE" testId="earnings-settled" /> · running
          leases’ escrow: <Amount micro={earnings.escrowed} asset="XUSD" testId="earnings-escrowed" />
        </div>
        <div className="small muted">
          {(leases.data ?? []).length} lease(s) with this node as provider; settles pay the XE emission.
        </div>
      </section>
    </div>
  );
}

function Meter({ label, used, total }: { label: string; used: bigint; total: bigint }) {
  const pct = total === 0n ? 0 : Number((used * 100n) / total);
  return (
    <div className="row small meter" data-testid="meter">
      <span className="meter-label">{label}</span>
      <progress value={pct} max={100} />
      <span className="meter-value">
        {used.toString()} / {total.toString()}
      </span>
    </div>
  );
}

/** Renewals a page of the history shows. */
const RENEWALS_PAGE = 50;

/**
 * A lease's renewals, a page at a time, the latest page first: a lease kept by a renewal a minute
 * has 10,080 after a week, and the lease itself carries only the latest (GET /leases/{hash}/renewals
 * pages the rest).
 */
function RenewalHistory({ lease }: { lease: LeaseInfo }) {
  const total = lease.renewal_count;
  // undefined: the latest page, which follows new renewals as they come.
  const [offset, setOffset] = useState<number | undefined>(undefined);
  const latest = Math.max(0, total - RENEWALS_PAGE);
  const at = Math.min(offset ?? latest, latest);
  const inline = total <= lease.renewals.length;
  const page = useQuery({
    queryKey: [...lk.lease(lease.lease_hash), 'renewals', at, total],
    queryFn: async () => ({ at, page: await leasing().renewals(lease.lease_hash, at, RENEWALS_PAGE) }),
    enabled: !inline,
    placeholderData: keepPreviousData,
  });
  // The page on screen: the previous one stays while the next loads, with its own place.
  const shown = inline ? 0 : (page.data?.at ?? at);
  const rows = inline ? lease.renewals : (page.data?.page?.renewals ?? []);
  const go = (to: number) => setOffset(to >= latest ? undefined : Math.max(0, to));
  return (
    <section className="card">
      <h3>Renewals</h3>
      {total === 0 ? (
        <Empty>None yet.</Empty>
      ) : !inline && page.isPending ? (
        <Loading what="Renewals" />
      ) : !inline && page.error ? (
        <ErrorText error={page.error} />
      ) : (
        <>
          {!inline && (
            <div className="row between small">
              <span data-testid="renewals-range">
                {(shown + 1).toLocaleString('en')}-{(shown + rows.length).toLocaleString('en')} of{' '}
                {total.toLocaleString('en')}
              </span>
              <span className="row" style={{ gap: 4 }}>
                <button type="button" disabled={at === 0} onClick={() => go(at - RENEWALS_PAGE)}>
                  Earlier
                </button>
                <button
                  type="button"
                  disabled={at >= latest}
                  onClick={() => go(at + RENEWALS_PAGE)}
                  data-testid="renewals-later"
                >
                  Later
                </button>
              </span>
            </div>
          )}
          <table data-testid="renewals">
            <thead>
              <tr>
                <th>Renewal</th>
                <th>At</th>
                <th className="num">Extension</th>
                <th className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.renew_hash} data-testid="renewal-row">
                  <td className="mono">{short(r.renew_hash)}</td>
                  <td>{timeOf(r.start_time)}</td>
                  <td className="num">{spanText(r.duration)}</td>
                  <td className="num">
                    <Amount micro={r.cost} asset="XUSD" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
