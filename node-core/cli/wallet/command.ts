import type { FlagSpec } from './args.ts';
import type { WalletContext } from './context.ts';

/** One wallet subcommand: its help (with an example) and what it does. */
export interface WalletCommand {
  /** `send`, or a group's `keys new`. */
  readonly name: string;
  readonly summary: string;
  /** The arguments after the name: `TO AMOUNT [--asset XE|XUSD] [--memo TEXT]`. */
  readonly usage: string;
  /** Lines explaining arguments and flags of this command. */
  readonly details?: string;
  readonly example: string;
  readonly flags?: FlagSpec;
  run(ctx: WalletContext): Promise<void>;
}
