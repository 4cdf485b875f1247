// The raw SQL route of the test-only hook (support/hooks*/raw-sql.pb.js) on a
// server of a test's own: write what the record API would refuse, read what
// it would normalise, ask SQLite for its plan. Every test reaches the route
// through these three.
import { post, type RequestOptions } from "./fleet-api";

/** Bound parameters ({:name} in the text), as JSON sends them. */
export type SqlParams = Record<string, unknown>;

async function ask(on: RequestOptions, body: { sql: string; params: SqlParams; read?: true; columns?: readonly string[] }): Promise<unknown> {
  const res = await post("/api/test/sql", body, on);
  if (res.status !== 200) throw new Error(`raw SQL answered HTTP ${res.status}: ${JSON.stringify(res.body)}\n${body.sql}`);
  return res.body;
}

/** Runs a statement; it must succeed. */
export async function rawSql(on: RequestOptions, statement: string, params: SqlParams = {}): Promise<void> {
  await ask(on, { sql: statement, params });
}

/** The first row's `value` column, as text. */
export async function rawSqlValue(on: RequestOptions, query: string, params: SqlParams = {}): Promise<string> {
  return String(((await ask(on, { sql: query, params, read: true })) as { value: unknown }).value);
}

/** Every row's text `columns` (a statement's RETURNING too). */
export async function rawSqlRows<C extends string>(on: RequestOptions, query: string, params: SqlParams, columns: readonly C[]): Promise<Record<C, string>[]> {
  return ((await ask(on, { sql: query, params, columns })) as { rows: Record<C, string>[] }).rows;
}
