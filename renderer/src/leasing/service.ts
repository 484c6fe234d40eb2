import { LeasingClient, type LeaseInfo, type LeaseOffer } from '../../../node-core/client/leasing.ts';
import type { LeaseDimensions } from '../../../node-core/protocol/lease-cost.ts';
import { marketplaceRequestId } from '../../../node-core/protocol/marketplace.ts';
import { api } from '../api.ts';
import { keystore } from '../keystore/index.ts';
import { windowDoc } from '../window-store/index.ts';
import { accountWriter } from '../wallet/context.ts';
import { lockedParamsAt, renewalCost } from './quote.ts';
import type { HoldSetting } from './hold.ts';

/**
 * The Leasing page's writes: ask for offers with a request the user's account signs, take an offer
 * (a fresh access key in the keystore, then the `lease` block), renew, cancel and force-settle with
 * the user's key; the node gathers offers and attestations and signs nothing.
 */

let leasingClient: LeasingClient | undefined;
export function leasing(): LeasingClient {
  leasingClient ??= new LeasingClient(api());
  return leasingClient;
}

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** How long the node waits for offers. */
export const OFFER_WAIT_MS = 5000;

export async function requestOffers(
  account: string,
  dims: LeaseDimensions,
): Promise<{ request_id: string; offers: LeaseOffer[] }> {
  const info = await api().node();
  const ts = nowNs();
  const ks = keystore();
  const request = ks.signMarketplaceRequest(
    account,
    {
      consumer: account,
      consumer_pub_key: ks.publicKeyOf(account),
      request_id: marketplaceRequestId(account, ts),
      vcpus: dims.vcpus,
      memory_mb: dims.memory_mb,
      disk_gb: dims.disk_gb,
      duration: dims.duration,
      timestamp: ts,
    },
    info.network_id,
  );
  return leasing().offers(request, OFFER_WAIT_MS);
}

/** Takes an offer: a new access key, stored encrypted first, then the signed, solved `lease` block. */
export async function takeOffer(account: string, offer: LeaseOffer): Promise<string> {
  const ks = keystore();
  const pub = ks.newAccessKey();
  try {
    const block = await accountWriter().lease(
      account,
      {
        provider: offer.provider,
        cost: offer.total_cost,
        vcpus: offer.vcpus,
        memory_mb: offer.memory_mb,
        disk_gb: offer.disk_gb,
        duration: offer.duration,
        access_pub_key: pub,
        certificate_hash: offer.certificate_hash,
      },
      `lease ${offer.vcpus} vCPU for ${offer.duration} s`,
    );
    ks.bindAccessKey(pub, block.hash!);
    return block.hash!;
  } catch (e) {
    ks.dropAccessKey(pub);
    throw e;
  }
}

/** Renews by `extensionSecs` at the provider's current certificate; resolves with the renew hash and cost. */
export async function renewLease(
  lease: LeaseInfo,
  extensionSecs: bigint,
): Promise<{ hash: string; cost: bigint }> {
  const l = leasing();
  const cert = await l.certificate(lease.provider);
  if (!cert) throw new Error('the provider has no certificate this node knows: it cannot be renewed now');
  const cost = renewalCost(lease, extensionSecs, cert.price_multiplier_milli);
  const [att, epochs] = await Promise.all([l.attestations(lease.lease_hash), l.epochs()]);
  const locked = lockedParamsAt(epochs, att.median);
  const block = await accountWriter().renewLease(
    lease.consumer,
    {
      lease_hash: lease.lease_hash,
      cost,
      duration: extensionSecs,
      certificate_hash: cert.hash,
      attestations: att.attestations,
      ...locked,
    },
    `renew lease ${lease.lease_hash.slice(0, 8)} by ${extensionSecs} s`,
  );
  return { hash: block.hash!, cost };
}

export async function cancelLease(lease: LeaseInfo): Promise<string> {
  const block = await accountWriter().cancelLease(
    lease.consumer,
    lease.lease_hash,
    lease.cost,
    `cancel lease ${lease.lease_hash.slice(0, 8)}`,
  );
  return block.hash!;
}

export async function forceSettleLease(lease: LeaseInfo): Promise<string> {
  const att = await leasing().attestations(lease.lease_hash);
  const block = await accountWriter().forceSettleLease(
    lease.consumer,
    lease.lease_hash,
    lease.cost,
    att.attestations,
    `force-settle lease ${lease.lease_hash.slice(0, 8)}`,
  );
  return block.hash!;
}

// ---- hold settings (per lease, in local settings; no secrets) ------------------------------------

type StoredHolds = Record<string, { enabled: boolean; segmentSecs: string }>;

export const holdStore = windowDoc<StoredHolds>('lease_holds', {}, (v) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const out: StoredHolds = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const o = x as { enabled?: unknown; segmentSecs?: unknown };
    if (/^[0-9a-f]{64}$/.test(k) && typeof o?.segmentSecs === 'string' && /^[0-9]{1,12}$/.test(o.segmentSecs))
      out[k] = { enabled: o.enabled === true, segmentSecs: o.segmentSecs };
  }
  return out;
});

export function holdOf(holds: StoredHolds, lease: string): HoldSetting | undefined {
  const h = holds[lease];
  return h ? { enabled: h.enabled, segmentSecs: BigInt(h.segmentSecs) } : undefined;
}

export function setHold(lease: string, setting: HoldSetting): void {
  holdStore.set((all) => ({
    ...all,
    [lease]: { enabled: setting.enabled, segmentSecs: setting.segmentSecs.toString() },
  }));
}
