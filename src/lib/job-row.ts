/**
 * The fields of a `probe_jobs` row that the protocol reads and writes, as plain
 * values. Handlers copy a record into a JobRow, the transition functions decide
 * on it, and the handler writes the returned patch back.
 */
import type { JobStatus, JobView } from "./types";

export interface JobRow {
  id: string;
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

export const JOB_ROW_TEXT_FIELDS = [
  "probe_key", "status", "claimed_by", "lease_expires_at", "lease_token",
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
