/**
 * `npm run bench`: runs every benchmark suite in one process and prints each figure next to the
 * baseline measured in the same run. Benchmarks live apart from tests: nothing here asserts.
 * Usage: npm run bench [-- suite ...]   (suites: crypto, pow, node, network, transport, renderer, leasing, indexed, vm-access, chat, sync; certificate,
 * which takes minutes, soak (a 10-minute ingest, memory sampled), startup (start-up and memory alone,
 * also part of node), ab (two nodes' CPU per block compared phase by phase: ab.ts), gossip-ab (two
 * networks of three nodes' gossip throughput compared phase by phase: gossip-ab.ts), reps (ingest
 * with many representatives against one: reps.ts) and elections (ingest with 40 % of the weight
 * offline, every block waiting for the fallback: elections.ts) and forks (thousands of conflicts open
 * at once: forks.ts), idle (two idle peers of a large ledger: idle-sync.ts) and journal (what the
 * write-ahead journal's syncs cost the node's thread: journal.ts) run only when named)
 */
import { availableParallelism, cpus } from 'node:os';

type Suite = (log: (line: string) => void) => Promise<Record<string, number>>;

const suites: Record<string, () => Promise<{ default: Suite }>> = {
  crypto: () => import('./crypto.ts'),
  pow: () => import('./pow.ts'),
  node: () => import('./node.ts'),
  network: () => import('./network.ts'),
  renderer: () => import('./renderer.ts'),
  certificate: () => import('./certificate.ts'),
  leasing: () => import('./leasing.ts'),
  vm: () => import('./vm-launch.ts'),
  'vm-access': () => import('./vm-access.ts'),
  chat: () => import('./chat.ts'),
  sync: () => import('./sync.ts'),
  transport: () => import('./transport.ts'),
  startup: () => import('./startup.ts'),
  soak: () => import('./soak.ts'),
  ab: () => import('./ab.ts'),
  'gossip-ab': () => import('./gossip-ab.ts'),
  reps: () => import('./reps.ts'),
  elections: () => import('./elections.ts'),
  forks: () => import('./forks.ts'),
  indexed: () => import('./indexed-reads.ts'),
  idle: () => import('./idle-sync.ts'),
  journal: () => import('./journal.ts'),
};
/** Suites left out of a run that names none. */
const onlyWhenNamed = new Set([
  'certificate',
  'startup',
  'soak',
  'ab',
  'gossip-ab',
  'reps',
  'elections',
  'forks',
  'idle',
  'journal',
]);

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length > 0 ? wanted : Object.keys(suites).filter((n) => !onlyWhenNamed.has(n));
console.log(
  `bench: node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'})`,
);
const all: Record<string, number> = {};
for (const name of names) {
  const load = suites[name];
  if (!load) {
    console.error(`bench: unknown suite "${name}" (have: ${Object.keys(suites).join(', ')})`);
    process.exit(2);
  }
  console.log(`\n== ${name} ==`);
  const started = performance.now();
  const figures = await (await load()).default((line) => console.log(line));
  for (const [k, v] of Object.entries(figures)) all[`${name}.${k}`] = v;
  console.log(`(${name}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
console.log('\nbench: figures (JSON)');
console.log(
  JSON.stringify(all, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(4)) : v), 1),
);
