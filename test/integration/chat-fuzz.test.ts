import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, type KeyPair } from '../../node-core/protocol/keys.ts';
import { chatEnvelopeId } from '../../node-core/protocol/payloads.ts';
import { powValid } from '../../node-core/protocol/pow.ts';
import { http, nowNs } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';
import { chatEnvelope, registerAccount, type SignedChatEnvelope } from '../helpers/chat-kit.ts';

/**
 * Fuzzes `POST /chat/send` on a real node (in-process, real LMDB, real HTTP; rate limits off, as
 * startTestNode has them) with mutations of valid signed envelopes: field deletions, type swaps,
 * numbers in every form (huge, negative, float, hex, quoted), over-long and odd messages, invalid
 * UTF-8 and raw bytes, deep nesting, wrong content types, truncated JSON, flipped signature and id
 * characters, extra and duplicate fields. Unmutated fresh envelopes are mixed in as controls.
 *
 * Asserted: never a 5xx; every refusal is the node's JSON error (`{"error": "…"}`, errors.ts); every
 * acceptance is of an envelope some seed or control signed (a mutation may be harmless: an extra
 * field, a quoted integer, another valid nonce), stored with the seed's signed fields and a valid
 * proof of work; at the end the store holds exactly the accepted messages and contacts, and the
 * node is healthy.
 *
 * Reproducible: the mutation stream comes from one seeded PRNG. Re-run a failure with
 * CHAT_FUZZ_SEED=<the printed seed>. (Keys come from the same PRNG; timestamps from the clock.)
 */

const RUNS = 10_000;
const IN_FLIGHT = 8;
/** Seeds mutated, and fresh envelopes kept apart for the controls (each sent once, unmutated). */
const SEEDS = 60;
const CONTROLS = 120;
const CONTROL_RATE = 0.01;
/** Share of bodies over the node's 1 MiB body limit or with a 100k-deep nesting (the slow ones). */
const HUGE_RATE = 0.003;
/** The fuzz node's block difficulty; the chat difficulty follows it (genesis: the lower of the two). */
const FUZZ_POW = 0xff80000000000000n;

// ---- seeded PRNG (mulberry32) ----------------------------------------------------------------------

class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let x = this.s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

// ---- bodies as lists of raw JSON members -------------------------------------------------------------

/** An envelope as JSON text pieces: [key text, value text], so a value can be any text, even broken. */
type Members = [string, string][];

const FIELDS = ['id', 'from', 'to', 'message', 'timestamp', 'signature', 'pow_nonce'] as const;
const HEX_FIELDS = ['id', 'from', 'to', 'signature'] as const;
const q = (s: string) => JSON.stringify(s);

function membersOf(env: SignedChatEnvelope, withId: boolean): Members {
  const m: Members = [];
  if (withId) m.push([q('id'), q(chatEnvelopeId(env))]);
  m.push(
    [q('from'), q(env.from)],
    [q('to'), q(env.to)],
    [q('message'), q(env.message)],
    [q('timestamp'), env.timestamp.toString()],
    [q('signature'), q(env.signature)],
    [q('pow_nonce'), env.pow_nonce.toString()],
  );
  return m;
}

const textOf = (m: Members) => `{${m.map(([k, v]) => `${k}:${v}`).join(',')}}`;

/** The index of a field's member (the first, when a key repeats), or -1. */
const find = (m: Members, field: string) => m.findIndex(([k]) => k === q(field));

/** A JSON string literal's content, when the text is a plain one. */
function unquoted(text: string): string | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

function numberForms(rng: Rng, current: string): string[] {
  const digits = /^-?[0-9]+$/.test(current) ? current : '1795000000000000000';
  return [
    '1' + '0'.repeat(30),
    '18446744073709551616',
    '18446744073709551615',
    '9223372036854775808',
    '9223372036854775807',
    '-9223372036854775809',
    '-1',
    `-${digits}`,
    '0',
    '-0',
    '1.5',
    `${digits}.0`,
    `${digits}.5`,
    '1e18',
    '1E400',
    '-1e-400',
    '0x1a',
    q('0x1a'),
    q(digits),
    q(`-${digits}`),
    q(` ${digits}`),
    q(`${digits}.0`),
    q(''),
    `0${digits}`,
    `+${digits}`,
    'NaN',
    'Infinity',
    `${digits}1`,
    String(Number(digits)),
    String(rng.int(2 ** 31)),
    `${digits.slice(0, -1)}${rng.int(10)}`,
  ];
}

const ODD_VALUES = [
  'null',
  'true',
  'false',
  '0',
  '1',
  '-1',
  '1.5',
  q(''),
  q('x'),
  '[]',
  '{}',
  '[1,2]',
  '{"a":1}',
  q('ab'.repeat(32)),
  q('ab'.repeat(64)),
  '[' + q('ab'.repeat(32)) + ']',
  '{"$ne":null}',
];

const EXTRA_KEYS = [
  'extra',
  '__proto__',
  'constructor',
  'prototype',
  'delivery',
  'seq',
  'received_at',
  'ok',
  '',
  'ID',
  'From',
  'to ',
  'mess\u0000age',
  'ключ',
  'pow_nonce',
  'to',
  'from',
  'message',
  'signature',
  'timestamp',
  'id',
];

function flipHex(rng: Rng, s: string): string {
  if (s.length === 0) return 'a';
  const i = rng.int(s.length);
  const c = s[i]!;
  const hex = '0123456789abcdef';
  const j = hex.indexOf(c);
  // A one-bit flip of that hex digit, or a character outside lowercase hex.
  const to =
    j >= 0 && rng.chance(0.8) ? hex[j ^ (1 << rng.int(4))]! : rng.pick(['A', 'F', 'g', 'z', ' ', '-', 'é']);
  return s.slice(0, i) + to + s.slice(i + 1);
}

function deep(rng: Rng, huge: boolean): string {
  const d = huge ? 100_000 : rng.pick([2, 10, 64, 100, 500, 1000, 3000]);
  return rng.chance(0.5) ? '['.repeat(d) + ']'.repeat(d) : '{"a":'.repeat(d) + '1' + '}'.repeat(d);
}

/** One structural mutation of the members, named in `ops`. */
function mutateMembers(
  rng: Rng,
  m: Members,
  seeds: readonly Members[],
  huge: boolean,
  ops: string[],
): Members {
  const field = rng.pick(FIELDS);
  const at = find(m, field);
  const kind = rng.int(13);
  switch (kind) {
    case 0: {
      if (at >= 0) m.splice(at, 1);
      ops.push(`delete ${field}`);
      break;
    }
    case 1: {
      const v = rng.pick(ODD_VALUES);
      if (at >= 0) m[at]![1] = v;
      else m.push([q(field), v]);
      ops.push(`${field} = ${v.slice(0, 40)}`);
      break;
    }
    case 2: {
      const f = rng.pick(['timestamp', 'pow_nonce', 'timestamp', 'pow_nonce', rng.pick(FIELDS)]);
      const i = find(m, f);
      const v = rng.pick(numberForms(rng, i >= 0 ? m[i]![1] : ''));
      if (i >= 0) m[i]![1] = v;
      else m.push([q(f), v]);
      ops.push(`${f} = ${v}`);
      break;
    }
    case 3: {
      const text = huge
        ? 'x'.repeat(1024 * 1024 + 100)
        : rng.pick([
            'x'.repeat(8193),
            'é'.repeat(4096) + 'x',
            '😀'.repeat(2049),
            'x'.repeat(8192 + rng.int(100_000)),
            'x'.repeat(8192),
          ]);
      const i = find(m, 'message');
      if (i >= 0) m[i]![1] = q(text);
      ops.push(`message of ${Buffer.byteLength(text)} bytes`);
      break;
    }
    case 4: {
      const f = rng.pick(HEX_FIELDS);
      const i = find(m, f);
      const s = i >= 0 ? unquoted(m[i]![1]) : undefined;
      if (i >= 0 && s !== undefined) {
        const v = rng.pick([
          () => flipHex(rng, s),
          () => flipHex(rng, flipHex(rng, s)),
          () => s.toUpperCase(),
          () => s.slice(0, -2),
          () => `${s}00`,
          () => ` ${s}`,
          () => '',
          () => s.slice(0, s.length / 2),
        ])();
        m[i]![1] = q(v);
        ops.push(`${f} altered`);
      } else ops.push(`${f} absent`);
      break;
    }
    case 5: {
      const key = rng.pick(EXTRA_KEYS);
      const v = rng.chance(0.3) ? rng.pick(m)[1] : rng.pick(ODD_VALUES);
      m.splice(rng.int(m.length + 1), 0, [q(key), v]);
      ops.push(`extra ${JSON.stringify(key)}`);
      break;
    }
    case 6: {
      const v = deep(rng, huge);
      if (at >= 0) m[at]![1] = v;
      else m.push([q(field), v]);
      ops.push(`${field} nested ${v.length / 2}`);
      break;
    }
    case 7: {
      const other = rng.pick(seeds);
      const j = find(other, field);
      if (at >= 0 && j >= 0) m[at]![1] = other[j]![1];
      ops.push(`${field} from another seed`);
      break;
    }
    case 8: {
      const i = find(m, 'message');
      const v = rng.pick([
        q('\ud800'),
        '"\\ud800"',
        '"\\udfff\\ud800"',
        '"\\u0000"',
        '"a\\u0000b"',
        q('\u2028\u2029'),
        '"\\x41"',
        '"\\u00e9"',
        '"tab\there"',
        "'single'",
        q('‮rtl'),
      ]);
      if (i >= 0) m[i]![1] = v;
      ops.push(`message ${v.slice(0, 20)}`);
      break;
    }
    case 9: {
      const a = find(m, 'from');
      const b = find(m, 'to');
      if (a >= 0 && b >= 0) [m[a]![1], m[b]![1]] = [m[b]![1], m[a]![1]];
      ops.push('from <-> to');
      break;
    }
    case 10: {
      for (let i = m.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [m[i], m[j]] = [m[j]!, m[i]!];
      }
      ops.push('reordered');
      break;
    }
    case 11: {
      // A signed field's value as text that decodes to the same value (escapes): still the seed.
      const i = find(m, 'message');
      const s = i >= 0 ? unquoted(m[i]![1]) : undefined;
      if (i >= 0 && s !== undefined)
        m[i]![1] =
          `"${[...s].map((c) => (c.length === 1 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('')}"`;
      ops.push('message escaped');
      break;
    }
    default: {
      const key = rng.pick(FIELDS);
      m.splice(rng.int(m.length + 1), 0, [q(key), rng.pick([...ODD_VALUES, q('ab'.repeat(32))])]);
      ops.push(`duplicate ${key}`);
      break;
    }
  }
  return m;
}

const BAD_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xc3],
  [0x80],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
];

/** One mutation of the body's bytes, named in `ops`. */
function mutateBytes(rng: Rng, body: Buffer, ops: string[]): Buffer {
  switch (rng.int(9)) {
    case 0: {
      const cut = rng.int(body.length);
      ops.push(`truncated at ${cut}`);
      return body.subarray(0, cut);
    }
    case 1: {
      ops.push('random bytes');
      return Buffer.from(rng.bytes(rng.int(400)));
    }
    case 2: {
      // Inside a string (after an opening quote) or anywhere.
      const quotes = [...body.keys()].filter((i) => body[i] === 0x22);
      const at = quotes.length > 0 && rng.chance(0.8) ? rng.pick(quotes) + 1 : rng.int(body.length + 1);
      const bad = Buffer.from(rng.pick(BAD_UTF8));
      ops.push(`invalid UTF-8 ${bad.toString('hex')} at ${at}`);
      return Buffer.concat([body.subarray(0, at), bad, body.subarray(at)]);
    }
    case 3: {
      const out = Buffer.from(body);
      const i = rng.int(Math.max(1, out.length));
      if (out.length > 0) out[i] = out[i]! ^ (1 << rng.int(8));
      ops.push(`bit flipped at ${i}`);
      return out;
    }
    case 4: {
      const wrap = rng.pick([
        (b: string) => `[${b}]`,
        (b: string) => JSON.stringify(b),
        (b: string) => b + b,
        (b: string) => `${b}garbage`,
        (b: string) => `${b},`,
        (b: string) => `\ufeff${b}`,
        (b: string) => `  \n${b}\n  `,
        (b: string) => `{"envelope":${b}}`,
        (b: string) => `/*c*/${b}`,
      ]);
      ops.push('wrapped');
      return Buffer.from(wrap(body.toString('latin1')), 'latin1');
    }
    case 5: {
      const v = rng.pick([
        '',
        ' ',
        'null',
        '0',
        '123',
        'true',
        '"text"',
        '[]',
        '{}',
        'a=1&b=2',
        '{',
        '}',
        '{"to":}',
      ]);
      ops.push(`body ${JSON.stringify(v)}`);
      return Buffer.from(v);
    }
    case 6: {
      ops.push('UTF-16');
      return Buffer.from(body.toString('utf8'), 'utf16le');
    }
    case 7: {
      const at = rng.int(body.length + 1);
      ops.push(`NUL at ${at}`);
      return Buffer.concat([body.subarray(0, at), Buffer.from([0]), body.subarray(at)]);
    }
    default: {
      const at = rng.int(body.length);
      ops.push(`cut a byte at ${at}`);
      return Buffer.concat([body.subarray(0, at), body.subarray(at + 1)]);
    }
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  undefined,
  'text/plain',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'text/event-stream',
  ';;;',
];

// ---- HTTP ------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

function post(base: URL, agent: Agent, body: Buffer, contentType: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-length': body.length };
    if (contentType !== undefined) headers['content-type'] = contentType;
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: '/chat/send',
        method: 'POST',
        agent,
        headers,
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** What is wrong with a refusal's body, or undefined when it is the node's error shape. */
function errorShapeProblem(a: Answer): string | undefined {
  if (!/^application\/json/.test(a.contentType ?? '')) return `content-type ${a.contentType}`;
  let v: unknown;
  try {
    v = JSON.parse(a.text);
  } catch {
    return 'body is not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'body is not an object';
  const o = v as Record<string, unknown>;
  if (typeof o.error !== 'string' || o.error === '') return 'no error message';
  for (const k of Object.keys(o)) if (k !== 'error' && k !== 'retryable') return `unexpected key ${k}`;
  if (o.retryable !== undefined && typeof o.retryable !== 'boolean') return 'retryable is not a boolean';
  return undefined;
}

// ---- the test --------------------------------------------------------------------------------------

describe('fuzzing POST /chat/send on a real node', () => {
  let t: TestNode;
  let base: URL;
  let difficulty: bigint;
  const seedValue =
    process.env.CHAT_FUZZ_SEED !== undefined
      ? Number(process.env.CHAT_FUZZ_SEED)
      : Math.floor(Math.random() * 2 ** 32);
  const rng = new Rng(seedValue);
  const key = (): KeyPair => keyPairFromSeed(rng.bytes(32));
  let alice: KeyPair;
  let bob: KeyPair;
  let carol: KeyPair; // never registered: a valid envelope to her is refused with 404
  /** Every envelope the test signed, by id: what an acceptance may store. */
  const signed = new Map<string, SignedChatEnvelope>();
  const seeds: { env: SignedChatEnvelope; members: Members }[] = [];
  const controls: SignedChatEnvelope[] = [];

  beforeAll(async () => {
    console.log(`chat fuzz seed: ${seedValue} (re-run with CHAT_FUZZ_SEED=${seedValue})`);
    t = await startTestNode({ ...P2P, powDifficulty: FUZZ_POW });
    base = new URL(t.node.url);
    difficulty = t.node.statechain.pow.chat;
    expect(difficulty).toBeGreaterThan(0xff00000000000000n); // a nonce flip is then most likely refused
    [alice, bob, carol] = [key(), key(), key()];
    for (const k of [alice, bob])
      expect((await registerAccount(t.node.url, k, t.node.nodeId)).status).toBe(200);
    const t0 = nowNs();
    const texts = [
      'hello',
      'fuzz ✓ ü',
      '😀 emoji',
      'a'.repeat(8192),
      'é'.repeat(4096),
      '"quoted" \\ back',
      'x',
    ];
    const pairs = [
      [alice, bob],
      [bob, alice],
      [alice, alice],
    ] as const;
    const make = (i: number, toCarol: boolean): SignedChatEnvelope => {
      const [from, to] = toCarol ? [bob, carol] : rng.pick(pairs);
      const text = rng.pick(texts);
      // Texts at the cap stay as they are; the timestamp keeps every envelope distinct.
      const message = Buffer.byteLength(text) >= 8000 ? text : `${text} ${i}`;
      const env = chatEnvelope(from, to, message, { difficulty, timestamp: t0 + BigInt(i) });
      signed.set(chatEnvelopeId(env), env);
      return env;
    };
    for (let i = 0; i < SEEDS; i++) {
      const env = make(i, i % 10 === 9);
      seeds.push({ env, members: membersOf(env, rng.chance(0.5)) });
    }
    // Controls go to registered recipients only: each must be accepted.
    for (let i = 0; i < CONTROLS; i++) controls.push(make(SEEDS + i, false));
    expect(t.node.chatStore.accounts()).toEqual([]);
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
  });

  it(`${RUNS} mutated bodies: no 5xx, JSON errors, only signed envelopes stored`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const statuses: Record<number, number> = {};
    const failures: string[] = [];
    /** Ids answered 200, and what they were. */
    const accepted = new Map<string, string>();
    /** Refusals by message: shows which checks the mutations reached. */
    const reasons = new Map<string, number>();
    let controlsSent = 0;
    let next = 0;
    const started = performance.now();

    const one = async (run: number) => {
      const ops: string[] = [];
      let body: Buffer;
      let contentType: string | undefined = 'application/json';
      let control: SignedChatEnvelope | undefined;
      if (controlsSent < controls.length && rng.chance(CONTROL_RATE)) {
        control = controls[controlsSent++]!;
        body = Buffer.from(textOf(membersOf(control, rng.chance(0.5))));
        ops.push('control');
      } else {
        const seed = rng.pick(seeds);
        const huge = rng.chance(HUGE_RATE);
        let m: Members = seed.members.map(([k, v]) => [k, v]);
        const n = 1 + (rng.chance(0.6) ? 0 : rng.int(3));
        for (let i = 0; i < n; i++)
          m = mutateMembers(
            rng,
            m,
            seeds.map((s) => s.members),
            huge && i === 0,
            ops,
          );
        body = Buffer.from(textOf(m));
        if (rng.chance(0.25)) body = mutateBytes(rng, body, ops);
        contentType = rng.pick(CONTENT_TYPES);
      }
      const what = () => `run ${run} [${ops.join('; ')}] body ${body.subarray(0, 200).toString('latin1')}`;
      let a: Answer;
      try {
        a = await post(base, agent, body, contentType);
      } catch (e) {
        failures.push(`${what()}: request failed: ${(e as Error).message}`);
        return;
      }
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      if (a.status >= 500) failures.push(`${what()}: ${a.status} ${a.text}`);
      else if (a.status === 200) {
        let id: string | undefined;
        try {
          id = (JSON.parse(a.text) as { id?: string }).id;
        } catch {
          id = undefined;
        }
        const env = id === undefined ? undefined : signed.get(id);
        if (id === undefined || env === undefined)
          failures.push(`${what()}: accepted an unknown envelope: ${a.text}`);
        else if (accepted.has(id)) failures.push(`${what()}: accepted ${id} a second time`);
        else accepted.set(id, what());
      } else {
        const problem = errorShapeProblem(a);
        if (!problem) {
          const msg = (JSON.parse(a.text) as { error: string }).error.replace(/'[^']*'/g, "'…'");
          reasons.set(msg, (reasons.get(msg) ?? 0) + 1);
        }
        if (problem) failures.push(`${what()}: ${a.status}: ${problem}: ${a.text.slice(0, 200)}`);
        if (![400, 404].includes(a.status))
          failures.push(`${what()}: unexpected status ${a.status}: ${a.text}`);
        if (control) failures.push(`${what()}: control refused: ${a.status} ${a.text}`);
      }
      if (control && a.status === 200 && !accepted.has(chatEnvelopeId(control)))
        failures.push(`${what()}: control accepted under another id`);
    };

    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (;;) {
          const run = next++;
          if (run >= RUNS) return;
          await one(run);
          if (run % 1000 === 999) {
            const h = await http(t.node.url, 'GET', '/health');
            if (h.status !== 200) failures.push(`after run ${run}: /health ${h.status} ${h.text}`);
          }
        }
      }),
    );
    agent.destroy();
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `chat fuzz: ${RUNS} requests in ${seconds.toFixed(1)} s, statuses ${JSON.stringify(statuses)}, ` +
        `${accepted.size} accepted (${controlsSent} controls), seed ${seedValue}`,
    );
    console.log(
      'refusals by reason:\n' +
        [...reasons]
          .sort((a, b) => b[1] - a[1])
          .map(([m, n]) => `  ${String(n).padStart(5)} ${m}`)
          .join('\n'),
    );
    expect(failures.slice(0, 20)).toEqual([]);
    expect(controlsSent).toBeGreaterThan(0);

    // Every acceptance stored the envelope the test signed, with a valid proof of work; and the
    // store holds those messages and nothing else.
    const stored = t.node.chatStore.after(0n, { limit: 1_000_000 });
    expect(stored.length).toBe(accepted.size);
    for (const m of stored) {
      const env = signed.get(m.id);
      expect(env, `stored ${m.id}, never accepted`).toBeDefined();
      expect(accepted.has(m.id), accepted.get(m.id) ?? m.id).toBe(true);
      const { from, to, message, timestamp, signature } = env!;
      expect({
        from: m.from,
        to: m.to,
        message: m.message,
        timestamp: m.timestamp,
        signature: m.signature,
      }).toEqual({
        from,
        to,
        message,
        timestamp,
        signature,
      });
      expect(m.pow_nonce !== undefined && powValid(hexToBytes(m.id), m.pow_nonce, difficulty), m.id).toBe(
        true,
      );
      expect(m.to).not.toBe(carol.pub_key);
    }
    for (const c of controls.slice(0, controlsSent))
      expect(t.node.chatStore.has(chatEnvelopeId(c))).toBe(true);
    // Contacts: only the parties of accepted envelopes.
    const parties = new Set(stored.flatMap((m) => [m.from, m.to]));
    expect(t.node.chatStore.accounts()).toEqual([...parties].sort());
    const others = (k: KeyPair) =>
      [
        ...new Set(
          stored
            .filter((m) => m.from === k.pub_key || m.to === k.pub_key)
            .map((m) => (m.from === k.pub_key ? m.to : m.from)),
        ),
      ].sort();
    expect(
      t.node.chatStore
        .contacts(alice.pub_key)
        .map((c) => c.key)
        .sort(),
    ).toEqual(others(alice));
    expect(
      t.node.chatStore
        .contacts(bob.pub_key)
        .map((c) => c.key)
        .sort(),
    ).toEqual(others(bob));
    // Still healthy, and still taking a valid message.
    expect((await http(t.node.url, 'GET', '/health')).status).toBe(200);
    const last = chatEnvelope(bob, alice, 'after the fuzz', { difficulty });
    const r = await http(t.node.url, 'POST', '/chat/send', last);
    expect(r.status).toBe(200);
    expect(t.node.chatStore.has(chatEnvelopeId(last))).toBe(true);
  }, 120_000);
});
