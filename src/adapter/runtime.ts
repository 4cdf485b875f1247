/**
 * The part of PocketBase's hooks runtime that every supported version spells
 * the same way (`$security`, `$os`, `$app.store()`, `$app.logger()`, a
 * dbx.Builder's raw queries into DynamicModels, a record's getters): both adapters use these, and
 * both hooks tsconfigs check them against their own API's types.
 */
import {
  JOB_JSON_FIELDS, JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS, type JobInsert, type JobPatch, type JobRow,
} from "../lib/job-row.js";
import { WORKER_FIELDS, type CallerAuth } from "../lib/identity.js";
import { LEASE_AS_JUDGED_SQL } from "../lib/lease.js";
import type { WhereClause } from "../lib/queries.js";
import { JOBS_COLLECTION, QUERY_FAILED } from "./contract.js";

export function newLeaseToken(): string {
  return $security.randomString(24);
}

export function getenv(name: string): string {
  return $os.getenv(name);
}

export function storeGet(key: string): unknown {
  return $app.store().get(key);
}

export function storeSet(key: string, value: string): void {
  $app.store().set(key, value);
}

export function logInfo(message: string, ...attrs: unknown[]): void {
  $app.logger().info(message, ...attrs);
}

export function logError(message: string, err: unknown): void {
  $app.logger().error(message, "error", String(err));
}

/** What both APIs' records offer the protocol's reads. */
interface RecordFields {
  id: string;
  getString(field: string): string;
  getInt(field: string): number;
}

/** What both APIs' auth records offer identity.ts. */
interface AuthRecordFields {
  id: string;
  getString(field: string): string;
  getBool(field: string): boolean;
}

/**
 * A fleet_workers record (the request's auth record) as identity.ts reads it:
 * PocketBase loaded it for this request. `hasField` tells a field the
 * collection lacks (an admin removed it) from an empty one, so a missing
 * `queues` or `disabled` fails closed instead of reading as "every queue" or
 * "enabled".
 */
export function workerAuth(rec: AuthRecordFields, hasField: (name: string) => boolean): CallerAuth {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null,
  };
}

/** A record's protocol fields as a plain JobRow (a plain object: the decisions and views read it in JS). */
export function readRow(rec: RecordFields): JobRow {
  const row = { id: rec.id } as { [field: string]: string | number };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row as unknown as JobRow;
}

/**
 * The records a record query (of probe_jobs, from either hooks API) finds for a
 * where clause from src/lib/queries, in an order, at most `limit`. The select
 * list is all columns, then the lease as the lease rule judges it
 * (LEASE_AS_JUDGED_SQL), which replaces the column's value in the record (the
 * later column of a name wins).
 */
export function findJudgedRecords<R>(query: dbx.SelectQuery, where: WhereClause, order: readonly string[], limit: number): R[] {
  const records = arrayOf(new Record());
  query
    .select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL)
    .andWhere($dbx.exp(where.sql, where.params))
    .orderBy(...order)
    .limit(limit)
    .all(records);
  return records as unknown as R[];
}

/** What both APIs' records offer the protocol's writes. */
interface WritableRecord {
  set(field: string, value: unknown): void;
}

/**
 * Sets a patch's (or a new row's) fields on a record. JSON fields get JSON
 * text: PocketBase re-parses a plain string set on a json field (`"123"`
 * would be stored as the number 123).
 */
export function setFields(rec: WritableRecord, fields: JobPatch | JobInsert): void {
  for (const field in fields) {
    const value = (fields as { [field: string]: unknown })[field];
    if (value === undefined) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}

/** Every row of a query (`shape`: its columns with a value of each one's type). Throws when it fails. */
export function readAll<T extends object>(db: dbx.Builder, query: WhereClause, shape: T): T[] {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows as unknown as T[];
}

/** A statement that writes; answers the rows it changed. Throws when it fails. */
export function executeStatement(db: dbx.Builder, statement: WhereClause): number {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

/**
 * One row of a read-only query; `shape` names its columns with a value of each
 * one's type. null when the query failed (logged).
 */
/** Every row of a read-only query; null when the query failed (logged). */
export function readAllOrNull<T extends object>(db: dbx.Builder, query: WhereClause, shape: T): T[] | null {
  try {
    return readAll(db, query, shape);
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}

export function readOne<T extends object>(db: dbx.Builder, query: WhereClause, shape: T): T | null {
  const row = new DynamicModel(shape) as unknown as T;
  try {
    db.newQuery(query.sql).bind(query.params).one(row);
    return row;
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}
