/**
 * The housekeeping lock's lease: three sweep intervals, at least 3 s. When the leader dies,
 * another instance takes the duties within this; the acks it held are claimed within twice
 * this (see `AckConsumerSettings.claimIdleMs`).
 */
export function housekeepingLeaseMs(sweepIntervalMs: number): number {
  return Math.max(3 * sweepIntervalMs, 3000);
}
