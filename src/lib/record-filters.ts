/**
 * Record-API filters (PocketBase's filter syntax, for
 * `/api/collections/probe_jobs/records?filter=...`) that mirror what the
 * server's own queries decide, so a client's list shows what a claim would
 * take. Pure: built from the protocol's column names, status names and date
 * form, never retyped.
 */
import type { JobRow } from "./job-row.js";
export { JOBS_COLLECTION } from "./job-schema.js";
import { HELD_STATUSES } from "./job-schema.js";
import { formatPbDate } from "./lease.js";
import type { JobStatus } from "./types.js";

type Column = keyof JobRow & string;
const STATUS: Column = "status";
const RUN_AT: Column = "run_at";
const LEASE_EXPIRES_AT: Column = "lease_expires_at";
const PENDING: JobStatus = "pending";

/**
 * A filter with `{:name}` placeholders filled in as PocketBase's filter
 * literals, as the JS SDK's `pb.filter` does on both lines: strings in single
 * quotes with `'` escaped, numbers and booleans bare, null as null, a Date as
 * UTC text.
 */
export function pbFilter(expr: string, params: Record<string, string | number | boolean | null | Date> = {}): string {
  let out = expr;
  for (const [name, value] of Object.entries(params)) {
    let literal: string;
    if (typeof value === "number" || typeof value === "boolean") literal = String(value);
    else if (value === null) literal = "null";
    else if (value instanceof Date) literal = `'${value.toISOString().replace("T", " ")}'`;
    else literal = `'${String(value).replace(/'/g, "\\'")}'`;
    out = out.split(`{:${name}}`).join(literal); // replaceAll: not in the hooks' ES2020 lib
  }
  return out;
}

/** A PocketBase filter string literal (pbFilter's quoting). */
function literal(text: string): string {
  return pbFilter("{:v}", { v: text });
}

/** A status class (job-schema.ts) as a record filter: `status = 'a' || status = 'b'`. */
export function statusRecordFilter(statuses: readonly JobStatus[]): string {
  return statuses.map((status) => `${STATUS} = ${literal(status)}`).join(" || ");
}

/** claimed/running whose lease has passed by `nowMs` (an empty lease_expires_at is "" and sorts before any date: expired). */
export function expiredLeaseRecordFilter(nowMs: number): string {
  return `(${statusRecordFilter(HELD_STATUSES)}) && ${LEASE_EXPIRES_AT} < ${literal(formatPbDate(nowMs))}`;
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
 * `hasRunAt: false` for a server from before the queue (docs/queue.md), which
 * has no run_at column (its record API refuses a filter naming one) and
 * whose every pending job is due.
 */
export function claimableRecordFilter(nowMs: number, { hasRunAt = true }: { hasRunAt?: boolean } = {}): string {
  const pending = hasRunAt ? `${STATUS} = ${literal(PENDING)} && ${dueRecordFilter(nowMs)}` : `${STATUS} = ${literal(PENDING)}`;
  return `((${pending}) || (${expiredLeaseRecordFilter(nowMs)}))`;
}
