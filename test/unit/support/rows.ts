/** Rows and instants for the pure-decision tests. */
import type { JobRow } from "../../../src/lib/job-row";
import { formatPbDate } from "../../../src/lib/lease";

/** A fixed "now" so every expected date is exact. */
export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0, 0);

/** Lease texts relative to NOW, in PocketBase's stored form. */
export const LIVE = formatPbDate(NOW + 10_000);
export const EXPIRED = formatPbDate(NOW - 10_000);
export const ENDS_NOW = formatPbDate(NOW);

export function row(overrides: Partial<JobRow> = {}): JobRow {
  return {
    id: "job-1",
    created: formatPbDate(NOW - 60_000),
    probe_key: "probe-a",
    status: "pending",
    claimed_by: "",
    lease_expires_at: "",
    version: 3,
    reclaim_count: 2,
    consecutive_orphan_count: 1,
    lease_token: "",
    ...overrides,
  };
}

/** A row held by `workerId` under `token`, with a lease text. */
export function held(
  workerId: string,
  lease: string,
  overrides: Partial<JobRow> = {},
): JobRow {
  return row({ status: "claimed", claimed_by: workerId, lease_expires_at: lease, lease_token: "tok-current", ...overrides });
}
