// The queue migrations (1764460900 and later: probe_jobs' queue fields and
// indexes, probe_schedules) on a real PocketBase of the suite's version, over
// a data dir made by the migrations before them: rows written the old way get
// a due time (run_at = created) and zeros, the indexes are there, `migrate down`
// of the new steps gives the old schema back with the rows intact, `migrate up`
// again restores the queue schema, and the partial unique index admits one live
// row per unique_key beside any number of terminal ones.
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
import { rawSqlValue } from "./support/raw-sql";

/** The first file name of the queue steps: everything before it is the schema they upgrade. */
const QUEUE_STEPS_FROM = "1764460900";
const JOBS = "/api/collections/probe_jobs/records";
const SCHEDULES = "/api/collections/probe_schedules/records";
const CREDENTIALS = { adminEmail: "migrations@pb-fleet.test", adminPassword: "migrations-password" };
const QUEUE_FIELDS = ["payload", "run_at", "priority", "attempts", "max_attempts", "last_error", "dead_lettered_at", "unique_key", "progress", "enqueue_index", "queue",
  // flow control (docs/flow-control.md)
  "group_key", "timeout_seconds", "start_by"];
const WORKERS = "/api/collections/fleet_workers";
const UNIQUE_KEY_WHERE = "unique_key != '' AND status != 'done' AND status != 'failed' AND status != 'cancelled'";

type Row = Record<string, unknown> & { id: string; created: string };

const root = mkdtempSync(join(tmpdir(), "pb-fleet-migrations-"));
const dirs = {
  data: join(root, "pb_data"),
  hooks: join(root, "pb_hooks"),
  oldMigrations: join(root, "pb_migrations_old"),
  migrations: "", // the line's own folder, set in beforeAll
};
let binary: { path: string; line: Line };
let queueSteps: string[] = [];

/** Serves the data dir (startPocketBase runs `migrate up` on `migrationsDir` first), runs `use`, stops. */
async function withServer<T>(migrationsDir: string, use: (opts: RequestOptions) => Promise<T>): Promise<T> {
  const server = await startPocketBase({
    binary: binary.path,
    line: binary.line,
    dataDir: dirs.data,
    hooksDir: dirs.hooks,
    migrationsDir,
    ...CREDENTIALS,
  });
  try {
    return await use({ baseUrl: server.url, token: server.token });
  } finally {
    await server.stop();
  }
}

function flags(migrationsDir: string): string[] {
  return ["--dir", dirs.data, "--migrationsDir", migrationsDir, "--hooksDir", dirs.hooks, "--hooksWatch=false"];
}

async function migrateUp(): Promise<string> {
  // A failure rejects with PocketBase's output in the error.
  const { stdout, stderr } = await promisify(execFile)(binary.path, ["migrate", "up", ...flags(dirs.migrations)], {
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout + stderr;
}

/**
 * `migrate down COUNT`, answering its y/N question. 0.22 and early 0.23.x ask
 * through survey, which first asks the terminal where the cursor is (ESC[6n)
 * and reads the answer from stdin: each such question gets a cursor report,
 * then, once the prompt is shown and the output has been quiet for a moment,
 * "y". Later versions read one line from stdin.
 */
function migrateDown(count: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary.path, ["migrate", "down", String(count), ...flags(dirs.migrations)], { stdio: ["pipe", "pipe", "pipe"] });
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
    child.stdin.on("error", () => {}); // the process may be gone before "y" is written
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(killer);
      clearTimeout(quiet);
      if (code === 0) resolve(output);
      else reject(new Error(`migrate down ${count} failed (exit ${code ?? signal}):\n${output.slice(-3000)}`));
    });
  });
}

const sqlValue = rawSqlValue;

const indexSql = (opts: RequestOptions, name: string) =>
  sqlValue(opts, "SELECT COALESCE((SELECT sql FROM sqlite_master WHERE type = 'index' AND name = {:name}), '') AS value", { name });
const columns = async (opts: RequestOptions) =>
  (await sqlValue(opts, "SELECT group_concat(name, ',') AS value FROM pragma_table_info('probe_jobs')")).split(",");
/** PocketBase rebuilds CREATE INDEX text with one column per line: compare it on one line. */
const oneLine = (sql: string) => sql.replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")");

async function readRows(opts: RequestOptions, ids: string[]): Promise<Row[]> {
  return Promise.all(
    ids.map(async (id) => {
      const res = await get(`${JOBS}/${id}`, opts);
      if (res.status !== 200) throw new Error(`reading probe_jobs/${id}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as Row;
    }),
  );
}

/** The old fields of a row: what every step must leave as it was. */
function oldPart(row: Row): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([key]) => !QUEUE_FIELDS.includes(key)));
}

function expectBackfilled(rows: Row[]): void {
  for (const row of rows) {
    expect(row["run_at"], row.id).toBe(row.created);
    for (const name of ["priority", "attempts", "max_attempts", "enqueue_index"]) expect(row[name], `${row.id}.${name}`).toBe(0);
    for (const name of ["last_error", "unique_key", "dead_lettered_at"]) expect(row[name], `${row.id}.${name}`).toBe("");
    for (const name of ["payload", "progress"]) expect(row[name], `${row.id}.${name}`).toBeNull();
    // named queues (docs/flow-control.md): every old row is in the default queue, with no group, timeout or start_by
    expect(row["queue"], `${row.id}.queue`).toBe("default");
    expect([row["group_key"], row["timeout_seconds"], row["start_by"]], `${row.id}'s flow fields`).toEqual(["", 0, ""]);
  }
}

async function expectQueueSchema(opts: RequestOptions): Promise<void> {
  expect(await columns(opts)).toEqual(expect.arrayContaining(QUEUE_FIELDS));
  expect(await indexSql(opts, "idx_probe_jobs_status_created")).toBe("");
  expect(oneLine(await indexSql(opts, "idx_probe_jobs_claim_order"))).toBe(
    "CREATE INDEX `idx_probe_jobs_claim_order` ON `probe_jobs` (`status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)",
  );
  expect(await indexSql(opts, "idx_probe_jobs_unique_key")).toBe(
    `CREATE UNIQUE INDEX \`idx_probe_jobs_unique_key\` ON \`probe_jobs\` (\`unique_key\`) WHERE ${UNIQUE_KEY_WHERE}`,
  );
  expect(await indexSql(opts, "idx_probe_schedules_name")).toBe("CREATE UNIQUE INDEX `idx_probe_schedules_name` ON `probe_schedules` (`name`)");
  expect(oneLine(await indexSql(opts, "idx_probe_jobs_queue_claim"))).toBe(
    "CREATE INDEX `idx_probe_jobs_queue_claim` ON `probe_jobs` (`queue`, `status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)",
  );
  // worker identities: an auth collection only admins manage
  const workers = await get(WORKERS, opts);
  expect(workers.status).toBe(200);
  expect(workers.body).toMatchObject({ type: "auth", listRule: null, viewRule: null, createRule: null, updateRule: null, deleteRule: null });
}

const created = (res: ApiResponse, what: string) => expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);
const refused = (res: ApiResponse, what: string) => expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);

/** A probe_jobs row through the record API, as an admin/superuser (any fields, old or new). */
async function insert(opts: RequestOptions, fields: Record<string, unknown>): Promise<Row> {
  const res = await post(JOBS, { probe_key: randomKey("old"), status: "pending", ...fields }, opts);
  created(res, `creating ${JSON.stringify(fields).slice(0, 200)}`);
  return res.body as Row;
}

// Written the old way, before the queue steps: the states the old protocol leaves.
let ids: string[] = [];
let before: Row[] = [];

beforeAll(async () => {
  const found = await ensurePocketBase({ version: inject("pbVersion"), log: () => {} });
  binary = { path: found.path, line: found.line };
  const files = layout(binary.line);
  dirs.migrations = files.migrationsDir;
  mkdirSync(dirs.hooks);
  copyFileSync(join(files.testHooksDir, "raw-sql.pb.js"), join(dirs.hooks, "raw-sql.pb.js"));
  mkdirSync(dirs.oldMigrations);
  const all = readdirSync(dirs.migrations).filter((f) => f.endsWith(".js")).sort();
  for (const file of all.filter((f) => f < QUEUE_STEPS_FROM)) copyFileSync(join(dirs.migrations, file), join(dirs.oldMigrations, file));
  queueSteps = all.filter((f) => f >= QUEUE_STEPS_FROM);

  before = await withServer(dirs.oldMigrations, async (opts) => {
    expect(await columns(opts)).not.toContain("run_at");
    refused(await post(JOBS, { probe_key: randomKey("old"), status: "cancelled" }, opts), "a cancelled row before the queue steps");
    const rows = [
      await insert(opts, {}),
      await insert(opts, { status: "claimed", claimed_by: "worker-a", claimed_at: pastDate(5_000), lease_expires_at: futureDate(60_000), lease_token: "token-a", version: 3 }),
      await insert(opts, {
        status: "running",
        claimed_by: "worker-b",
        claimed_at: pastDate(90_000),
        lease_expires_at: pastDate(30_000),
        lease_token: "token-b",
        version: 7,
        reclaim_count: 2,
        consecutive_orphan_count: 1,
        requeued_at: pastDate(100_000),
      }),
      await insert(opts, { status: "done", finished_at: pastDate(1_000), result: { ok: true, n: [1, 2] }, version: 4 }),
      await insert(opts, { status: "failed", finished_at: pastDate(2_000), result: "boom", version: 2 }),
    ];
    ids = rows.map((r) => r.id);
    return readRows(opts, ids);
  });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the queue migrations on a real PocketBase", () => {
  it("`migrate up` adds the queue fields and indexes and gives every old row a due time and zeros", async () => {
    const output = await migrateUp();
    for (const file of queueSteps) expect(output).toContain(`Applied ${file}`);
    await withServer(dirs.migrations, async (opts) => {
      await expectQueueSchema(opts);
      const after = await readRows(opts, ids);
      expect(after.map(oldPart)).toEqual(before);
      expectBackfilled(after);
      // probe_schedules: superuser only, one row per name
      const schedule = { probe_key: "p", cron: "* * * * *", enabled: true, priority: 5, max_attempts: 3, payload: { a: 1 } };
      created(await post(SCHEDULES, { ...schedule, name: "nightly" }, opts), "a schedule");
      refused(await post(SCHEDULES, { ...schedule, name: "nightly" }, opts), "a second schedule of that name");
      expect((await get(SCHEDULES, { ...opts, token: null })).status).not.toBe(200);
      // no 5000-character limit on 0.23+ either
      await insert(opts, { status: "failed", last_error: "e".repeat(6000), unique_key: "k".repeat(6000) });
      // left for the way down: cancelled exists now, and becomes failed there
      await insert(opts, { probe_key: "was-cancelled", status: "cancelled" });
    });
  });

  it("`migrate down` of the queue steps gives the old schema back, rows intact, cancelled rows failed", async () => {
    const output = await migrateDown(queueSteps.length);
    for (const file of queueSteps) expect(output).toContain(`Reverted ${file}`);
    await withServer(dirs.oldMigrations, async (opts) => {
      const left = await columns(opts);
      for (const name of QUEUE_FIELDS) expect(left).not.toContain(name);
      expect(oneLine(await indexSql(opts, "idx_probe_jobs_status_created"))).toBe("CREATE INDEX `idx_probe_jobs_status_created` ON `probe_jobs` (`status`, `created`)");
      expect(await indexSql(opts, "idx_probe_jobs_claim_order")).toBe("");
      expect(await indexSql(opts, "idx_probe_jobs_unique_key")).toBe("");
      expect((await get(SCHEDULES, opts)).status).toBe(404);
      expect((await get(WORKERS, opts)).status).toBe(404);
      expect(await indexSql(opts, "idx_probe_jobs_queue_claim")).toBe("");
      expect(await readRows(opts, ids)).toEqual(before);
      expect(await sqlValue(opts, "SELECT status AS value FROM probe_jobs WHERE probe_key = 'was-cancelled'")).toBe("failed");
      refused(await post(JOBS, { probe_key: randomKey("old"), status: "cancelled" }, opts), "cancelled after the way down");
    });
  });

  it("`migrate up` again restores the queue schema; the rows survive; one live row per unique_key", async () => {
    const output = await migrateUp();
    for (const file of queueSteps) expect(output).toContain(`Applied ${file}`);
    await withServer(dirs.migrations, async (opts) => {
      await expectQueueSchema(opts);
      const after = await readRows(opts, ids);
      expect(after.map(oldPart)).toEqual(before);
      expectBackfilled(after);

      const key = randomKey("unique");
      const job = (status: string, unique_key = key) => post(JOBS, { probe_key: randomKey("u"), status, unique_key }, opts);
      created(await job("pending"), "the first live row of a key");
      for (const status of ["pending", "claimed", "running"]) refused(await job(status), `a second live (${status}) row of that key`);
      for (const status of ["done", "failed", "cancelled", "done"]) created(await job(status), `a ${status} row of that key`);
      for (let i = 0; i < 2; i++) created(await job("pending", ""), "a live row without a key");
      // the terms a lookup repeats find the live row
      expect(await sqlValue(opts, `SELECT count(*) AS value FROM probe_jobs WHERE unique_key = {:key} AND ${UNIQUE_KEY_WHERE}`, { key })).toBe("1");
    });
  });
});
