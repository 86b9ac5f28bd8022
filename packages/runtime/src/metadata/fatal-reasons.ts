/** The driver's fatal reasons mapped onto the node's exit reasons (node/exit-codes.ts). */
import type { FatalReason as DriverFatalReason } from '@shoal/replica';
import type { FatalReason } from '../node/exit-codes.js';

export function driverFatalReason(reason: DriverFatalReason): FatalReason {
  switch (reason) {
    case 'metadata_recovery_refused':
    case 'partition_recovery_refused':
      return reason;
    case 'consensus':
      return 'consensus_stopped';
    default:
      return 'disk_io';
  }
}
