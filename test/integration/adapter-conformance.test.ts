// The adapter contract (src/adapter/contract.ts, transactions.ts, runtime.ts),
// checked operation by operation against the adapter of the line under test:
// the same assertions on every hooks line, as River's riverdrivertest runs one
// suite against every driver. The routes (support/adapter-conformance) call
// the adapter directly and are built for the line the way the real bundle is;
// they run on a server of this file's own, beside the real bundle (whose
// probe_jobs create hook is the adapter's stampDueTime).
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ONLY, NOT_SIGNED_IN, WORKER_DISABLED } from "../../src/lib/identity";
import type { JobInsert, JobPatch } from "../../src/lib/job-row";
import { formatPbDate, isLeaseLive, parsePbDate } from "../../src/lib/lease";
import { DEFAULT_QUEUE } from "../../src/lib/queue-names";
import { MAX_REQUEST_BODY_BYTES, REQUEST_TOO_LARGE } from "../../src/lib/queue";
import type { JobView } from "../../src/lib/types";
import { notInTransaction, QUERY_FAILED, ROLLED_BACK } from "../../src/adapter/contract";
import { leaseTexts } from "../support/lease-texts";
import { ADAPTER_TEST_HOOKS_FILE, buildAdapterTestHooks } from "./support/adapter-conformance/build";
import { ADAPTER_TEST_PATH } from "./support/adapter-conformance/routes";
import { CONFORMANCE_THROW, type BatchStep } from "./support/adapter-conformance/steps";
import { eventually } from "./support/eventually";
import { countJobsByPrefix, createJob, futureDate, get, getJob, post, randomKey, type JobRecord, type RequestOptions } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { pbLine } from "./support/pocketbase-line";
import { createWorkerIdentity } from "./support/worker-identities";

const ENV_NAME = "PB_FLEET_CONFORMANCE_ENV";
const ENV_VALUE = "seen-by-getenv";

let server: OwnServer;
let opts: RequestOptions;
beforeAll(async () => {
  const hooks = await buildAdapterTestHooks(pbLine());
  server = await startOwnServer({ builtHooks: { [ADAPTER_TEST_HOOKS_FILE]: hooks }, env: { [ENV_NAME]: ENV_VALUE } });
  opts = { baseUrl: server.url, token: server.token };
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** A conformance route's 200 answer (anything else fails the test: the adapter never answers a 500). */
async function call<T = any>(route: string, body: unknown): Promise<T> {
  const res = await post(`${ADAPTER_TEST_PATH}/${route}`, body, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as T;
}

/** A column as stored (queryOne outside a transaction), not as the record API would normalise it. */
async function stored(id: string, column: string): Promise<string> {
  const { row } = await call<{ row: { value: string } | null }>("query", {
    query: { sql: `SELECT CAST(${column} AS TEXT) AS value FROM probe_jobs WHERE id = {:id}`, params: { id } }, shape: { value: "" },
  });
  return row!.value;
}

/** A pending row as enqueue would insert it, JSON payload given. */
function newRow(probeKey: string, payload: unknown): JobInsert {
  return {
    probe_key: probeKey, status: "pending", payload, run_at: formatPbDate(Date.now()), priority: 0, max_attempts: 5,
    unique_key: "", enqueue_index: 0, queue: DEFAULT_QUEUE, group_key: "", timeout_seconds: 0, start_by: "",
  };
}

/** The probe_job_events records of a source whose changes name a job. */
async function eventsOf(source: string, jobId: string): Promise<{ source: string; changes: JobView[] }[]> {
  const filter = encodeURIComponent(`source = "${source}" && changes ~ "${jobId}"`);
  const res = await get(`/api/collections/probe_job_events/records?filter=${filter}&perPage=50`, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items;
}

/** Waits for PocketBase's log (written in batches) to hold `message` with `detail` in its attributes. */
async function expectLogged(message: string, detail: string): Promise<void> {
  await eventually(async () => {
    const res = await get(`/api/logs?perPage=200&sort=-created&filter=${encodeURIComponent(`message = "${message}"`)}`, opts);
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body.items)).toContain(detail);
  }, 15_000, 250);
}

/** Every kind of JobBatch operation once, on a found row and a new one, each reading what the earlier ones wrote. */
function everyOperation(job: JobRecord, insertKey: string, mark: string, patch: JobPatch, noted: JobView): BatchStep[] {
  return [
    { op: "find", ids: [job.id] },
    { op: "write", id: job.id, patch },
    { op: "queryOne", query: { sql: "SELECT status FROM probe_jobs WHERE id = {:id}", params: { id: job.id } }, shape: { status: "" } },
    { op: "insert", fields: newRow(insertKey, "123") },
    {
      op: "queryAll",
      query: { sql: "SELECT probe_key, version FROM probe_jobs WHERE probe_key IN ({:a}, {:b}) ORDER BY probe_key", params: { a: job.probe_key, b: insertKey } },
      shape: { probe_key: "", version: 0 },
    },
    { op: "execute", statement: { sql: "UPDATE probe_jobs SET last_error = {:mark} WHERE id = {:id}", params: { mark, id: job.id } } },
    { op: "noteWritten", changes: [noted] },
  ];
}

const WRITE: JobPatch = { status: "running", claimed_by: "conformance", version: 8, result: "123", progress: { step: 1 } };

describe(`the ${pbLine()} adapter`, () => {
  describe("serve and its replies", () => {
    it("refuses a caller without a token with 0.22's 401 before the handler runs, and serves an admin as an admin", async () => {
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, {}, { ...opts, token: null })).toEqual({ status: 401, body: NOT_SIGNED_IN });
      expect((await call("echo", {})).caller).toEqual({ kind: "admin" });
    });

    it("refuses a worker identity on an admin-only route with its 403, and a disabled one with its 401", async () => {
      const worker = await createWorkerIdentity({}, opts);
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, {}, { ...opts, token: worker.token })).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
      const disabled = await createWorkerIdentity({ disabled: true }, opts);
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, {}, { ...opts, token: disabled.token })).toEqual({ status: 401, body: WORKER_DISABLED });
    });

    it("json() answers its status and body; query parameters read as sent, an absent one as empty", async () => {
      const res = await get(`${ADAPTER_TEST_PATH}/echo?status=201&q=${encodeURIComponent("a b&c")}`, opts);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ q: "a b&c", missing: "" });
    });

    it("a text reply is plain text with its status", async () => {
      const res = await fetch(`${server.url}${ADAPTER_TEST_PATH}/echo?status=202&reply=text&q=x`, { headers: { Authorization: server.token } });
      expect(res.status).toBe(202);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(JSON.parse(await res.text())).toMatchObject({ q: "x", caller: { kind: "admin" } });
    });

    it("the body is the JSON object sent, and {} for invalid JSON, a top-level array or another content type", async () => {
      expect((await call("echo", { a: 1, nested: { b: [true] } })).body).toEqual({ a: 1, nested: { b: [true] } });
      for (const [rawBody, contentType] of [["{nope", "application/json"], ["[1, 2]", "application/json"], ['{"a": 1}', "text/plain"]]) {
        const res = await post(`${ADAPTER_TEST_PATH}/echo`, undefined, { ...opts, rawBody, contentType });
        expect(res.status, rawBody).toBe(200);
        expect(res.body.body, `${contentType} ${rawBody}`).toEqual({});
      }
    });

    it("a declared body over PocketBase's limit is pb-fleet's 413 for an admin; who may not call is refused first", async () => {
      const rawBody = "x".repeat(MAX_REQUEST_BODY_BYTES + 16);
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, undefined, { ...opts, rawBody })).toEqual({ status: 413, body: { error: REQUEST_TOO_LARGE } });
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, undefined, { ...opts, rawBody, token: null })).toEqual({ status: 401, body: NOT_SIGNED_IN });
      const worker = await createWorkerIdentity({}, opts);
      expect(await post(`${ADAPTER_TEST_PATH}/echo`, undefined, { ...opts, rawBody, token: worker.token })).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
    });
  });

  describe("a body of unknown length (chunked)", () => {
    /**
     * POSTs `text` without a Content-Length (chunked transfer) to the echo route, with `query`, on a
     * connection of its own: a server that answers before reading the whole body leaves the rest of
     * it on the connection, which would garble the next request sent on it.
     */
    function postChunked(text: string, query = ""): Promise<{ status: number; body: any }> {
      const bytes = new TextEncoder().encode(text);
      return new Promise((resolve, reject) => {
        let answered = false;
        const req = request(`${server.url}${ADAPTER_TEST_PATH}/echo${query}`, {
          method: "POST", agent: false, headers: { Authorization: server.token, "Content-Type": "application/json" },
        }, (res) => {
          answered = true;
          const parts: Buffer[] = [];
          res.on("data", (part: Buffer) => parts.push(part));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString("utf8")) }));
          res.on("error", reject);
        });
        // The server may answer and close before it has read everything: what is left unsent is not an error
        // here, but a connection that closes with no answer at all is.
        req.on("error", (err: NodeJS.ErrnoException) => (err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err)));
        req.on("close", () => (answered ? undefined : reject(new Error("the server closed the connection without answering"))));
        for (let at = 0; at < bytes.length; at += 1 << 20) req.write(bytes.subarray(at, at + (1 << 20)));
        req.end();
      });
    }

    it("under the limit is read as sent", async () => {
      expect(await postChunked(JSON.stringify({ a: 1, b: "ü" }))).toMatchObject({ status: 200, body: { body: { a: 1, b: "ü" } } });
    });

    // 0.22 reads such a body up to its limit and parses what it read (its adapter's bodyOverLimit is
    // always false), so the handler gets {}; 0.23+ stops at the limit and answers pb-fleet's 413.
    // 2 MB over, not a few bytes: PocketBase 0.23.12's limit fails the read that crosses it, but its
    // JSON decoder still finishes a value whose end came in that same read, so a body that ends
    // within one read (here a 1 MB chunk) past the limit is read whole there. The overshoot is
    // bounded by one read, so nothing unbounded is allocated; 0.40.4 refuses it too.
    it("over the limit never reaches the handler: pb-fleet's 413, or (0.22) the empty body", async () => {
      const answer = await postChunked(JSON.stringify({ a: "x".repeat(MAX_REQUEST_BODY_BYTES + (2 << 20)) }), "?bodyBytes=1");
      if (pbLine() === "0.22") expect({ status: answer.status, bodyBytes: answer.body.body }).toEqual({ status: 200, bodyBytes: "{}".length });
      else expect(answer).toEqual({ status: 413, body: { error: REQUEST_TOO_LARGE } });
    });
  });

  describe("updateJob", () => {
    it("hands decide the row as read and the transaction's time, and writes the decision's patch (JSON fields as JSON)", async () => {
      const job = await createJob({ status: "pending", claimed_by: "", version: 7 }, opts);
      const before = Date.now();
      const { update } = await call("update-job", { jobId: job.id, patch: WRITE });
      expect(update.row).toMatchObject({ id: job.id, probe_key: job.probe_key, status: "pending", version: 7 });
      expect(update.decision.nowMs).toBeGreaterThanOrEqual(before);
      expect(update.decision.nowMs).toBeLessThanOrEqual(Date.now());
      // A string "123" stays a string: PocketBase would re-parse plain text set on a json field as the number 123.
      expect(await getJob(job.id, opts)).toMatchObject({ status: "running", claimed_by: "conformance", version: 8, result: "123", progress: { step: 1 } });
      expect(await stored(job.id, "result")).toBe('"123"');
    });

    it("writes nothing when the decision's patch is null", async () => {
      const job = await createJob({ status: "pending" }, opts);
      const { update } = await call("update-job", { jobId: job.id, patch: null });
      expect(update.row.id).toBe(job.id);
      expect(await getJob(job.id, opts)).toEqual(job);
    });

    it("answers null for a job that does not exist", async () => {
      expect(await call("update-job", { jobId: "nosuchjob000000", patch: WRITE })).toEqual({ update: null });
    });

    it("a decide that throws rolls back: null, nothing written, the rollback logged with its error", async () => {
      const job = await createJob({ status: "pending" }, opts);
      expect(await call("update-job", { jobId: job.id, patch: WRITE, throwInDecide: true })).toEqual({ update: null });
      expect(await getJob(job.id, opts)).toEqual(job);
      await expectLogged(ROLLED_BACK, CONFORMANCE_THROW);
    });
  });

  // updateJobs saves records; updateJobsBulk sends statements and tells realtime in one event record (src/lib/bulk.ts).
  describe.each([
    // A record save is realtime's news itself; a bulk write's rows are listed in the event record.
    { name: "updateJobs", route: "update-jobs", source: () => "statement", eventListsWrites: false },
    { name: "updateJobsBulk", route: "update-jobs-bulk", source: () => randomKey("conformance-bulk"), eventListsWrites: true },
  ])("$name", ({ route, source: sourceFor, eventListsWrites }) => {
    async function setUp() {
      const job = await createJob({ status: "pending", version: 7 }, opts);
      const other = await createJob({ status: "pending" }, opts);
      const insertKey = randomKey("conformance-insert");
      const mark = randomKey("mark");
      // As a statement of the batch (batch-plans.ts) would report a job it wrote.
      const noted: JobView = { id: other.id, probe_key: other.probe_key, status: "running", claimed_by: "noted", lease_expires_at: "", version: 99 };
      return { job, insertKey, mark, noted, steps: everyOperation(job, insertKey, mark, WRITE, noted), source: sourceFor() };
    }

    it("runs find, write, insert, queryOne, queryAll, execute and noteWritten in one transaction, each seeing the earlier writes", async () => {
      const { job, insertKey, mark, noted, steps, source } = await setUp();
      const before = Date.now();
      const { result } = await call(route, { source, steps });
      expect(result.nowMs).toBeGreaterThanOrEqual(before);
      const [found, , readBack, insertedId, readAll, changed] = result.results;
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ id: job.id, status: "pending", version: 7, lease_expires_at: "" });
      expect(readBack).toEqual({ status: "running" });
      expect(readAll).toEqual([
        { probe_key: job.probe_key, version: 8 },
        { probe_key: insertKey, version: 0 },
      ].sort((a, b) => (a.probe_key < b.probe_key ? -1 : 1)));
      expect(changed).toBe(1);

      expect(await getJob(job.id, opts)).toMatchObject({ status: "running", claimed_by: "conformance", version: 8, result: "123", progress: { step: 1 }, last_error: mark });
      expect(await stored(job.id, "result")).toBe('"123"');
      const inserted = await getJob(insertedId, opts);
      expect(inserted).toMatchObject({ probe_key: insertKey, status: "pending", payload: "123", queue: DEFAULT_QUEUE });
      expect(await stored(insertedId, "payload")).toBe('"123"');

      // The statement's writes reach realtime through a probe_job_events record (job-events.ts).
      const events = await eventsOf(source, noted.id);
      expect(events).toHaveLength(1);
      const written: JobView = { id: job.id, probe_key: job.probe_key, status: "running", claimed_by: "conformance", lease_expires_at: "", version: 8 };
      expect(events[0]!.changes).toEqual(eventListsWrites ? [written, noted] : [noted]);
    });

    it("a throw after every kind of write leaves none of them, nor an event record", async () => {
      const { job, insertKey, noted, steps, source } = await setUp();
      expect(await call(route, { source, steps: [...steps, { op: "throw" }] })).toEqual({ result: null });
      expect(await getJob(job.id, opts)).toEqual(job);
      expect(await countJobsByPrefix(insertKey, opts)).toBe(0);
      expect(await eventsOf(source, noted.id)).toEqual([]);
      await expectLogged(ROLLED_BACK, CONFORMANCE_THROW);
    });

    it("a statement that fails rolls the transaction back: null, not a 500, and the write before it undone", async () => {
      const { job, source } = await setUp();
      const steps: BatchStep[] = [
        { op: "find", ids: [job.id] },
        { op: "write", id: job.id, patch: WRITE },
        { op: "execute", statement: { sql: "UPDATE probe_jobs SET no_such_column = 1 WHERE id = {:id}", params: { id: job.id } } },
      ];
      expect(await call(route, { source, steps })).toEqual({ result: null });
      expect(await getJob(job.id, opts)).toEqual(job);
    });
  });

  describe("the lease as judged (docs/protocol-decisions.md, The lease rule)", () => {
    async function heldRowWithLease(text: string): Promise<JobRecord> {
      const job = await createJob({ status: "running", claimed_by: "holder", version: 1 }, opts);
      // A hand edit the record API would normalise: stored raw with a statement.
      const set: BatchStep = { op: "execute", statement: { sql: "UPDATE probe_jobs SET lease_expires_at = {:text} WHERE id = {:id}", params: { text, id: job.id } } };
      expect((await call("update-jobs", { steps: [set] })).result.results).toEqual([1]);
      expect(await stored(job.id, "lease_expires_at")).toBe(text);
      return job;
    }

    // What each path reads may differ only where the verdict cannot: a layout-shaped text that is no
    // calendar instant (Feb 30) is "" through a record load (PocketBase's parse fails) and itself
    // through the bulk read; both are expired. Never PocketBase's rewrite of a text it can parse.
    it.each(leaseTexts(Date.now()).map((t) => [t.name, t.text, t.live] as const))(
      "%s (%j): live %s through updateJob, updateJobs and updateJobsBulk",
      async (_name, text, live) => {
        const job = await heldRowWithLease(text);
        const reads: [string, string][] = [["update-job", (await call("update-job", { jobId: job.id, patch: null })).update.decision.leaseAsRead]];
        for (const route of ["update-jobs", "update-jobs-bulk"]) {
          const { result } = await call(route, { source: randomKey("conformance-lease"), steps: [{ op: "find", ids: [job.id] }] });
          reads.push([route, result.results[0][0].lease_expires_at]);
        }
        const now = Date.now();
        for (const [route, read] of reads) {
          expect([text, ""], route).toContain(read);
          expect(isLeaseLive(read, now), route).toBe(live);
        }
        if (parsePbDate(text) === null && !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text)) {
          expect(reads.map(([, read]) => read)).toEqual(["", "", ""]);
        }
      },
    );

    it("a record write of such a row stores the lease as read (empty)", async () => {
      const job = await heldRowWithLease("2099-01-01T00:00:00Z");
      await call("update-job", { jobId: job.id, patch: { last_error: "touched" } });
      expect(await stored(job.id, "lease_expires_at")).toBe("");
    });
  });

  describe("queryOne and queryAll outside a transaction", () => {
    it("read rows into the shape's types", async () => {
      const job = await createJob({ status: "pending", version: 5 }, opts);
      const query = { sql: "SELECT id, version, version * 2 AS twice FROM probe_jobs WHERE id = {:id}", params: { id: job.id } };
      const shape = { id: "", version: 0, twice: 0 };
      expect(await call("query", { query, shape })).toEqual({ row: { id: job.id, version: 5, twice: 10 } });
      expect(await call("query", { query, shape, all: true })).toEqual({ rows: [{ id: job.id, version: 5, twice: 10 }] });
      expect(await call("query", { query: { ...query, params: { id: "nosuchjob000000" } }, shape, all: true })).toEqual({ rows: [] });
    });

    it("a query that fails is null and logged with its error, never a 500", async () => {
      const query = { sql: "SELECT no_such_column AS n FROM probe_jobs LIMIT 1", params: {} };
      expect(await call("query", { query, shape: { n: 0 } })).toEqual({ row: null });
      expect(await call("query", { query, shape: { n: 0 }, all: true })).toEqual({ rows: null });
      await expectLogged(QUERY_FAILED, "no_such_column");
    });
  });

  describe("stampDueTime (the bundle's probe_jobs create hook)", () => {
    it("gives a row created through the record API without a due time its creation time, and the default queue", async () => {
      const before = formatPbDate(Date.now());
      const job = await createJob({ status: "pending" }, opts);
      const after = formatPbDate(Date.now());
      const runAt = await stored(job.id, "run_at");
      expect(runAt >= before && runAt <= after, `${before} <= ${runAt} <= ${after}`).toBe(true);
      expect(await stored(job.id, "queue")).toBe(DEFAULT_QUEUE);
    });

    it("keeps a due time and a queue the row was created with", async () => {
      const runAt = futureDate(86_400_000);
      const job = await createJob({ status: "pending", run_at: runAt, queue: "emails" } as Partial<JobRecord>, opts);
      expect(await stored(job.id, "run_at")).toBe(runAt);
      expect(await stored(job.id, "queue")).toBe("emails");
    });
  });

  describe("updateJobsInAppTransaction", () => {
    it("refuses a handle that is not inside a transaction before the work runs", async () => {
      const insertKey = randomKey("conformance-app-tx");
      const answer = await call("app-transaction-refusal", { fields: newRow(insertKey, null) });
      expect(answer.ran).toBe(false);
      expect(answer.refused).toContain(notInTransaction("").replace(/: pass $/, ""));
      expect(await countJobsByPrefix(insertKey, opts)).toBe(0);
    });
  });

  describe("the runtime's services", () => {
    it("lease tokens are 24 random characters; getenv reads the environment; the app store outlives a request", async () => {
      const storeKey = randomKey("conformance-store");
      const first = await call("runtime", { envName: ENV_NAME, storeKey, storeValue: "kept" });
      expect(first.tokens[0]).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(first.tokens[1]).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(first.tokens[0]).not.toBe(first.tokens[1]);
      expect(first.env).toBe(ENV_VALUE);
      expect(first.jobsCollection).toBe("probe_jobs");
      expect(first.collectionCacheMs).toBeGreaterThanOrEqual(0);
      const later = await call("runtime", { envName: "PB_FLEET_CONFORMANCE_UNSET", storeKey });
      expect(later).toMatchObject({ env: "", stored: "kept" });
    });
  });
});
