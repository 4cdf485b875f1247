/**
 * The part of PocketBase's hooks runtime that every supported version spells
 * the same way (`$security`, `$os`, `$app.store()`, `$app.logger()`, a
 * dbx.Builder's raw queries into DynamicModels): both adapters use these, and
 * both hooks tsconfigs check them against their own API's types.
 */
import { JOB_ROW_SHAPE, type JobRow } from "../lib/job-row.js";
import { jobRowsQuery, type WhereClause } from "../lib/queries.js";
import { QUERY_FAILED } from "./contract.js";

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

/**
 * Rows matching a where clause from src/lib/queries, as stored: a raw query
 * into DynamicModels, not through record loading, which rewrites a date
 * PocketBase can parse into its own layout (the handlers would then judge a
 * hand-edited lease differently from the SQL that found it).
 */
export function readJobRows(db: dbx.Builder, where: WhereClause, order: readonly string[], limit: number): JobRow[] {
  const query = jobRowsQuery(where, order, limit);
  const models = arrayOf(new DynamicModel(JOB_ROW_SHAPE)) as unknown as JobRow[];
  db.newQuery(query.sql).bind(query.params).all(models);
  // Plain objects: the decisions copy rows with Object.assign, which sees no fields on a Go value.
  return models.map((model) => {
    const row = {} as { [column: string]: unknown };
    for (const column in JOB_ROW_SHAPE) row[column] = model[column as keyof JobRow];
    return row as unknown as JobRow;
  });
}

/**
 * One row of a read-only query; `shape` names its columns with a value of each
 * one's type. null when the query failed (logged).
 */
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
