// pb-fleet-enqueue.js in an app's own hooks (docs/enqueue-in-transaction.md):
// jobs enqueued inside the app's transaction exist if and only if the app's
// write commits, with POST /api/fleet/enqueue's defaults, answers, 400
// messages and dedupe. The app is test/integration/support/hooks*/
// enqueue-in-app-transaction.pb.js on a server of this file's own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnqueuedJob, EnqueueItem } from "../../src/lib/types";
import {
  enqueue, enqueueOk, get, listJobsByPrefix, post, randomKey, type QueueJobRecord, type RequestOptions,
} from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { pbLine } from "./support/pocketbase-line";

let server: OwnServer;
let opts: RequestOptions;

/** A base collection with unique text `title` (the app's write) and text `job_probe_key`, in the line's schema form. */
async function createAppCollection(name: string): Promise<void> {
  const fields = [{ name: "title", type: "text" }, { name: "job_probe_key", type: "text" }];
  const created = await post("/api/collections", {
    name, type: "base", ...(pbLine() === "0.22" ? { schema: fields } : { fields }),
    indexes: [`CREATE UNIQUE INDEX idx_${name}_title ON ${name} (title)`],
  }, opts);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
}

/** The app's records with this title (PocketBase's record API). */
async function recordsTitled(collection: string, title: string): Promise<{ id: string; title: string }[]> {
  const filter = encodeURIComponent(`title = '${title}'`);
  const res = await get(`/api/collections/${collection}/records?filter=${filter}`, opts);
  expect(res.status).toBe(200);
  return res.body.items;
}

function order(body: { title: string; jobs: unknown; failAfterEnqueue?: boolean }) {
  return post("/api/test/orders", body, opts);
}

/** A row's fields that do not depend on when or under which probe key it was written. */
function timeless(row: QueueJobRecord): Partial<QueueJobRecord> {
  const { id: _id, probe_key: _key, created: _created, updated: _updated, run_at: _runAt, start_by: _startBy, ...rest } = row;
  return rest;
}

beforeAll(async () => {
  server = await startOwnServer({ testHooks: ["enqueue-in-app-transaction.pb.js"] });
  opts = { baseUrl: server.url, token: server.token };
  await createAppCollection("test_orders");
  await createAppCollection("test_hooked_orders");
});
afterAll(async () => {
  await server?.stop();
});

describe("fleet.enqueue(tx, items) in an app route's transaction", () => {
  it("commits the jobs with the app's write: the endpoint's answer shape, defaults and stored fields", async () => {
    const prefix = randomKey("intx") + "/";
    const twin = randomKey("intx-endpoint") + "/";
    const items = (p: string): EnqueueItem[] => [
      { probeKey: `${p}plain`, payload: { order: 7, lines: [{ sku: "a", qty: 2 }], note: "ünïcode" } },
      { probeKey: `${p}tuned`, priority: 5, maxAttempts: 3, queue: "emails", group: "tenant-1", timeoutSeconds: 30, delaySeconds: 60, startWithinSeconds: 600 },
    ];
    const title = randomKey("order");
    const before = Date.now();
    const res = await order({ title, jobs: items(prefix) });
    const after = Date.now();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.jobs).toEqual(items(prefix).map((i) => ({ id: expect.any(String), probeKey: i.probeKey, created: true })));
    expect((await recordsTitled("test_orders", title)).map((r) => r.id)).toEqual([res.body.orderId]);

    const rows = await listJobsByPrefix(prefix, opts);
    const byKey = new Map(rows.map((r) => [r.probe_key, r]));
    expect(rows.map((r) => r.id).sort()).toEqual((res.body.jobs as EnqueuedJob[]).map((j) => j.id).sort());
    expect(byKey.get(`${prefix}plain`)).toMatchObject({
      status: "pending", payload: items(prefix)[0]!.payload, priority: 0, attempts: 0, max_attempts: 25, queue: "default",
      unique_key: "", group_key: "", timeout_seconds: 0, start_by: "", enqueue_index: 0, claimed_by: "", last_error: "",
    });
    const runAt = Date.parse(byKey.get(`${prefix}plain`)!.run_at.replace(" ", "T"));
    expect(runAt).toBeGreaterThanOrEqual(before - 1000);
    expect(runAt).toBeLessThanOrEqual(after + 1000);

    // The same items through POST /api/fleet/enqueue: the same rows but for time and key.
    await enqueueOk(items(twin), opts);
    const twins = new Map((await listJobsByPrefix(twin, opts)).map((r) => [r.probe_key.slice(twin.length), r]));
    for (const [name, row] of byKey) {
      expect(timeless(row), name).toEqual(timeless(twins.get(name.slice(prefix.length))!));
    }
    const tuned = byKey.get(`${prefix}tuned`)!;
    expect(Date.parse(tuned.run_at.replace(" ", "T")) - runAt).toBeGreaterThanOrEqual(59_000);
    expect(Date.parse(tuned.start_by.replace(" ", "T")) - Date.parse(tuned.run_at.replace(" ", "T"))).toBe(600_000);
  });

  it("writes neither the job nor the app's record when the app fails after the enqueue", async () => {
    const prefix = randomKey("intx-fail") + "/";
    const title = randomKey("order");
    const res = await order({ title, jobs: [{ probeKey: `${prefix}a`, uniqueKey: `${prefix}key` }], failAfterEnqueue: true });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error).toContain("the app failed after the enqueue");
    expect(await recordsTitled("test_orders", title)).toEqual([]);
    expect(await listJobsByPrefix(prefix, opts)).toEqual([]);
    // Its unique key was not taken either.
    expect((await enqueueOk([{ probeKey: `${prefix}b`, uniqueKey: `${prefix}key` }], opts))[0]!.created).toBe(true);
  });

  const BAD_INPUT: [string, (prefix: string) => unknown][] = [
    ["no items at all", () => undefined],
    ["an empty array", () => []],
    ["1,001 items", (p) => Array.from({ length: 1001 }, (_, i) => ({ probeKey: `${p}${i}` }))],
    ["an object instead of an array", (p) => ({ probeKey: `${p}x` })],
    ["a null item after a good one", (p) => [{ probeKey: `${p}good` }, null]],
    ["priority 1.5 on the third item", (p) => [{ probeKey: `${p}0` }, { probeKey: `${p}1` }, { probeKey: `${p}2`, priority: 1.5 }]],
    ["runAt without a zone", (p) => [{ probeKey: `${p}0`, runAt: "2026-12-01T09:30:00" }]],
    ["runAt and delaySeconds", (p) => [{ probeKey: `${p}0`, runAt: "2026-12-01T09:30:00Z", delaySeconds: 5 }]],
    ["maxAttempts 1001", (p) => [{ probeKey: `${p}0`, maxAttempts: 1001 }]],
    ["an invalid queue name", (p) => [{ probeKey: `${p}0`, queue: "" }]],
    ["a numeric uniqueKey", (p) => [{ probeKey: `${p}0`, uniqueKey: 7 }]],
  ];

  it.each(BAD_INPUT)("%s: throws the endpoint's 400 message, and the app's transaction writes nothing", async (_what, jobsOf) => {
    const prefix = randomKey("intx-bad") + "/";
    const endpoint = await enqueue(jobsOf(prefix), opts);
    expect(endpoint.status).toBe(400);
    const title = randomKey("order");
    const res = await order({ title, jobs: jobsOf(prefix) });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({ error: endpoint.body.error });
    expect(await recordsTitled("test_orders", title)).toEqual([]);
    expect(await listJobsByPrefix(prefix, opts)).toEqual([]);
  });

  it("dedupes by uniqueKey against a live job and against earlier items, as the endpoint does", async () => {
    const prefix = randomKey("intx-dedupe") + "/";
    const [live] = await enqueueOk([{ probeKey: `${prefix}live`, uniqueKey: `${prefix}k1` }], opts);
    const res = await order({
      title: randomKey("order"),
      jobs: [
        { probeKey: `${prefix}again`, uniqueKey: `${prefix}k1` },
        { probeKey: `${prefix}first`, uniqueKey: `${prefix}k2` },
        { probeKey: `${prefix}second`, uniqueKey: `${prefix}k2` },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [again, first, second] = res.body.jobs as EnqueuedJob[];
    expect(again).toEqual({ id: live!.id, probeKey: `${prefix}again`, created: false });
    expect(first).toEqual({ id: expect.any(String), probeKey: `${prefix}first`, created: true });
    expect(second).toEqual({ id: first!.id, probeKey: `${prefix}second`, created: false });
    expect((await listJobsByPrefix(prefix, opts)).map((r) => r.probe_key).sort()).toEqual([`${prefix}first`, `${prefix}live`]);
  });

  it("refuses a handle outside any transaction, before writing anything", async () => {
    const prefix = randomKey("intx-outside") + "/";
    const res = await post("/api/test/enqueue-outside-transaction", { jobs: [{ probeKey: `${prefix}a` }] }, opts);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatch(/^pb-fleet enqueue: the handle passed is not inside a transaction.*nothing was written/);
    expect(res.body.error).toContain(pbLine() === "0.22" ? "txDao" : "txApp");
    expect(await listJobsByPrefix(prefix, opts)).toEqual([]);
  });

  it("realtime tells the committed job, and nothing of one whose transaction rolled back", async () => {
    const prefix = randomKey("intx-realtime") + "/";
    const stream = await fetch(`${server.url}/api/realtime`, { headers: { Accept: "text/event-stream" } });
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!/"clientId":"([^"]+)"/.test(text)) text += decoder.decode((await reader.read()).value);
    const clientId = /"clientId":"([^"]+)"/.exec(text)![1]!;
    const subscribed = await fetch(`${server.url}/api/realtime`, {
      method: "POST", headers: { "Content-Type": "application/json", Authorization: server.token },
      body: JSON.stringify({ clientId, subscriptions: ["probe_jobs"] }),
    });
    expect(subscribed.status).toBe(204);
    try {
      expect((await order({ title: randomKey("order"), jobs: [{ probeKey: `${prefix}rolled-back` }], failAfterEnqueue: true })).status).toBe(409);
      expect((await order({ title: randomKey("order"), jobs: [{ probeKey: `${prefix}committed` }] })).status).toBe(200);
      for (const deadline = Date.now() + 10_000; !text.includes(`${prefix}committed`) && Date.now() < deadline; ) {
        const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, deadline - Date.now())))]);
        if (chunk === null || chunk.done) break;
        text += decoder.decode(chunk.value);
      }
    } finally {
      await reader.cancel();
    }
    expect(text).toContain(`${prefix}committed`);
    expect(text).not.toContain(`${prefix}rolled-back`);
  });
});

describe("fleet.enqueue in a record hook of the app's own save", () => {
  it("enqueues with the save's transaction handle; the insert failing after the enqueue takes the job with it", async () => {
    const prefix = randomKey("intx-hook") + "/";
    const title = randomKey("hooked");
    const saved = await post("/api/test/hooked-orders", { title, jobProbeKey: `${prefix}saved` }, opts);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const rows = await listJobsByPrefix(prefix, opts);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ probe_key: `${prefix}saved`, status: "pending", payload: { title }, max_attempts: 25, queue: "default" });

    // The same title again: the hook enqueues, then the insert breaks the unique index.
    const duplicate = await post("/api/test/hooked-orders", { title, jobProbeKey: `${prefix}duplicate` }, opts);
    expect(duplicate.status, JSON.stringify(duplicate.body)).toBe(409);
    expect((await recordsTitled("test_hooked_orders", title)).map((r) => r.id)).toEqual([saved.body.orderId]);
    expect((await listJobsByPrefix(prefix, opts)).map((r) => r.probe_key)).toEqual([`${prefix}saved`]);
  });

  it("the record API's create: transactional on 0.23+ through onRecordCreateRequest's txApp; refused on 0.22, which has no such handle", async () => {
    const prefix = randomKey("intx-rest") + "/";
    const title = randomKey("rest");
    const records = "/api/collections/test_hooked_orders/records";
    const created = await post(records, { title, job_probe_key: `${prefix}created` }, opts);
    if (pbLine() === "0.22") {
      // A record API save runs on the app's dao, outside any transaction: the hook's enqueue refuses it.
      expect(created.status, JSON.stringify(created.body)).toBe(400);
      expect(await recordsTitled("test_hooked_orders", title)).toEqual([]);
      expect(await listJobsByPrefix(prefix, opts)).toEqual([]);
      return;
    }
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await listJobsByPrefix(prefix, opts)).map((r) => [r.probe_key, r.payload])).toEqual([[`${prefix}created`, { title }]]);
    const duplicate = await post(records, { title, job_probe_key: `${prefix}duplicate` }, opts);
    expect(duplicate.status, JSON.stringify(duplicate.body)).toBe(400);
    expect((await listJobsByPrefix(prefix, opts)).map((r) => r.probe_key)).toEqual([`${prefix}created`]);
  });
});
