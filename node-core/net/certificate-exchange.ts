import type { Logger } from 'pino';
import type { CertificateBook } from '../leasing/certificate-book.ts';
import { CertificateError, certificateToJson, type PerformanceCertificate } from '../protocol/certificate.ts';
import { isHex } from '../protocol/hex.ts';
import { certificateFromJson } from './gossip.ts';
import type { P2PHost, Verdict } from './host.ts';

/**
 * Performance certificates between peers (reference-behavior.md 4.7, 5.3, LS-15): certificates
 * gossiped on `xe/certificates` are verified and kept; this node re-broadcasts its own every 5
 * minutes, and pulls its peers' with the messenger request `cert_request` when a peer connects and
 * every 2 minutes, so a lease naming a certificate that was gossiped before this node was there
 * still finds it.
 */
export const CERT_REQUEST = 'cert_request';

/**
 * Certificates in one `cert_request` answer: about 1.1 KiB each, so an answer stays within the
 * messenger's 64 KiB per message (spec 5.7).
 */
export const MAX_CERTIFICATES_PER_ANSWER = 48;

export interface CertificateExchangeDeps {
  book: Pick<CertificateBook, 'get' | 'add' | 'newest' | 'ofProvider' | 'newestValid'>;
  /** Content verification against the network's id and workload; throws CertificateError. */
  verify: (cert: PerformanceCertificate) => void;
  host: Pick<P2PHost, 'peers' | 'request' | 'publishCertificate'>;
  /** This node's address: its own certificate is the one re-broadcast. */
  ownAddress: string;
  now: () => bigint;
  log?: Logger;
}

export interface CertificateExchangeOptions {
  /** Pull from every peer this often (default 2 minutes). */
  pullEveryMs?: number;
  /** Re-broadcast the own certificate this often (default 5 minutes). */
  rebroadcastMs?: number;
}

export class CertificateExchange {
  private readonly d: CertificateExchangeDeps;
  private readonly pullEveryMs: number;
  private readonly rebroadcastMs: number;
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  /** Certificates learned from peers, by gossip or pull. */
  learned = 0;

  constructor(deps: CertificateExchangeDeps, opts: CertificateExchangeOptions = {}) {
    this.d = deps;
    this.pullEveryMs = opts.pullEveryMs ?? 120_000;
    this.rebroadcastMs = opts.rebroadcastMs ?? 300_000;
  }

  start(): void {
    this.stopped = false;
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.pullEveryMs, () => {
      for (const p of this.d.host.peers()) void this.pull(p.id);
    });
    every(this.rebroadcastMs, () => this.publishOwn());
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /** A peer connected: pull what it knows. */
  peerConnected(peer: string): void {
    void this.pull(peer);
  }

  /** Publishes a certificate (the own one, just made). */
  publish(cert: PerformanceCertificate): void {
    void this.d.host.publishCertificate(cert);
  }

  /** Publishes this node's newest unexpired certificate, if it has one. */
  publishOwn(): void {
    const own = this.d.book.newestValid(this.d.ownAddress, this.d.now());
    if (own) this.publish(own);
  }

  /**
   * A certificate from a peer: known already is 'ignore'; one that fails content verification is
   * 'reject' (the sender loses score); else it is kept and relayed. Expired ones are kept too: a
   * lease may name a certificate that expired since (LS-15).
   */
  async offer(cert: PerformanceCertificate): Promise<Verdict> {
    if (this.d.book.get(cert.hash)) return 'ignore';
    try {
      this.d.verify(cert);
    } catch (e) {
      if (e instanceof CertificateError) {
        this.d.log?.debug({ hash: cert.hash, code: e.code }, 'certificate from a peer refused');
        return 'reject';
      }
      throw e;
    }
    if (this.stopped) return 'ignore';
    if (!(await this.d.book.add(cert))) return 'ignore';
    this.learned += 1;
    return 'accept';
  }

  /**
   * Answers `cert_request` (undefined for any other type): unexpired certificates first, newest
   * issued first, at most MAX_CERTIFICATES_PER_ANSWER; `{provider}` narrows it to one provider.
   */
  answer(type: string, payload: unknown): { certificates: unknown[] } | undefined {
    if (type !== CERT_REQUEST) return undefined;
    const p = (payload ?? {}) as { provider?: unknown };
    const provider = isHex(p.provider, 32) ? p.provider : undefined;
    const now = this.d.now();
    const certs =
      provider === undefined
        ? this.d.book.newest(now, MAX_CERTIFICATES_PER_ANSWER)
        : this.d.book
            .ofProvider(provider) // newest issued first; a stable sort keeps that within each part
            .sort((a, b) => Number(b.expires_at >= now) - Number(a.expires_at >= now))
            .slice(0, MAX_CERTIFICATES_PER_ANSWER);
    return { certificates: certs.map(certificateToJson) };
  }

  /** Pulls a peer's certificates; what it sends is checked like gossip. Failures are only logged. */
  async pull(peer: string): Promise<number> {
    let answer: { certificates?: unknown };
    try {
      answer = await this.d.host.request<{ certificates?: unknown }>(peer, CERT_REQUEST, {});
    } catch (e) {
      this.d.log?.debug({ peer, err: (e as Error).message }, 'cert_request failed');
      return 0;
    }
    const list = Array.isArray(answer?.certificates)
      ? answer.certificates.slice(0, MAX_CERTIFICATES_PER_ANSWER)
      : [];
    let added = 0;
    for (const raw of list) {
      if (this.stopped) break;
      const cert = certificateFromJson(raw);
      if (cert && (await this.offer(cert)) === 'accept') added += 1;
    }
    if (added > 0) this.d.log?.debug({ peer, added }, 'certificates pulled');
    return added;
  }
}
