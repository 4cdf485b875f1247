// The raw SQL route of the test-only hook (support/hooks*/raw-sql.pb.js) on a
// server of a test's own: write what the record API would refuse, read what
// it would normalise, ask SQLite for its plan.
import { expect } from "vitest";
import { post, type RequestOptions } from "./fleet-api";

type Params = Record<string, string | number>;

/** Runs a statement; it must succeed. */
export async function rawSql(on: RequestOptions, statement: string, params: Params = {}): Promise<void> {
  const res = await post("/api/test/sql", { sql: statement, params }, on);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The first row's `value` column, as text. */
export async function rawSqlValue(on: RequestOptions, query: string, params: Params = {}): Promise<string> {
  const res = await post("/api/test/sql", { sql: query, params, read: true }, on);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return String((res.body as { value: unknown }).value);
}

/** Every row's text `columns` (a statement's RETURNING too). */
export async function rawSqlRows<C extends string>(on: RequestOptions, query: string, params: Params, columns: readonly C[]): Promise<Record<C, string>[]> {
  const res = await post("/api/test/sql", { sql: query, params, columns }, on);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { rows: Record<C, string>[] }).rows;
}
