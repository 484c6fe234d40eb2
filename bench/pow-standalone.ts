/** Runs the PoW benchmark alone: node_modules/.bin/node bench/pow-standalone.ts */
import benchPow from './pow.ts';

const figures = await benchPow((line) => console.log(line));
console.log(
  JSON.stringify(figures, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(4)) : v), 1),
);
