import type { TypeRule } from '../../ledger/rules/types.ts';
import { acceptRule } from './accept.ts';
import { cancelRule } from './cancel.ts';
import { forceSettleRule } from './force-settle.ts';
import { leaseRule } from './lease.ts';
import { settleRule } from './settle.ts';

export type { LeaseView } from './view.ts';

/** The lease-family rules (reference-behavior.md 4.3), by block type. `lease_renew` comes later. */
export const LEASE_RULES: Readonly<Record<string, TypeRule>> = {
  lease: leaseRule,
  lease_accept: acceptRule,
  lease_settle: settleRule,
  lease_cancel: cancelRule,
  lease_force_settle: forceSettleRule,
};
