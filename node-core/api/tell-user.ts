import { STATUS_CODES } from '../cjs-packages.ts';
import { formatUnits } from '../protocol/units.ts';
import type { ApiRequest, RouteDef, TellUser } from './route-table.ts';

/**
 * `tell_user` (contract, Announced agent verbs; decisions D13; issue #14): every 2xx JSON object a
 * mutating route answers in the proxy form carries a one-line summary a person can read ("Sent 2.5
 * XE to 3f9a…c1; final once the representatives vote"). The routes give their own (RouteDef.tellUser,
 * most of them built here); proxy.ts adds the field. Nothing here reads a clock or invents a figure:
 * finality is said as the node knows it (final already, or once the representatives vote).
 */

export const TELL_USER_FIELD = 'tell_user';
/** The longest summary; a longer one is cut with "…". */
export const TELL_USER_MAX = 200;

// ---- formatting (isomorphic: no Node API below this line but in genericTellUser) -------------------

/**
 * Micro-units as a person reads them, exactly (bigint, never a float): at most 6 decimals, no trailing
 * zeros, thousands grouped with commas, the asset after ("1,000 XE", "0.000001 XUSD", "2.5 XE").
 */
export function formatAmount(micro: bigint, asset?: string): string {
  const s = formatUnits(micro);
  const neg = s.startsWith('-');
  const [whole = '0', frac] = (neg ? s.slice(1) : s).split('.');
  const n = `${neg ? '-' : ''}${group(whole)}${frac === undefined ? '' : `.${frac}`}`;
  return asset === undefined || asset === '' ? n : `${n} ${asset}`;
}

/** Digits grouped by thousands with commas ("1234567" to "1,234,567"). */
const group = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A whole number with thousands grouped ("1,024"). */
export function formatCount(n: bigint | number): string {
  const b = BigInt(n);
  return b < 0n ? `-${group((-b).toString())}` : group(b.toString());
}

/** An address, key or hash shortened for a sentence: its first 4 and last 2 characters ("3f9a…c1"). */
export function shortId(id: string): string {
  return id.length <= 8 ? id : `${id.slice(0, 4)}…${id.slice(-2)}`;
}

/** A JSON integer as the lossless parser or a handler gives it: bigint, safe number or digits. */
export function intOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?[0-9]{1,40}$/.test(v)) return BigInt(v);
  return undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function plural(n: bigint | number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${BigInt(n) === 1n ? one : many}`;
}

/** Seconds in the largest whole unit: "1 minute", "90 seconds", "2 hours", "30 days". */
export function formatDuration(seconds: bigint): string {
  for (const [unit, s] of [
    ['day', 86_400n],
    ['hour', 3_600n],
    ['minute', 60n],
  ] as const) {
    if (seconds >= s && seconds % s === 0n) return plural(seconds / s, unit);
  }
  return plural(seconds, 'second');
}

/** Unix nanoseconds as an ISO 8601 UTC time to the second ("2025-03-01T12:00:00Z"). */
export function formatTimeNs(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const d = new Date(Number(ms));
  return Number.isNaN(d.getTime()) ? `${ns} ns` : `${d.toISOString().slice(0, 19)}Z`;
}

/** One line of at most `max` characters: line breaks and tabs become spaces, a longer one is cut with "…". */
export function oneLine(text: string, max = TELL_USER_MAX): string {
  const line = text
    .replace(/[\s\u2028\u2029]+/g, ' ')
    .replace(/\p{Cc}/gu, '')
    .trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** The line of a mutating route without its own summary: what it did, from its description and status. */
export function genericTellUser(description: string, status: number): string {
  const what = description.replace(/\s*\(.*$/, '').trim();
  return oneLine(`Done (${status} ${STATUS_CODES[status] ?? 'OK'}): ${what}`);
}

// ---- the route-table side --------------------------------------------------------------------------

/** Whether the proxy form adds `tell_user` to the route's answers: a mutating route not marked false. */
export function tellsUser(route: Pick<RouteDef, 'method' | 'tellUser'>): boolean {
  return route.method !== 'GET' && route.tellUser !== false;
}

/** The route's summary in its object form, or undefined (generic line). */
export function tellUserOf(route: Pick<RouteDef, 'tellUser'>): TellUser | undefined {
  const t = route.tellUser;
  if (t === undefined || t === false) return undefined;
  return typeof t === 'function' ? { text: t } : t;
}

/** The description of the field in the OpenAPI and discovery documents. */
export const TELL_USER_DESCRIPTION = `one line a person can read saying what the call did (at most ${TELL_USER_MAX} characters; proxy form, successful answers of mutating routes)`;

export const TELL_USER_SCHEMA = {
  type: 'string',
  maxLength: TELL_USER_MAX,
  description: TELL_USER_DESCRIPTION,
} as const;

// ---- finality --------------------------------------------------------------------------------------

/** What the block summaries read of the ledger (LedgerNode's ledger satisfies it). */
export interface LedgerView {
  getBlock(
    hash: string,
  ): { block: { account: string; amount?: bigint; asset: string }; finalized: boolean } | undefined;
  getAccount(address: string): { representative?: string } | undefined;
}

export const FINAL_ALREADY = 'final already';
export const FINAL_ON_VOTES = 'final once the representatives vote';

/** How final the block `hash` is, as this node knows it right now. */
export function finalityOf(ledger: Pick<LedgerView, 'getBlock'>, hash: unknown): string {
  const h = str(hash);
  return h !== undefined && ledger.getBlock(h.toLowerCase())?.finalized === true
    ? FINAL_ALREADY
    : FINAL_ON_VOTES;
}

// ---- blocks ----------------------------------------------------------------------------------------

type Fields = Readonly<Record<string, unknown>>;

function amountText(b: Fields): string | undefined {
  const a = intOf(b.amount);
  return a === undefined ? undefined : formatAmount(a, str(b.asset));
}

function resources(b: Fields): string {
  const parts: string[] = [];
  const v = intOf(b.vcpus);
  const m = intOf(b.memory_mb);
  const d = intOf(b.disk_gb);
  if (v !== undefined && v > 0n) parts.push(plural(v, 'vCPU'));
  if (m !== undefined && m > 0n) parts.push(`${formatCount(m)} MB memory`);
  if (d !== undefined && d > 0n) parts.push(`${formatCount(d)} GB disk`);
  return parts.length === 0 ? 'compute' : parts.join(', ');
}

function keysetText(b: Fields): string {
  const ks = b.keyset as { keys?: unknown; threshold?: unknown } | undefined;
  const n = Array.isArray(ks?.keys) ? ks.keys.length : undefined;
  const t = intOf(ks?.threshold);
  return n === undefined || t === undefined ? 'a multisig keyset' : `${t}-of-${n}`;
}

/** What a block does, without finality: "Sent 2.5 XE to 3f9a…c1". */
export function blockCore(b: Fields, ledger: Pick<LedgerView, 'getBlock'>): string {
  const amount = amountText(b);
  const account = str(b.account);
  const src = str(b.source);
  const lease = src === undefined ? 'the lease' : `lease ${shortId(src)}`;
  const dur = intOf(b.duration);
  switch (b.type) {
    case 'send': {
      const to = str(b.destination);
      return `Sent ${amount ?? 'funds'}${to === undefined ? '' : ` to ${shortId(to)}`}`;
    }
    case 'receive': {
      const send = src === undefined ? undefined : ledger.getBlock(src.toLowerCase())?.block;
      if (send === undefined) return `Received the send ${src === undefined ? '' : shortId(src)}`.trim();
      const got = amountText({ amount: send.amount, asset: send.asset }) ?? 'funds';
      return `Received ${got} from ${shortId(send.account)}`;
    }
    case 'claim':
      return `Claimed ${amount ?? 'funds'}`;
    case 'burn':
      return `Burned ${amount ?? 'funds'}`;
    case 'mint':
      return `Minted ${amount ?? 'funds'}`;
    case 'lease': {
      const to = str(b.destination);
      return (
        `Leased ${resources(b)}${dur === undefined ? '' : ` for ${formatDuration(dur)}`}` +
        `${to === undefined ? '' : ` from provider ${shortId(to)}`}` +
        `${amount === undefined ? '' : `, ${amount} in escrow`}`
      );
    }
    case 'lease_accept':
      return `Accepted ${lease}`;
    case 'lease_renew':
      return (
        `Renewed ${lease}${dur === undefined ? '' : ` for ${formatDuration(dur)} more`}` +
        `${amount === undefined ? '' : `, ${amount} in escrow`}`
      );
    case 'lease_settle':
      return `Settled ${lease}${amount === undefined || intOf(b.amount) === 0n ? '' : `, earning ${amount}`}`;
    case 'lease_cancel':
      return `Cancelled ${lease}; its escrow is refunded`;
    case 'lease_force_settle':
      return `Force-settled ${lease}`;
    case 'multisig_open':
      return `Opened ${account === undefined ? 'an account' : shortId(account)} as a ${keysetText(b)} multisig account`;
    case 'multisig_update':
      return `Changed the keyset of ${account === undefined ? 'the account' : shortId(account)} to ${keysetText(b)}`;
    default:
      return `Recorded the ${String(b.type)} block`;
  }
}

interface BlockBefore {
  /** The block was already in the ledger: a duplicate. */
  known: boolean;
  /** The account's representative before the block. */
  representative?: string;
}

/**
 * The summary of `POST /blocks/{type}`: 201 a new block (what it did, a change of representative,
 * its finality), 201 a duplicate ("already recorded"), 202 a rival staged in a conflict.
 */
export function blockTellUser(ledger: LedgerView): TellUser {
  return {
    before(req): BlockBefore {
      const b = req.body as Fields;
      const hash = str(b.hash)?.toLowerCase();
      const account = str(b.account)?.toLowerCase();
      return {
        known: hash !== undefined && ledger.getBlock(hash) !== undefined,
        representative: account === undefined ? undefined : ledger.getAccount(account)?.representative,
      };
    },
    text(answer, req, reply, before) {
      const prior = before as BlockBefore | undefined;
      const body = req.body as Fields;
      const type = str(body.type) ?? req.url.split('?')[0]!.split('/').pop();
      if (reply.statusCode === 202 || answer.status === 'conflict') {
        const core = blockCore({ ...body, type }, ledger);
        return `${core}: staged as a rival of another block at the same place in the chain of ${shortId(str(body.account) ?? '')}; the representatives' votes decide which one stays`;
      }
      const core = blockCore(answer, ledger);
      const finality = finalityOf(ledger, answer.hash);
      if (prior?.known === true) return `Already recorded, nothing changed: ${core}; ${finality}`;
      const rep = str(answer.representative);
      const delegation =
        rep !== undefined && rep !== prior?.representative ? `, delegating to ${shortId(rep)}` : '';
      return `${core}${delegation}; ${finality}`;
    },
  };
}

// ---- chat and directory ----------------------------------------------------------------------------

export function chatSendTellUser(answer: Fields, req: ApiRequest): string {
  const to = str((req.body as Fields | undefined)?.to);
  const who = to === undefined ? 'the recipient' : shortId(to);
  const error = str(answer.error);
  switch (answer.delivery) {
    case 'local':
      return `Message delivered to ${who}, whose account is on this node`;
    case 'delivered':
      return `Message handed to the node of ${who}`;
    case 'queued':
      return `Message to ${who} queued: their node has not taken it yet, and this node retries until it does`;
    case 'failed':
      return `Message to ${who} not delivered${error === undefined ? '' : ` (${error})`}; retry it with POST /chat/messages/{id}/retry`;
    default:
      return `Message to ${who} accepted`;
  }
}

export function chatRetryTellUser(answer: Fields): string {
  const id = str(answer.id);
  const msg = `Retried message ${id === undefined ? '' : shortId(id)}`.trim();
  const error = str(answer.error);
  switch (answer.delivery) {
    case 'delivered':
      return `${msg}: the recipient's node took it`;
    case 'queued':
      return `${msg}: still queued, and this node keeps retrying`;
    case 'failed':
      return `${msg}: not delivered${error === undefined ? '' : ` (${error})`}`;
    default:
      return `${msg}: back in the outbox`;
  }
}

export function directoryRegisterTellUser(_answer: Fields, req: ApiRequest): string {
  const b = (req.body ?? {}) as Fields;
  const account = str(b.account) ?? str(b.pub_key);
  const peer = str(b.node_peer);
  return `Registered ${account === undefined ? 'the account' : shortId(account)} in the directory as served by node ${peer === undefined ? '?' : shortId(peer)} for 30 minutes; register again before then to stay reachable`;
}

// ---- leases, attestations, state chain, VMs ---------------------------------------------------------

export function leaseRequestTellUser(ledger: LedgerView): TellUser['text'] {
  return (answer, req) => {
    const b = (req.body ?? {}) as Fields;
    const dur = intOf(b.duration);
    const hash = str(answer.lease_hash);
    return `Leased ${resources(b)}${dur === undefined ? '' : ` for ${formatDuration(dur)}`} for the operator: lease block ${hash === undefined ? '?' : shortId(hash)}; ${finalityOf(ledger, hash)}`;
  };
}

export function leaseOffersTellUser(answer: Fields): string {
  const id = str(answer.request_id);
  const req = `request ${id === undefined ? '' : shortId(id)}`.trim();
  const offers = Array.isArray(answer.offers) ? (answer.offers as Fields[]) : [];
  if (offers.length === 0) return `No offers for ${req} in time; try again, or ask for less`;
  const cheapest = offers[0]!;
  const cost = intOf(cheapest.total_cost);
  const provider = str(cheapest.provider);
  return `${plural(offers.length, 'offer')} for ${req}; the cheapest${provider === undefined ? '' : ` from ${shortId(provider)}`}${cost === undefined ? '' : ` costs ${formatAmount(cost, 'XUSD')}`}`;
}

export function leaseAttestationsTellUser(answer: Fields, req: ApiRequest): string {
  const n = Array.isArray(answer.attestations) ? answer.attestations.length : 0;
  const lease = str((req.body as Fields | undefined)?.lease_hash);
  const median = intOf(answer.median);
  return `Got ${plural(n, 'timekeeper attestation')} of lease ${lease === undefined ? '' : shortId(lease)}${median === undefined ? '' : `, median time ${formatTimeNs(median)}`}`;
}

const leaseParam = (req: ApiRequest): string => {
  const h = (req.params as Record<string, string | undefined>).hash;
  return h === undefined ? 'the lease' : `lease ${shortId(h)}`;
};

export function leaseRenewTellUser(answer: Fields, req: ApiRequest): string {
  const dur = intOf((req.body as Fields | undefined)?.duration);
  const cost = intOf(answer.cost);
  const expires = intOf(answer.expires_at);
  return `Renewed ${leaseParam(req)}${dur === undefined ? '' : ` for ${formatDuration(dur)}`}${cost === undefined ? '' : ` for ${formatAmount(cost, 'XUSD')}`}${expires === undefined ? '' : `; it now expires at ${formatTimeNs(expires)}`}`;
}

export function leaseHoldTellUser(answer: Fields, req: ApiRequest): string {
  const warning = str(answer.warning);
  const seg = intOf(answer.segment_secs);
  const next = intOf(answer.next_renewal_at);
  const text =
    answer.enabled === true
      ? `Holding ${leaseParam(req)}: renewed${seg === undefined ? '' : ` ${formatDuration(seg)} at a time`} shortly before it expires while the node runs; ${next === undefined ? 'no renewal due now' : `next renewal at ${formatTimeNs(next)}`}`
      : `Stopped holding ${leaseParam(req)}: it expires unless renewed`;
  return warning === undefined ? text : `${text}; warning: ${warning}`;
}

export function attestationRequestTellUser(answer: Fields, req: ApiRequest): string {
  const key = str(answer.public_key);
  const at = intOf(answer.timestamp);
  const subject = str((req.body as Fields | undefined)?.lease_hash);
  return `Timekeeper ${key === undefined ? '' : `${shortId(key)} `}attested the time${at === undefined ? '' : ` ${formatTimeNs(at)}`}${subject === undefined ? '' : ` for ${shortId(subject)}`}`;
}

export function statechainBlockTellUser(answer: Fields): string {
  const index = intOf(answer.index);
  const hash = str(answer.hash);
  return `Applied state-chain block${index === undefined ? '' : ` #${index}`}${hash === undefined ? '' : ` (${shortId(hash)})`}`;
}

export function vmExecTellUser(answer: Fields, req: ApiRequest): string {
  const lease = (req.params as Record<string, string | undefined>).lease;
  const code = intOf(answer.exit_code);
  return `Ran the command in the VM of lease ${lease === undefined ? '' : shortId(lease)}: exit code ${code ?? '?'}${answer.truncated === true ? '; output cut at 1 MiB' : ''}`;
}
