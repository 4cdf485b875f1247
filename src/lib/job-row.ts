/**
 * The fields of a `probe_jobs` row that the protocol reads and writes, as plain
 * values. The adapter reads a JobRow, the transition functions decide on it,
 * and the adapter writes the returned patch back.
 */
import type { WhereClause } from "./queries.js";
import type { JobStatus, JobView } from "./types.js";

export interface JobRow {
  id: string;
  /** PocketBase's text form; what claim-next orders by. */
  created: string;
  probe_key: string;
  /** As stored; a hand-edited row may hold anything, so it is not narrowed. */
  status: string;
  claimed_by: string;
  /** PocketBase's text form, `""` when empty. */
  lease_expires_at: string;
  version: number;
  reclaim_count: number;
  consecutive_orphan_count: number;
  /** Fencing token of the current claim (pb-fleet's addition); `""` when none. */
  lease_token: string;
}

/** Field values to write; dates in PocketBase's text form. */
export interface JobPatch {
  status?: JobStatus;
  claimed_by?: string;
  lease_expires_at?: string;
  version?: number;
  claimed_at?: string;
  finished_at?: string;
  requeued_at?: string;
  reclaim_count?: number;
  consecutive_orphan_count?: number;
  lease_token?: string;
  /** JSON; written only when the server itself gives up on a job. */
  result?: unknown;
}

/** One job's compare-and-set: the row as read inside the transaction, and what was decided on it. */
export interface JobUpdate<D> {
  row: JobRow;
  decision: D;
}

/**
 * Rows found and written inside one transaction (the adapter's updateJobs):
 * what claim-next and the sweeper work through.
 */
export interface JobBatch {
  /** Rows matching a where clause from ./queries, in the given order. */
  find(where: WhereClause, order: readonly string[], limit: number): JobRow[];
  /** Writes a patch to a row this batch found. */
  write(row: JobRow, patch: JobPatch): void;
}

/** The JobRow fields a record is read into, by type. */
export const JOB_ROW_TEXT_FIELDS = [
  "created", "probe_key", "status", "claimed_by", "lease_expires_at", "lease_token",
] as const;
export const JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"] as const;

/** The `job` object of an answer: the row as it is after the patch. */
export function jobView(row: JobRow, patch?: JobPatch): JobView {
  const after = patch ? Object.assign({}, row, patch) : row;
  return {
    id: after.id,
    probe_key: after.probe_key,
    status: after.status as JobStatus,
    claimed_by: after.claimed_by,
    lease_expires_at: after.lease_expires_at,
    version: after.version,
  };
}
