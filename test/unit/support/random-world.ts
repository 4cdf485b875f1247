// Seeded random rows of every table src/lib's SQL reads, put both into real
// SQLite (sqlite-db.ts) and into the fake PocketBase's tables, for holding the
// two to the same answers (sql-on-real-sqlite.test.ts) and timing them.
import { formatPbDate, parsePbDate } from "../../../src/lib/lease";
import { leaseTexts } from "../../support/lease-texts";
import type { SqlTables, StoredEvent, StoredFlow, StoredFlowClaim, StoredRow, StoredSchedule } from "./fake-pocketbase";
import type { SqliteDb } from "./sqlite-db";

export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0, 0);
export const MINUTE = 60_000;
const ROWS_PER_WORLD = 80;

/** mulberry32: a small seeded PRNG, so every run (and every failure) is the same rows. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(values: readonly T[]): T => values[int(values.length)] as T;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Random = ReturnType<typeof prng>;

// Small domains, so rows collide on every column a query compares.
const STATUSES = ["pending", "pending", "pending", "claimed", "running", "done", "failed", "cancelled"] as const;
const PROBE_KEYS = ["a-1", "a-2", "a-10", "A-1", "ab", "b-1", "é-1", "a-\u{10FFFF}"];
export const PREFIXES = ["", "a-", "A", "é", "a-\u{10FFFF}"];
const QUEUES = ["default", "default", "", "q1", "q2"];
const GROUPS = ["", "", "g1", "g2"];
export const WORKERS = ["w1", "w2"];
const TOKENS = ["", "t1", "t2"];
/** PocketBase's date layout, as LEASE_AS_JUDGED_SQL's GLOB checks it. */
const PB_DATE_LAYOUT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/**
 * The lease texts of the one lease rule, less those in the layout that are no
 * calendar instant (month 13, Feb 30): jobRowsQuery's LEASE_AS_JUDGED_SQL
 * answers those as stored (its GLOB checks only the layout), the fake's
 * rowAsJson answers "" (a known disagreement, for the swap to settle).
 */
const RANDOM_LEASES = leaseTexts(NOW).map((l) => l.text).filter((text) => PB_DATE_LAYOUT.test(text) === (parsePbDate(text) !== null));
const dateNear = (r: Random) => formatPbDate(NOW + (r.int(121) - 60) * MINUTE);
export const dateOrEmpty = (r: Random, p = 0.5) => (r.chance(p) ? dateNear(r) : "");

function randomJob(r: Random, n: number, usedKeys: Set<string>): StoredRow {
  const status = r.pick(STATUSES);
  const held = status === "claimed" || status === "running";
  const leases = RANDOM_LEASES;
  // Unique keys are never reused (live or not), so no patch below can break the partial unique index.
  const uniqueKey = r.chance(0.3) ? `k${n}` : "";
  if (uniqueKey !== "") usedKeys.add(uniqueKey);
  const created = dateNear(r);
  return {
    id: `r${String(n).padStart(14, "0")}`,
    created, updated: created,
    probe_key: r.pick(PROBE_KEYS), status,
    claimed_by: held || r.chance(0.3) ? r.pick(WORKERS) : "",
    lease_expires_at: held ? r.pick(leases) : r.chance(0.2) ? r.pick(leases) : "",
    version: r.int(4), claimed_at: held ? dateNear(r) : dateOrEmpty(r, 0.2),
    finished_at: ["done", "failed", "cancelled"].includes(status) ? dateNear(r) : dateOrEmpty(r, 0.1),
    requeued_at: dateOrEmpty(r, 0.3), reclaim_count: r.int(3), consecutive_orphan_count: r.int(4),
    lease_token: held ? r.pick(TOKENS) : "",
    result: r.pick(["", "null", '{"ok":true}']), payload: r.pick(["", "null", '{"n":1}']), progress: r.pick(["", "null", "[1,2]"]),
    priority: r.pick([0, 0, 1, 2, -1]), run_at: dateNear(r), attempts: r.int(3), max_attempts: r.pick([0, 1, 3, 25]),
    last_error: r.pick(["", "boom"]), dead_lettered_at: status === "failed" && r.chance(0.5) ? dateNear(r) : "",
    unique_key: uniqueKey, enqueue_index: r.int(3), queue: r.pick(QUEUES), group_key: r.pick(GROUPS),
    timeout_seconds: r.pick([0, 0, 30]), start_by: dateOrEmpty(r, 0.2),
  };
}

const JSON_COLUMNS = ["result", "payload", "progress"];
/** A row as SQLite stores it: the fake's "" of a JSON field is the column's NULL. */
function asSqliteRow(row: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, JSON_COLUMNS.includes(k) && v === "" ? null : v]));
}
/**
 * A JSON column's value by its meaning: SQLite gives a column declared JSON
 * NUMERIC affinity, so the text "7" a write binds is stored as the integer 7,
 * where the fake keeps the text (same JSON). NULL and the fake's "" are "".
 */
function jsonMeaning(value: unknown): string {
  return value === null || value === "" ? "" : JSON.stringify(JSON.parse(String(value)));
}
/** A job row with its JSON columns by meaning, for comparing what SQLite and the fake store. */
export function storedJob(row: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, JSON_COLUMNS.includes(k) ? jsonMeaning(v) : v]));
}

function randomFlow(r: Random, n: number, taken: Set<string>): StoredFlow | null {
  const scope = r.pick(["queue", "group"] as const);
  const name = scope === "queue" ? r.pick(["default", "q1", "q2"]) : r.pick(["g1", "g2", "g3"]);
  if (taken.has(`${scope}/${name}`)) return null; // the (scope, name) unique index
  taken.add(`${scope}/${name}`);
  const stamp = dateNear(r);
  return {
    id: `f${String(n).padStart(14, "0")}`, created: stamp, updated: stamp, scope, name,
    paused: r.chance(0.3) ? 1 : 0, concurrency: r.pick([0, 1, 2]), rate_limit: r.pick([0, 1, 3]), rate_period: r.pick([0, 60]),
    parked_until: dateOrEmpty(r, 0.4),
  };
}

/** The same rows in real SQLite and in the fake's tables. */
export interface World {
  sqlite: SqliteDb;
  tables: SqlTables<StoredRow>;
  random: Random;
}

/** Seeds `sqlite` (emptied first) and a new set of fake tables with the same random rows. */
export function seedWorld(sqlite: SqliteDb, seed: number, jobCount = ROWS_PER_WORLD): World {
  const random = prng(seed);
  const usedKeys = new Set<string>();
  const jobs = Array.from({ length: jobCount }, (_, n) => randomJob(random, n, usedKeys));
  const takenScopes = new Set<string>();
  const flows = Array.from({ length: 6 }, (_, n) => randomFlow(random, n, takenScopes)).filter((f): f is StoredFlow => f !== null);
  const flowClaims: StoredFlowClaim[] = flows.flatMap((f) => Array.from({ length: random.int(4) }, () => {
    const at = NOW - random.int(120) * 1000;
    return { scope: f.scope, name: f.name, at, expires: at + f.rate_period * 1000 };
  }));
  const events: StoredEvent[] = Array.from({ length: 10 }, (_, n) => {
    const created = dateNear(random);
    return { id: `e${String(n).padStart(14, "0")}`, created, updated: created, source: "test", changes: "[]" };
  });
  const schedules: StoredSchedule[] = Array.from({ length: 8 }, (_, n) => ({
    id: `s${String(n).padStart(14, "0")}`, name: random.pick(["nightly", "hourly", "b", "a", "é"]) + n, probe_key: "p", cron: "* * * * *",
    payload: "", priority: 0, max_attempts: 0, enabled: random.chance(0.7), last_enqueued_for: dateOrEmpty(random), queue: "", group_key: "",
  }));

  sqlite.clear();
  sqlite.insert("probe_jobs", jobs.map(asSqliteRow));
  sqlite.insert("probe_flow", flows);
  sqlite.insert("probe_flow_claims", flowClaims);
  sqlite.insert("probe_job_events", events);
  sqlite.insert("probe_schedules", schedules.map((s) => asSqliteRow({ ...s, enabled: s.enabled ? 1 : 0 })));
  const tables: SqlTables<StoredRow> = {
    jobs: new Map(jobs.map((j) => [j.id, j])),
    schedules: new Map(schedules.map((s) => [s.id, s])),
    events: new Map(events.map((e) => [e.id, e])),
    flow: new Map(flows.map((f) => [f.id, f])),
    flowClaims,
  };
  return { sqlite, tables, random };
}
