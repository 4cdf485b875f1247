// The flow control migration (1764461200_added_flow_control.js, the suite's
// hooks line) on a real PocketBase of the suite's version, over a data dir of
// today's schema (every step before it) holding rows of every state: `migrate
// up` adds probe_jobs' group_key / timeout_seconds / start_by and their
// indexes, probe_schedules' queue / group_key, the collection probe_flow
// (admins only, one row per scope) and the table probe_flow_claims; the old
// rows keep their data and read as group "", timeout 0, start_by "". Applied
// once more over its own result (its _migrations row removed, and the claims
// table dropped) it succeeds and changes nothing but what was missing.
// `migrate down` removes all of it, the rows intact; `migrate up` again
// restores it, and the fleet's bundle serves flow control on it.
import { execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensurePocketBase } from "../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../scripts/pocketbase/server.mjs";
import { futureDate, get, pastDate, post, randomKey, type ApiResponse, type RequestOptions } from "./support/fleet-api";
import { layout, type Line } from "./support/pocketbase-line";
import { rawSql, rawSqlValue } from "./support/raw-sql";

const FLOW_STEP_FROM = "1764461200";
const JOBS = "/api/collections/probe_jobs/records";
const SCHEDULES = "/api/collections/probe_schedules";
const FLOW = "/api/collections/probe_flow";
const CREDENTIALS = { adminEmail: "flow-migration@pb-fleet.test", adminPassword: "flow-migration-password" };
const JOB_FIELDS = ["group_key", "timeout_seconds", "start_by"];
const SCHEDULE_FIELDS = ["queue", "group_key"];
const JOB_INDEXES = {
  idx_probe_jobs_group: "CREATE INDEX `idx_probe_jobs_group` ON `probe_jobs` (`group_key`, `status`, `lease_expires_at`) WHERE group_key != ''",
  idx_probe_jobs_start_by: "CREATE INDEX `idx_probe_jobs_start_by` ON `probe_jobs` (`status`, `start_by`) WHERE start_by != ''",
};
const FLOW_INDEXES = {
  idx_probe_flow_scope: "CREATE UNIQUE INDEX `idx_probe_flow_scope` ON `probe_flow` (`scope`, `name`)",
  idx_probe_flow_parked: "CREATE INDEX `idx_probe_flow_parked` ON `probe_flow` (`parked_until`) WHERE parked_until != ''",
  idx_probe_flow_paused: "CREATE INDEX `idx_probe_flow_paused` ON `probe_flow` (`scope`, `name`) WHERE paused = 1",
};

type Row = Record<string, unknown> & { id: string; created: string };

const root = mkdtempSync(join(tmpdir(), "pb-fleet-flow-migration-"));
const dirs = {
  data: join(root, "pb_data"),
  hooks: join(root, "pb_hooks"),
  /** raw SQL and the fleet's bundle: for the last step only. */
  hooksWithBundle: join(root, "pb_hooks_bundle"),
  oldMigrations: join(root, "pb_migrations_old"),
  migrations: "",
};
let binary: { path: string; line: Line };
let flowSteps: string[] = [];

async function withServer<T>(migrationsDir: string, use: (opts: RequestOptions) => Promise<T>, hooksDir = dirs.hooks): Promise<T> {
  const server = await startPocketBase({
    binary: binary.path, line: binary.line, dataDir: dirs.data, hooksDir, migrationsDir, ...CREDENTIALS,
    env: { PB_FLEET_SWEEP_CRON: "off" },
  });
  try {
    return await use({ baseUrl: server.url, token: server.token });
  } finally {
    await server.stop();
  }
}

function flags(): string[] {
  return ["--dir", dirs.data, "--migrationsDir", dirs.migrations, "--hooksDir", dirs.hooks, "--hooksWatch=false"];
}

async function migrateUp(): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(binary.path, ["migrate", "up", ...flags()], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

/** `migrate down COUNT`, answering its y/N question (see migration-queue-fields.test.ts for the two prompts). */
function migrateDown(count: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary.path, ["migrate", "down", String(count), ...flags()], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    let reported = 0;
    let answered = false;
    let quiet: NodeJS.Timeout | undefined;
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const asked = output.split("\x1b[6n").length - 1;
      for (; reported < asked; reported++) child.stdin.write("\x1b[24;80R");
      if (!answered && output.includes("(y/N)")) {
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          answered = true;
          child.stdin.end("y\n");
        }, 300);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.stdin.on("error", () => {});
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(killer);
      clearTimeout(quiet);
      if (code === 0) resolve(output);
      else reject(new Error(`migrate down ${count} failed (exit ${code ?? signal}):\n${output.slice(-3000)}`));
    });
  });
}

const sql = rawSql;
const sqlValue = rawSqlValue;

const columnsOf = async (opts: RequestOptions, table: string) =>
  (await sqlValue(opts, `SELECT COALESCE(group_concat(name, ','), '') AS value FROM pragma_table_info('${table}')`)).split(",").filter((c) => c !== "");
const indexSql = (opts: RequestOptions, name: string) =>
  sqlValue(opts, "SELECT COALESCE((SELECT sql FROM sqlite_master WHERE type = 'index' AND name = {:name}), '') AS value", { name });
const tableExists = async (opts: RequestOptions, name: string) =>
  (await sqlValue(opts, "SELECT COUNT(*) AS value FROM sqlite_master WHERE type = 'table' AND name = {:name}", { name })) === "1";
/** Every index of probe_jobs, probe_flow and probe_schedules, in name order: what a second run must not duplicate. */
const allIndexes = (opts: RequestOptions) =>
  sqlValue(opts, "SELECT COALESCE(group_concat(sql, '\n'), '') AS value FROM (SELECT sql FROM sqlite_master WHERE type = 'index' " +
    "AND tbl_name IN ('probe_jobs', 'probe_flow', 'probe_schedules', 'probe_flow_claims') AND sql IS NOT NULL ORDER BY name)");
const oneLine = (s: string) => s.replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")");

/** A collection's field names, on either line (0.22: schema, 0.23+: fields). */
async function fieldNames(opts: RequestOptions, path: string): Promise<string[]> {
  const res = await get(path, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return ((res.body.schema ?? res.body.fields) as { name: string }[]).map((f) => f.name);
}

async function readRows(opts: RequestOptions, path: string, ids: string[]): Promise<Row[]> {
  return Promise.all(ids.map(async (id) => {
    const res = await get(`${path}/${id}`, opts);
    if (res.status !== 200) throw new Error(`reading ${path}/${id}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Row;
  }));
}

function without(row: Row, names: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([key]) => !names.includes(key)));
}

const ok = (res: ApiResponse, what: string) => expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);

let jobIds: string[] = [];
let scheduleIds: string[] = [];
let jobsBefore: Row[] = [];
let schedulesBefore: Row[] = [];

beforeAll(async () => {
  const found = await ensurePocketBase({ version: inject("pbVersion"), log: () => {} });
  binary = { path: found.path, line: found.line };
  const files = layout(binary.line);
  dirs.migrations = files.migrationsDir;
  mkdirSync(dirs.hooks);
  mkdirSync(dirs.hooksWithBundle);
  copyFileSync(join(files.testHooksDir, "raw-sql.pb.js"), join(dirs.hooks, "raw-sql.pb.js"));
  copyFileSync(join(files.testHooksDir, "raw-sql.pb.js"), join(dirs.hooksWithBundle, "raw-sql.pb.js"));
  copyFileSync(files.bundle, join(dirs.hooksWithBundle, "fleet.pb.js"));
  mkdirSync(dirs.oldMigrations);
  const all = readdirSync(dirs.migrations).filter((f) => f.endsWith(".js")).sort();
  for (const file of all.filter((f) => f < FLOW_STEP_FROM)) copyFileSync(join(dirs.migrations, file), join(dirs.oldMigrations, file));
  flowSteps = all.filter((f) => f >= FLOW_STEP_FROM);
  expect(flowSteps[0]).toBe("1764461200_added_flow_control.js");

  // today's schema, and rows of every state it has
  [jobsBefore, schedulesBefore] = await withServer(dirs.oldMigrations, async (opts) => {
    const cols = await columnsOf(opts, "probe_jobs");
    expect(cols).toContain("queue");
    for (const name of JOB_FIELDS) expect(cols).not.toContain(name);
    expect((await get(FLOW, opts)).status).toBe(404);
    const insert = async (fields: Record<string, unknown>) => {
      const res = await post(JOBS, { probe_key: randomKey("old"), status: "pending", ...fields }, opts);
      ok(res, `a row ${JSON.stringify(fields)}`);
      return res.body as Row;
    };
    const rows = [
      await insert({}),
      await insert({ queue: "emails", priority: 7, payload: { to: "a@b.c" }, max_attempts: 5, unique_key: "u-1", run_at: futureDate(3_600_000) }),
      await insert({ queue: "probes", status: "claimed", claimed_by: "w-a", claimed_at: pastDate(5_000), lease_expires_at: futureDate(), lease_token: "tok", version: 3, attempts: 1 }),
      await insert({ status: "running", claimed_by: "w-b", lease_expires_at: pastDate(), version: 5, attempts: 2, reclaim_count: 1, consecutive_orphan_count: 1, progress: { pct: 40 } }),
      await insert({ status: "done", finished_at: pastDate(1_000), result: { ok: true }, version: 4 }),
      await insert({ status: "failed", last_error: "boom", dead_lettered_at: pastDate(2_000), finished_at: pastDate(2_000) }),
      await insert({ status: "cancelled", queue: "emails" }),
    ];
    jobIds = rows.map((r) => r.id);
    const schedule = await post(`${SCHEDULES}/records`, { name: randomKey("nightly"), probe_key: "p", cron: "0 3 * * *", enabled: true, priority: 2, max_attempts: 3, payload: { a: 1 } }, opts);
    ok(schedule, "a schedule");
    scheduleIds = [schedule.body.id];
    return [await readRows(opts, JOBS, jobIds), await readRows(opts, `${SCHEDULES}/records`, scheduleIds)];
  });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function expectFlowSchema(opts: RequestOptions): Promise<void> {
  expect(await columnsOf(opts, "probe_jobs")).toEqual(expect.arrayContaining(JOB_FIELDS));
  for (const [name, text] of Object.entries(JOB_INDEXES)) expect(oneLine(await indexSql(opts, name)), name).toBe(text);
  for (const [name, text] of Object.entries(FLOW_INDEXES)) expect(oneLine(await indexSql(opts, name)), name).toBe(text);
  expect(await fieldNames(opts, SCHEDULES)).toEqual(expect.arrayContaining(SCHEDULE_FIELDS));
  const flow = await get(FLOW, opts);
  expect(flow.status).toBe(200);
  expect(flow.body).toMatchObject({ type: "base", listRule: null, viewRule: null, createRule: null, updateRule: null, deleteRule: null });
  expect(await fieldNames(opts, FLOW)).toEqual(expect.arrayContaining(["scope", "name", "paused", "concurrency", "rate_limit", "rate_period", "parked_until"]));
  expect(await tableExists(opts, "probe_flow_claims")).toBe(true);
  expect((await columnsOf(opts, "probe_flow_claims")).sort()).toEqual(["at", "expires", "name", "scope"]);
  expect(oneLine(await indexSql(opts, "idx_probe_flow_claims_scope"))).toBe("CREATE INDEX idx_probe_flow_claims_scope ON probe_flow_claims (scope, name, at)");
  // admins only: no token lists nothing
  expect((await get(`${FLOW}/records`, { ...opts, token: null })).status).not.toBe(200);
}

/** The old rows: every old field as before, the new ones at their defaults. */
async function expectOldRowsDefaulted(opts: RequestOptions): Promise<void> {
  const jobs = await readRows(opts, JOBS, jobIds);
  expect(jobs.map((r) => without(r, JOB_FIELDS))).toEqual(jobsBefore);
  for (const row of jobs) expect([row["group_key"], row["timeout_seconds"], row["start_by"]], `${row.id}'s flow fields`).toEqual(["", 0, ""]);
  const schedules = await readRows(opts, `${SCHEDULES}/records`, scheduleIds);
  expect(schedules.map((r) => without(r, SCHEDULE_FIELDS))).toEqual(schedulesBefore);
  for (const row of schedules) expect([row["queue"], row["group_key"]]).toEqual(["", ""]);
}

let newJobId = "";
let schemaAfterUp: { jobs: string[]; flow: string[]; schedules: string[]; indexes: string } | null = null;

async function schemaOf(opts: RequestOptions) {
  return {
    jobs: await columnsOf(opts, "probe_jobs"),
    flow: await columnsOf(opts, "probe_flow"),
    schedules: await columnsOf(opts, "probe_schedules"),
    indexes: await allIndexes(opts),
  };
}

describe("the flow control migration on a real PocketBase", () => {
  it("`migrate up` adds the fields, indexes, probe_flow and probe_flow_claims; old rows keep their data and read as no group, no timeout, no start_by", async () => {
    const output = await migrateUp();
    for (const file of flowSteps) expect(output).toContain(`Applied ${file}`);
    await withServer(dirs.migrations, async (opts) => {
      await expectFlowSchema(opts);
      await expectOldRowsDefaulted(opts);
      // the new fields take values; probe_flow holds one row per scope
      const job = await post(JOBS, { probe_key: randomKey("new"), status: "pending", queue: "emails", group_key: "host-a", timeout_seconds: 30, start_by: futureDate() }, opts);
      ok(job, "a row with flow fields");
      newJobId = job.body.id;
      expect(job.body).toMatchObject({ group_key: "host-a", timeout_seconds: 30 });
      ok(await post(`${FLOW}/records`, { scope: "group", name: "host-a", concurrency: 2 }, opts), "a probe_flow row");
      const twice = await post(`${FLOW}/records`, { scope: "group", name: "host-a", paused: true }, opts);
      expect(twice.status, "a second row of one scope").toBe(400);
      ok(await post(`${FLOW}/records`, { scope: "queue", name: "host-a", paused: true }, opts), "the same name as a queue");
      await sql(opts, "INSERT INTO probe_flow_claims (scope, name, at, expires) VALUES ('group', 'host-a', 1, 2)");
      schemaAfterUp = await schemaOf(opts);
    });
  });

  it("is idempotent: applied again over its own result it succeeds, recreates only what is missing, and keeps every row", async () => {
    await withServer(dirs.migrations, async (opts) => {
      // as if it had not run (its record gone), with one part of it missing
      await sql(opts, "DELETE FROM _migrations WHERE file = {:file}", { file: flowSteps[0]! });
      await sql(opts, "DROP TABLE probe_flow_claims");
    });
    const output = await migrateUp();
    expect(output).toContain(`Applied ${flowSteps[0]}`);
    await withServer(dirs.migrations, async (opts) => {
      expect(await schemaOf(opts)).toEqual(schemaAfterUp);
      await expectFlowSchema(opts);
      await expectOldRowsDefaulted(opts);
      const [job] = await readRows(opts, JOBS, [newJobId]);
      expect(job).toMatchObject({ group_key: "host-a", timeout_seconds: 30 });
      const flowRows = await get(`${FLOW}/records?perPage=50`, opts);
      expect(flowRows.body.items.map((r: Row) => [r["scope"], r["name"]]).sort()).toEqual([["group", "host-a"], ["queue", "host-a"]]);
      expect(await sqlValue(opts, "SELECT COUNT(*) AS value FROM probe_flow_claims")).toBe("0");
    });
    // and a plain second `migrate up` has nothing to do
    const again = await migrateUp();
    expect(again).not.toContain("Applied");
  });

  it("`migrate down` removes the fields, indexes, probe_flow and probe_flow_claims; the rows keep their other data", async () => {
    const output = await migrateDown(flowSteps.length);
    for (const file of flowSteps) expect(output).toContain(`Reverted ${file}`);
    await withServer(dirs.oldMigrations, async (opts) => {
      const cols = await columnsOf(opts, "probe_jobs");
      for (const name of JOB_FIELDS) expect(cols).not.toContain(name);
      for (const name of Object.keys(JOB_INDEXES)) expect(await indexSql(opts, name), name).toBe("");
      const scheduleFields = await fieldNames(opts, SCHEDULES);
      for (const name of SCHEDULE_FIELDS) expect(scheduleFields).not.toContain(name);
      expect((await get(FLOW, opts)).status).toBe(404);
      expect(await tableExists(opts, "probe_flow")).toBe(false);
      expect(await tableExists(opts, "probe_flow_claims")).toBe(false);
      expect(await readRows(opts, JOBS, jobIds)).toEqual(jobsBefore);
      expect(await readRows(opts, `${SCHEDULES}/records`, scheduleIds)).toEqual(schedulesBefore);
      const [job] = await readRows(opts, JOBS, [newJobId]);
      expect(job).toMatchObject({ queue: "emails", status: "pending" });
      expect(Object.keys(job!)).not.toContain("group_key");
    });
  });

  it("`migrate up` again restores it all; the rows read as before; the bundle serves flow control on it", async () => {
    const output = await migrateUp();
    for (const file of flowSteps) expect(output).toContain(`Applied ${file}`);
    await withServer(dirs.migrations, async (opts) => {
      expect(await schemaOf(opts)).toEqual(schemaAfterUp);
      await expectFlowSchema(opts);
      await expectOldRowsDefaulted(opts);
      // what the way down removed is gone: the new row's group, the scopes' settings
      const [job] = await readRows(opts, JOBS, [newJobId]);
      expect(job).toMatchObject({ queue: "emails", group_key: "", timeout_seconds: 0, start_by: "" });
      expect((await get(`${FLOW}/records`, opts)).body.totalItems).toBe(0);
    });
    await withServer(dirs.migrations, async (opts) => {
      const queue = randomKey("mq");
      const set = await post("/api/fleet/flow", { group: "host-b", concurrency: 1 }, opts);
      expect(set.body).toEqual({ flow: { group: "host-b", paused: false, concurrency: 1, rateLimit: null, parkedUntil: null } });
      const enq = await post("/api/fleet/enqueue", { jobs: [1, 2].map((i) => ({ probeKey: `${queue}/${i}`, queue, group: "host-b", timeoutSeconds: 60 })) }, opts);
      ok(enq, "enqueue");
      const first = await post("/api/fleet/claim-next", { workerId: "w", queue, limit: 5 }, opts);
      expect(first.body.jobs).toHaveLength(1);
      expect(first.body.jobs[0].job).toMatchObject({ group_key: "host-b", timeout_seconds: 60, queue });
      const second = await post("/api/fleet/claim", { jobId: enq.body.jobs[1].id, workerId: "w2" }, opts);
      expect(second.body).toEqual({ claimed: false, reason: "concurrency_limit" });
      const state = await get(`/api/fleet/flow?group=host-b`, opts);
      expect(state.body.groups).toMatchObject([{ name: "host-b", held: 1, due: 1 }]);
    }, dirs.hooksWithBundle);
  });
});
