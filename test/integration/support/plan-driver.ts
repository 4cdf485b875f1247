// Runs src/lib's set-based plans (batch-plans.ts, claim-plan.ts) against a
// real PocketBase's SQLite, statement by statement, through the test-only
// raw SQL route (hooks/raw-sql.pb.js), and reads rows back as stored: what
// the differential tests compare with their model (test/support/batch-model.ts).
import { afterAll, beforeAll } from "vitest";
import type { JobBatch } from "../../../src/lib/job-row";
import { formatPbDate } from "../../../src/lib/lease";
import type { WhereClause } from "../../../src/lib/queries";
import type { JobView } from "../../../src/lib/types";
import type { StoredRow } from "../../support/batch-model";
import type { RequestOptions } from "./fleet-api";
import { startOwnServer, type OwnServer } from "./own-server";
import { rawSql, rawSqlRows, rawSqlValue, type SqlParams } from "./raw-sql";

/** Every column the rules read or write, with updated. */
export const COLUMNS = [
  "id", "created", "updated", "probe_key", "status", "claimed_by", "lease_expires_at", "lease_token", "version", "reclaim_count",
  "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds", "claimed_at", "start_by", "queue", "group_key", "progress",
  "result", "last_error", "run_at", "finished_at", "requeued_at", "dead_lettered_at", "priority", "payload", "enqueue_index", "unique_key",
] as const;

export class PlanDriver {
  constructor(private readonly opts: RequestOptions) {}

  sql(text: string, params: SqlParams = {}): Promise<void> {
    return rawSql(this.opts, text, params);
  }

  readValue(text: string, params: SqlParams = {}): Promise<string> {
    return rawSqlValue(this.opts, text, params);
  }

  /** Rows as stored, inserted past the record API's normalisation, 500 a statement. */
  async insertRows(rows: readonly StoredRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      await this.sql(
        `INSERT INTO probe_jobs (${COLUMNS.join(", ")}) SELECT ${COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(", ")} ` +
          "FROM json_each({:rows})",
        { rows: JSON.stringify(rows.slice(i, i + 500)) },
      );
    }
  }

  /** The rows of these ids (null: every row), every column as stored. */
  async readRows(ids: readonly string[] | null): Promise<Map<string, StoredRow>> {
    const members = COLUMNS.map((c) => `'${c}', ${c}`).join(", ");
    const where = ids === null ? "" : " WHERE id IN (SELECT value FROM json_each({:ids}))";
    const text = await this.readValue(
      `SELECT COALESCE(json_group_array(json_object(${members})), '[]') AS value FROM probe_jobs${where}`,
      ids === null ? {} : { ids: JSON.stringify(ids) },
    );
    return new Map((JSON.parse(text) as StoredRow[]).map((r) => [r.id, r]));
  }

  /**
   * Runs a synchronous plan against the server: the plan is run again from the
   * start after each remote answer, replaying the answers it had (the plan is
   * deterministic given them, and `restart` resets whatever it draws), until
   * it finishes. Each query or statement is sent once.
   */
  async drive<T>(plan: (batch: JobBatch) => T, restart: () => void = () => {}): Promise<{ result: T; noted: JobView[]; statements: number }> {
    const answers: unknown[] = [];
    for (;;) {
      let k = 0;
      let ask: { kind: Ask; query: WhereClause; shape?: object } | null = null;
      const noted: JobView[] = [];
      const next = (kind: Ask, query: WhereClause, shape?: object): unknown => {
        if (k < answers.length) return answers[k++];
        ask = { kind, query, shape };
        throw ASKED;
      };
      const batch: JobBatch = {
        find: () => { throw new Error("the plans do not find"); },
        write: () => { throw new Error("the plans do not write"); },
        insert: () => { throw new Error("the plans do not insert"); },
        queryAll: (query, shape) => next("rows", query, shape) as never,
        queryOne: (query, shape) => next("query", query, shape) as never,
        execute: (statement) => next("execute", statement) as number,
        noteWritten: (changes) => { noted.push(...changes); },
      };
      restart();
      try {
        const result = plan(batch);
        return { result, noted, statements: answers.length };
      } catch (err) {
        if (err !== ASKED || ask === null) throw err;
      }
      const asked = ask as { kind: Ask; query: WhereClause; shape?: object };
      if (asked.kind === "execute") {
        await this.sql(asked.query.sql, asked.query.params);
        answers.push(1);
      } else if (asked.kind === "rows") {
        // Every row as it comes (a statement's RETURNING cannot be wrapped in a SELECT): text columns.
        const columns = Object.keys(asked.shape ?? {});
        const bad = columns.filter((c) => typeof (asked.shape as Record<string, unknown>)[c] !== "string");
        if (bad.length > 0) throw new Error(`the driver reads text columns of rows, not ${bad.join(", ")}`);
        answers.push(await rawSqlRows(this.opts, asked.query.sql, asked.query.params, columns));
      } else {
        const keys = Object.keys(asked.shape ?? {});
        // The first row's columns as JSON, or null when there is none (as the adapter's queryOne answers).
        const value = await this.readValue(
          `SELECT COALESCE((SELECT json_object(${keys.map((c) => `'${c}', ${c}`).join(", ")}) FROM (${asked.query.sql}) LIMIT 1), 'null') AS value`,
          asked.query.params,
        );
        answers.push(JSON.parse(value));
      }
    }
  }
}
const ASKED = Symbol("asked the server");
type Ask = "query" | "execute" | "rows";

/**
 * A PlanDriver on a PocketBase of the test file's own (with the raw SQL
 * route), started before the file's tests and stopped after them.
 */
export function ownServerPlanDriver(): () => PlanDriver {
  let server: OwnServer | undefined;
  let driver: PlanDriver | undefined;
  beforeAll(async () => {
    // No cron maintenance: its flow upkeep would fail rows past their start_by under the model's feet (a CI run saw it).
    server = await startOwnServer({ testHooks: ["raw-sql.pb.js"], env: { PB_FLEET_MAINTENANCE_CRON: "off" } });
    driver = new PlanDriver({ baseUrl: server.url, token: server.token });
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (driver === undefined) throw new Error("the plan driver's PocketBase has not started");
    return driver;
  };
}

/** A seeded random source's draws, as the differential tests use them. */
export interface Draws {
  random: () => number;
  pick: <T>(xs: readonly T[]) => T;
  int: (lo: number, hi: number) => number;
}

export function drawsOf(random: () => number): Draws {
  return {
    random,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T,
    int: (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1)),
  };
}

/**
 * `count` random rows of every status, lease state (live, expired, exactly
 * on one of the batches' instants, unreadable, not a calendar instant,
 * empty), token, attempts and cap, orphan count, timeout and deadline, due
 * time, start_by, queue, group and priority, around `baseMs`. The batches of
 * a test run at baseMs + b * stepMs (b < batches), half of them exactly there.
 */
export function randomJobRows(
  d: Draws, count: number, opts: { baseMs: number; stepMs: number; batches: number; idPrefix: string; workers: readonly string[]; tokens: readonly string[] },
): StoredRow[] {
  const { pick, int, random } = d;
  const { baseMs, stepMs, batches, idPrefix, workers, tokens } = opts;
  return Array.from({ length: count }, (_, n): StoredRow => {
    const at = (spreadMs: number) => formatPbDate(baseMs + int(-spreadMs, spreadMs));
    // Live for the whole run, unless a heartbeat caps it at a deadline.
    const live = () => formatPbDate(baseMs + int(90_000, 600_000));
    // Exactly some batch's time: the `>` and `>=` of the lease and deadline rules.
    const onGrid = (minusMs = 0) => formatPbDate(baseMs + int(0, batches - 1) * stepMs - minusMs);
    const timeout = pick([0, 0, 0, 5, 60, 90]);
    const held = random() < 0.6;
    return {
      id: `${idPrefix}${String(n).padStart(15 - idPrefix.length, "0")}`,
      created: formatPbDate(baseMs - 3_600_000 + int(0, count)), updated: formatPbDate(baseMs - 3_600_000),
      probe_key: `${idPrefix}-${n}`,
      status: held ? pick(["claimed", "running"]) : pick(["pending", "done", "failed", "cancelled", "odd"]),
      claimed_by: pick([...workers, ...workers, ""]),
      lease_expires_at: pick([
        live(), live(), live(), at(120_000), at(3_000), onGrid(), onGrid(), "", "soon", "2026-02-30 10:00:00.000Z", "2026-12-02T12:00:00Z",
      ]),
      lease_token: pick(tokens),
      version: int(0, 9), reclaim_count: int(0, 3), consecutive_orphan_count: int(0, 4),
      // Past 13 attempts the backoff reaches its one-hour cap.
      attempts: random() < 0.8 ? int(0, 6) : int(10, 40), max_attempts: pick([0, 1, 3, 5, 25, 50]),
      timeout_seconds: timeout,
      claimed_at: timeout > 0 && random() < 0.4 ? onGrid(timeout * 1000) : pick([at(90_000), "", "bad"]),
      start_by: pick(["", "", at(60_000)]),
      queue: pick(["", "default", "q2", "q3"]), group_key: pick(["", "", "g1", "g2"]),
      progress: pick(["null", "{\"pct\":5}", ""]), result: pick(["null", "", "{\"ok\":1}"]),
      last_error: pick(["", "earlier"]), run_at: pick([at(60_000), onGrid()]), finished_at: pick(["", at(60_000)]), requeued_at: "",
      dead_lettered_at: "", priority: int(-2, 2), payload: pick(["{}", "{\"url\":\"https://example.test/\u00e9\"}", "null"]),
      enqueue_index: int(0, 3), unique_key: "",
    };
  });
}
