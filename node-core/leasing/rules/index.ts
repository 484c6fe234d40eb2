import type { TypeRule } from '../../ledger/rules/types.ts';
import { acceptRule } from './accept.ts';
import { cancelRule } from './cancel.ts';
import { forceSettleRule } from './force-settle.ts';
import { leaseRule } from './lease.ts';
import { renewRule } from './renew.ts';
import { settleRule } from './settle.ts';

export type { LeaseView } from './view.ts';

/** The lease-family rules (reference-behavior.md 4.3; `lease_renew` is our extension, D7), by type. */
export const LEASE_RULES: Readonly<Record<string, TypeRule>> = {
  lease: leaseRule,
  lease_accept: acceptRule,
  lease_settle: settleRule,
  lease_cancel: cancelRule,
  lease_force_settle: forceSettleRule,
  lease_renew: renewRule,
};
