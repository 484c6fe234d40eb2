import { WalletUsageError } from './errors.ts';

/**
 * The wallet commands' command line: flags every command takes (where the node is, the keystore,
 * the account, --json, --help) and each command's own, declared by name and whether they take a
 * value. `--flag value` and `--flag=value` both work; anything unknown is a usage error.
 */
export interface FlagSpec {
  /** Flags that take a value. */
  values?: readonly string[];
  /** Flags that are on or off. */
  switches?: readonly string[];
}

export interface ParsedArgs {
  positionals: string[];
  /** The last value of each flag. */
  values: Map<string, string>;
  switches: Set<string>;
  /** Every flag with a value, in command-line order (repeatable flags). */
  all: [string, string][];
}

export const COMMON_FLAGS: Required<FlagSpec> = {
  values: ['--node', '--data-dir', '--admin-token-file', '--keystore', '--account'],
  switches: ['--json', '--help'],
};

export function parseFlags(argv: readonly string[], spec: FlagSpec = {}): ParsedArgs {
  const values = new Set([...COMMON_FLAGS.values, ...(spec.values ?? [])]);
  const switches = new Set([...COMMON_FLAGS.switches, ...(spec.switches ?? [])]);
  const out: ParsedArgs = { positionals: [], values: new Map(), switches: new Set(), all: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-h') {
      out.switches.add('--help');
      continue;
    }
    if (a === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--') || a === '-') {
      out.positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    if (values.has(name)) {
      const v = eq < 0 ? argv[++i] : a.slice(eq + 1);
      if (v === undefined) throw new WalletUsageError(`${name} needs a value`);
      out.values.set(name, v);
      out.all.push([name, v]);
    } else if (switches.has(name) && eq < 0) {
      out.switches.add(name);
    } else {
      throw new WalletUsageError(`unknown option ${name}`);
    }
  }
  return out;
}

/** A whole number flag within bounds. */
export function intFlag(args: ParsedArgs, name: string, def: number, min: number, max: number): number {
  const v = args.values.get(name);
  if (v === undefined) return def;
  if (!/^[0-9]+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new WalletUsageError(`${name}: "${v}" is not a whole number from ${min} to ${max}`);
  return Number(v);
}

/** The positionals a command needs: exactly `names` (then `optional` more at most). */
export function positionals(args: ParsedArgs, names: readonly string[], optional = 0): string[] {
  const p = args.positionals;
  if (p.length < names.length) throw new WalletUsageError(`missing ${names.slice(p.length).join(' and ')}`);
  if (p.length > names.length + optional)
    throw new WalletUsageError(`unexpected argument ${p[names.length + optional]}`);
  return p;
}
