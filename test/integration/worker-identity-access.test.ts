// Who may call what (issue 19, src/lib/identity.ts): every route of
// src/handlers/routes.ts and the record API of every pb-fleet collection,
// for each kind of caller — no token, a token of another auth collection, a
// worker identity (with and without can_enqueue), a disabled one, an admin.
// Each answer is what the identity rules say, and a refused call writes
// nothing: the row it would have changed is read back unchanged.
import { beforeAll, describe, expect, it } from "vitest";
import { ROUTES, type RouteEntry } from "../../src/handlers/routes";
import {
  ADMIN_ONLY, ENQUEUE_NOT_ALLOWED, NOT_SIGNED_IN, WORKER_DISABLED, WORKERS_COLLECTION,
} from "../../src/lib/identity";
import { JOB_EVENTS_COLLECTION } from "../../src/lib/job-events";
import {
  countJobsByPrefix, createJob, getJob, pastDate, post, randomKey, send, type ApiResponse,
} from "./support/fleet-api";
import { heldJob } from "./support/protocol";
import { startOwnServer } from "./support/own-server";
import { pbLine } from "./support/pocketbase-line";
import { startSmtpSink } from "./support/smtp-sink";
import { createWorkerIdentity, userRecordToken, type WorkerIdentity } from "./support/worker-identities";

type CallerName = "no token" | "another collection's token" | "a worker" | "a worker with can_enqueue" | "a disabled worker" | "an admin";
interface CallerCase {
  name: CallerName;
  token: () => string | null;
  /** The workerId its calls name: its own identity's, for workers. */
  workerId: () => string;
}

let plain: WorkerIdentity;
let enqueuer: WorkerIdentity;
let disabled: WorkerIdentity;
let userToken = "";

beforeAll(async () => {
  [plain, enqueuer, disabled, userToken] = await Promise.all([
    createWorkerIdentity(),
    createWorkerIdentity({ canEnqueue: true }),
    createWorkerIdentity({ canEnqueue: true, disabled: true }),
    userRecordToken(),
  ]);
});

const CALLERS: CallerCase[] = [
  { name: "no token", token: () => null, workerId: () => "w-anonymous" },
  { name: "another collection's token", token: () => userToken, workerId: () => "w-user" },
  { name: "a worker", token: () => plain.token, workerId: () => `${plain.id}/1` },
  { name: "a worker with can_enqueue", token: () => enqueuer.token, workerId: () => enqueuer.id },
  { name: "a disabled worker", token: () => disabled.token, workerId: () => `${disabled.id}/1` },
  // undefined: the suite's admin token (fleet-api's default)
  { name: "an admin", token: () => undefined as unknown as string, workerId: () => "w-admin" },
];

/** What the rules say a caller gets from a route: 200, or the exact refusal. */
function expected(caller: CallerName, route: RouteEntry): { status: number; body?: unknown } {
  if (caller === "an admin") return { status: 200 };
  if (caller === "no token" || caller === "another collection's token") return { status: 401, body: NOT_SIGNED_IN };
  if (caller === "a disabled worker") return { status: 401, body: WORKER_DISABLED };
  if (route.access === "admin") return { status: 403, body: { error: ADMIN_ONLY } };
  if (route.access === "enqueue" && caller === "a worker") return { status: 403, body: { error: ENQUEUE_NOT_ALLOWED } };
  return { status: 200 };
}

/**
 * A request the route would act on, for a caller naming `workerId`, with a
 * check that what it would write was not written (and one that it was).
 */
async function requestFor(route: RouteEntry, workerId: string): Promise<{ query: string; body: unknown; written: () => Promise<boolean> }> {
  const rowChanged = (before: { id: string; updated: string; version: number }) => async () => {
    const after = await getJob(before.id);
    return after.updated !== before.updated || after.version !== before.version;
  };
  switch (route.path) {
    case "/api/fleet/claim": {
      const row = await createJob();
      return { query: "", body: { jobId: row.id, workerId }, written: rowChanged(row) };
    }
    case "/api/fleet/renew": {
      const row = await heldJob(workerId);
      return { query: "", body: { jobId: row.id, workerId }, written: rowChanged(row) };
    }
    case "/api/fleet/release": {
      const row = await heldJob(workerId);
      return { query: "", body: { jobId: row.id, workerId, status: "done" }, written: rowChanged(row) };
    }
    case "/api/fleet/heartbeat": {
      const row = await heldJob(workerId);
      return { query: "", body: { workerId, leases: [{ jobId: row.id }] }, written: rowChanged(row) };
    }
    case "/api/fleet/complete": {
      const row = await heldJob(workerId);
      return { query: "", body: { workerId, releases: [{ jobId: row.id, status: "done" }] }, written: rowChanged(row) };
    }
    case "/api/fleet/claim-next": {
      const prefix = randomKey("access-next") + "/";
      const row = await createJob({ probe_key: `${prefix}a` });
      return { query: "", body: { workerId, probeKeyPrefix: prefix }, written: rowChanged(row) };
    }
    case "/api/fleet/enqueue": {
      const prefix = randomKey("access-enqueue") + "/";
      return { query: "", body: { jobs: [{ probeKey: `${prefix}a` }] }, written: async () => (await countJobsByPrefix(prefix)) > 0 };
    }
    case "/api/fleet/sweep": {
      const prefix = randomKey("access-sweep") + "/";
      const row = await heldJob("w-dead", { probe_key: `${prefix}a`, lease_expires_at: pastDate() });
      return { query: "", body: { probeKeyPrefix: prefix }, written: rowChanged(row) };
    }
    case "/api/fleet/cancel": {
      const row = await createJob();
      return { query: "", body: { jobId: row.id }, written: rowChanged(row) };
    }
    case "/api/fleet/retry": {
      const row = await createJob({ status: "failed", finished_at: pastDate() } as object);
      return { query: "", body: { jobId: row.id }, written: rowChanged(row) };
    }
    case "/api/fleet/maintenance": {
      // Its writes are global (retention, schedules): the refusal is checked by its answer.
      return { query: "", body: {}, written: async () => false };
    }
    case "/api/fleet/flow": {
      const group = randomKey("access-flow");
      if (route.method === "GET") return { query: `?group=${encodeURIComponent(group)}`, body: undefined, written: async () => false };
      // Written: the group now has settings (an admin's GET lists it).
      const listed = async () => ((await send("GET", `/api/fleet/flow?group=${encodeURIComponent(group)}`, undefined)).body.groups ?? []).length > 0;
      return { query: "", body: { group, paused: true }, written: listed };
    }
    case "/api/fleet/openapi.json":
      return { query: "", body: undefined, written: async () => false };
    case "/api/fleet/stats":
    case "/api/fleet/completions": {
      const prefix = randomKey("access-read") + "/";
      return { query: `?probeKeyPrefix=${encodeURIComponent(prefix)}`, body: undefined, written: async () => false };
    }
    default:
      throw new Error(`no request for ${route.method} ${route.path}: add one here`);
  }
}

/** Routes whose successful call writes the row requestFor made (the rest only read, or write globally). */
const WRITES_ITS_ROW = new Set([
  "/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release", "/api/fleet/heartbeat", "/api/fleet/complete",
  "/api/fleet/claim-next", "/api/fleet/enqueue", "/api/fleet/sweep", "/api/fleet/cancel", "/api/fleet/retry", "/api/fleet/flow",
].map((path) => `POST ${path}`));
const writesItsRow = (route: RouteEntry): boolean => WRITES_ITS_ROW.has(`${route.method} ${route.path}`);

it("every route of the route table has a request here", () => {
  for (const route of ROUTES) expect(writesItsRow(route) || route.method === "GET" || route.path === "/api/fleet/maintenance", route.path).toBe(true);
});

describe.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))("%s", (_name, route) => {
  it.each(CALLERS.map((caller) => [caller.name, caller] as const))("from %s", async (_caller, caller) => {
    const call = await requestFor(route, caller.workerId());
    const res: ApiResponse = await send(route.method, route.path + call.query, call.body, { token: caller.token() });
    const want = expected(caller.name, route);
    expect(res.status, JSON.stringify(res.body)).toBe(want.status);
    if (want.body !== undefined) expect(res.body).toEqual(want.body);
    // A refusal writes nothing; a success writes what the call is for (so the request was a real one).
    expect(await call.written()).toBe(want.status === 200 && writesItsRow(route));
  });
});

describe("the record API of every pb-fleet collection", () => {
  const COLLECTIONS = ["probe_jobs", JOB_EVENTS_COLLECTION, "probe_schedules", WORKERS_COLLECTION];
  const NON_ADMINS = CALLERS.filter((c) => c.name !== "an admin");

  /** One record of the collection (made by the admin), for view, update and delete. */
  async function someRecord(collection: string): Promise<{ id: string; body: unknown }> {
    if (collection === "probe_jobs") {
      const row = await createJob();
      return { id: row.id, body: row };
    }
    if (collection === WORKERS_COLLECTION) {
      const identity = await createWorkerIdentity();
      const res = await send("GET", `/api/collections/${collection}/records/${identity.id}`, undefined);
      return { id: identity.id, body: res.body };
    }
    if (collection === "probe_schedules") {
      const res = await post(`/api/collections/${collection}/records`, {
        name: randomKey("access-schedule"), probe_key: randomKey("scheduled"), cron: "0 0 1 1 *", enabled: false,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { id: res.body.id, body: res.body };
    }
    // probe_job_events: the server writes them; a claim makes one.
    const job = await createJob();
    expect((await post("/api/fleet/claim", { jobId: job.id, workerId: "w-events" })).status).toBe(200);
    const res = await send("GET", `/api/collections/${collection}/records?sort=-created&perPage=1`, undefined);
    return { id: res.body.items[0].id, body: res.body.items[0] };
  }

  describe.each(COLLECTIONS)("%s", (collection) => {
    it.each(NON_ADMINS.map((caller) => [caller.name, caller] as const))("shows and changes nothing for %s", async (_name, caller) => {
      const record = await someRecord(collection);
      const base = `/api/collections/${collection}/records`;
      const token = caller.token();
      const calls: [string, string, unknown][] = [
        ["GET", base, undefined],
        ["GET", `${base}/${record.id}`, undefined],
        ["POST", base, { probe_key: randomKey("intruder"), status: "pending", username: randomKey("intruder"), password: "intruder-pw-123", passwordConfirm: "intruder-pw-123" }],
        ["PATCH", `${base}/${record.id}`, { status: "done", disabled: true, queues: [], can_enqueue: true }],
        ["DELETE", `${base}/${record.id}`, undefined],
      ];
      for (const [method, path, body] of calls) {
        const res = await send(method, path, body, { token });
        // 403 (a rule that is null), 404 (a record it may not see) or 400 (a create it may not make): never 2xx.
        expect([400, 401, 403, 404], `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
        expect(JSON.stringify(res.body)).not.toContain(record.id);
      }
      // The record is as it was, and no record was created under the intruder's name.
      const after = await send("GET", `${base}/${record.id}`, undefined);
      expect(after.status).toBe(200);
      expect(after.body).toEqual(record.body);
      if (collection === "probe_jobs") expect(await countJobsByPrefix("intruder-")).toBe(0);
    });
  });

  it("a worker identity cannot read or change itself either, but can refresh its own token", async () => {
    const self = await createWorkerIdentity({ queues: ["x"] });
    const base = `/api/collections/${WORKERS_COLLECTION}/records`;
    expect((await send("GET", `${base}/${self.id}`, undefined, { token: self.token })).status).toBe(403);
    expect((await send("PATCH", `${base}/${self.id}`, { queues: [], can_enqueue: true }, { token: self.token })).status).toBe(403);
    const after = await send("GET", `${base}/${self.id}`, undefined);
    expect(after.body).toMatchObject({ queues: ["x"], can_enqueue: false });
    const refreshed = await send("POST", `/api/collections/${WORKERS_COLLECTION}/auth-refresh`, {}, { token: self.token });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.record.id).toBe(self.id);
  });
});

describe("realtime", () => {
  /** Subscribes with a token and answers whether a change of probe_jobs reached it within 2 s. */
  async function seesJobChange(token: string | null): Promise<{ subscribe: number; saw: boolean }> {
    const { inject } = await import("vitest");
    const url = inject("pbUrl");
    const stream = await fetch(`${url}/api/realtime`, { headers: { Accept: "text/event-stream" } });
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!/"clientId":"([^"]+)"/.test(text)) text += decoder.decode((await reader.read()).value);
    const clientId = /"clientId":"([^"]+)"/.exec(text)![1]!;
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (token !== null) headers["Authorization"] = token;
    const subscribed = await fetch(`${url}/api/realtime`, {
      method: "POST", headers, body: JSON.stringify({ clientId, subscriptions: ["probe_jobs", `${WORKERS_COLLECTION}`] }),
    });
    const key = randomKey("realtime-seen");
    await createJob({ probe_key: key });
    let saw = false;
    const deadline = Date.now() + 2_000;
    while (!saw && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
      if (chunk === null || chunk.done) break;
      text += decoder.decode(chunk.value);
      saw = text.includes(key);
    }
    await reader.cancel();
    return { subscribe: subscribed.status, saw };
  }

  it("a worker identity's subscription to probe_jobs receives nothing; an admin's receives the change (the control)", async () => {
    const worker = await seesJobChange(plain.token);
    expect(worker.saw).toBe(false);
    const admin = await seesJobChange((await import("vitest")).inject("adminToken"));
    expect(admin.subscribe).toBe(204);
    expect(admin.saw).toBe(true);
  });
});

it("a token stops working when its identity is deleted or its token key changes", async () => {
  const gone = await createWorkerIdentity();
  const rotated = await createWorkerIdentity();
  const body = (w: WorkerIdentity) => ({ workerId: w.id, probeKeyPrefix: randomKey("nothing") + "/" });
  expect((await post("/api/fleet/claim-next", body(gone), { token: gone.token })).status).toBe(200);
  expect((await send("DELETE", `/api/collections/${WORKERS_COLLECTION}/records/${gone.id}`, undefined)).status).toBe(204);
  expect(await post("/api/fleet/claim-next", body(gone), { token: gone.token })).toEqual({ status: 401, body: NOT_SIGNED_IN });
  // A new password changes the record's token key on both lines.
  const password = "another-password-456";
  const changed = await send("PATCH", `/api/collections/${WORKERS_COLLECTION}/records/${rotated.id}`, { password, passwordConfirm: password });
  expect(changed.status, JSON.stringify(changed.body)).toBe(200);
  expect(await post("/api/fleet/claim-next", body(rotated), { token: rotated.token })).toEqual({ status: 401, body: NOT_SIGNED_IN });
});

it("PocketBase's email change, password reset and verification are refused for a worker identity and mail nothing, so it cannot undo a rotation", async () => {
  // A server of its own, on this machine: its mailer points at a sink here, and no other test's mail is in the way.
  const own = await startOwnServer();
  const sink = await startSmtpSink();
  const on = (token: string | null = own.token) => ({ baseUrl: own.url, token });
  try {
    const smtp = await send("PATCH", "/api/settings", { smtp: { enabled: true, host: "127.0.0.1", port: sink.port, tls: false, username: "", password: "" } }, on());
    expect(smtp.status, JSON.stringify(smtp.body)).toBe(200);
    const base = `/api/collections/${WORKERS_COLLECTION}`;
    const name = randomKey("mailless").replace(/[^\w.-]/g, "-");
    const password = "mailless-password-123";
    // An address only an admin could have put on the record: a reset or a verification would mail it.
    const email = `${name}@example.com`;
    const created = await post(`${base}/records`, { username: name, password, passwordConfirm: password, email }, on());
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const token = (await post(`${base}/auth-with-password`, { identity: name, password }, on(null))).body.token as string;
    const calls: [string, unknown, string | null][] = [
      ["request-email-change", { newEmail: `taken-over-${name}@example.com` }, token],
      ["request-password-reset", { email }, null],
      ["request-verification", { email }, null],
    ];
    for (const [action, body, auth] of calls) {
      const res = await post(`${base}/${action}`, body, on(auth));
      // 0.22 answers a reset or verification request 204 whatever happens (against address enumeration); the hook still stops it.
      const answers = pbLine() === "0.22" && action !== "request-email-change" ? [204] : [403];
      expect(answers, `${action}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      // (0.22 capitalizes an error's first letter.)
      if (res.status === 403) expect(JSON.stringify(res.body).toLowerCase()).toContain("a worker identity has no email");
    }
    // The control: a user of another auth collection gets its reset mail through the same mailer.
    const userEmail = `control-${name}@example.com`;
    const pw = "control-password-123";
    expect((await post("/api/collections/users/records", { email: userEmail, password: pw, passwordConfirm: pw }, on())).status).toBe(200);
    expect((await post("/api/collections/users/request-password-reset", { email: userEmail }, on(null))).status).toBe(204);
    const deadline = Date.now() + 10_000;
    while (!sink.recipients.includes(userEmail) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(sink.recipients).toEqual([userEmail]);
    expect((await send("GET", `${base}/records/${created.body.id}`, undefined, on())).body).toMatchObject({ email, verified: false });
  } finally {
    await sink.close();
    await own.stop();
  }
});
