/**
 * The PocketBase side of every handler: reading the request body, finding a
 * job row, copying it into a JobRow and writing a patch back. esbuild copies
 * what each handler uses into that handler's closure (PocketBase runs handlers
 * without the file's top level), so this module is written once and emitted
 * per handler.
 */
import type { WhereClause } from "../lib/queries";
import {
  JOB_ROW_NUMBER_FIELDS,
  JOB_ROW_TEXT_FIELDS,
  type JobPatch,
  type JobRow,
} from "../lib/job-row";

export const JOBS_COLLECTION = "probe_jobs";

/** The JSON body; PocketBase gives `{}` for invalid JSON, an array or another content type. */
export function requestBody(c: echo.Context): unknown {
  return $apis.requestInfo(c).data;
}

/** The row, or null when no such job exists (findRecordById throws then). */
export function findJob(dao: daos.Dao, jobId: string): models.Record | null {
  try {
    return dao.findRecordById(JOBS_COLLECTION, jobId);
  } catch {
    return null;
  }
}

export function readRow(rec: models.Record): JobRow {
  const row = { id: rec.id } as Record<string, string | number>;
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row as unknown as JobRow;
}

export function writePatch(rec: models.Record, patch: JobPatch): void {
  for (const field in patch) rec.set(field, patch[field as keyof JobPatch]);
}

/** Rows matching a where clause from src/lib/queries, in the given order. */
export function findJobs(
  dao: daos.Dao,
  where: WhereClause,
  order: readonly string[],
  limit: number,
): models.Record[] {
  const records = arrayOf(new Record());
  dao.recordQuery(JOBS_COLLECTION)
    .andWhere($dbx.exp(where.sql, where.params))
    .orderBy(...order)
    .limit(limit)
    .all(records);
  return records;
}

/** A fencing token for a new claim: unguessable, so only the claim's own answer carries it. */
export function newLeaseToken(): string {
  return $security.randomString(24);
}

export function getenv(name: string): string {
  return $os.getenv(name);
}
