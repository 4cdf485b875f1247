/**
 * Record-API filters (PocketBase's filter syntax, for
 * `/api/collections/probe_jobs/records?filter=...`) that mirror what the
 * server's own queries decide, so a client's list shows what a claim would
 * take. Pure: built from the protocol's column names, status names and date
 * form, never retyped.
 */
import type { JobRow } from "./job-row.js";
export { JOBS_COLLECTION } from "./job-row.js";
import { formatPbDate } from "./lease.js";
import type { JobStatus } from "./types.js";

type Column = keyof JobRow & string;
const STATUS: Column = "status";
const RUN_AT: Column = "run_at";
const LEASE_EXPIRES_AT: Column = "lease_expires_at";
const PENDING: JobStatus = "pending";
const CLAIMED: JobStatus = "claimed";
const RUNNING: JobStatus = "running";

/** A PocketBase filter string literal (single quotes, `'` escaped). */
function literal(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** claimed/running whose lease has passed by `nowMs` (an empty lease_expires_at is "" and sorts before any date: expired). */
export function expiredLeaseRecordFilter(nowMs: number): string {
  return `(${STATUS} = ${literal(CLAIMED)} || ${STATUS} = ${literal(RUNNING)}) && ${LEASE_EXPIRES_AT} < ${literal(formatPbDate(nowMs))}`;
}

/**
 * Due at `nowMs`: run_at empty (a row no hook stamped) or come, compared as
 * PocketBase's fixed-width text form, as claim-next's `run_at <= {:now}`
 * and transitions' isDue compare it.
 */
export function dueRecordFilter(nowMs: number): string {
  return `(${RUN_AT} = '' || ${RUN_AT} <= ${literal(formatPbDate(nowMs))})`;
}

/**
 * What a claim could take at `nowMs`: a pending job that is due, or a
 * claimed/running one whose lease has passed (claim-next's two candidate
 * sets: pendingDueWhere and expiredLeaseWhere; a steal does not wait on
 * run_at). Flow control (paused queues, limits) is not judged here.
 */
export function claimableRecordFilter(nowMs: number): string {
  return `((${STATUS} = ${literal(PENDING)} && ${dueRecordFilter(nowMs)}) || (${expiredLeaseRecordFilter(nowMs)}))`;
}
