/**
 * Worker identities (src/lib/identity.ts): who may call which route, and what
 * a fleet_workers record may do once admitted. Pure: the bundle tests run the
 * same rules through both adapters' serve().
 */
import { describe, expect, it, vi } from "vitest";
import { SCHEDULE_KEY_PREFIX, scheduleUniqueKey } from "../../src/lib/schedules";
import { answerRequest, json, LAST_SEEN_FAILED, type FleetRequest, type IncomingRequest } from "../../src/adapter/contract";
import { claimAnswer } from "../../src/lib/answers";
import {
  ADMIN_ONLY, authorize, batchWorkerIdRefusal, claimQueues, ENQUEUE_NOT_ALLOWED, enqueueRefusal, LAST_SEEN_EVERY_MS, lastSeenIsStale,
  mayTakeQueue, NOT_SIGNED_IN, parseWorkerQueues, QUEUE_NOT_ALLOWED, QUEUES_UNREADABLE, stampLastSeenStatement, WORKER_DISABLED,
  WORKER_FIELDS, WORKER_NAME_PATTERN, WORKERS_COLLECTION, workerIdRefusal, type Caller, type CallerAuth, type RouteAccess,
} from "../../src/lib/identity";
import { formatPbDate } from "../../src/lib/lease";
import { MAX_REQUEST_BODY_BYTES, REQUEST_TOO_LARGE } from "../../src/lib/queue";
import { ADMIN_ONLY_ANSWER } from "./support/fake-pocketbase";
import { NOW, row } from "./support/rows";

const ACCESSES: RouteAccess[] = ["worker", "enqueue", "admin"];
const ID = "abc";

function worker(fields: Partial<Extract<CallerAuth, { kind: "worker" }>> = {}): CallerAuth {
  return { kind: "worker", id: ID, queuesJson: "", canEnqueue: false, disabled: false, lastSeenAt: "", ...fields };
}

const admin: Caller = { kind: "admin" };
const anyQueue: Caller = { kind: "worker", id: ID, queues: [], canEnqueue: false };
const emailsOnly: Caller = { kind: "worker", id: ID, queues: ["emails"], canEnqueue: false };
const withDefault: Caller = { kind: "worker", id: ID, queues: ["emails", "default"], canEnqueue: true };

describe("authorize", () => {
  it.each(ACCESSES)("serves an admin on a %s route", (access) => {
    expect(authorize({ kind: "admin" }, access)).toEqual({ caller: { kind: "admin" } });
  });

  it.each(ACCESSES)("answers no token (or another collection's) on a %s route 401, word for word PocketBase 0.22's admin-only answer", (access) => {
    expect(authorize({ kind: "none" }, access)).toEqual({ status: 401, body: NOT_SIGNED_IN });
    expect(NOT_SIGNED_IN).toEqual(ADMIN_ONLY_ANSWER);
  });

  it.each(ACCESSES)("answers a disabled identity 401 on a %s route, whatever else it may do", (access) => {
    for (const canEnqueue of [false, true]) {
      for (const queuesJson of ["", '["emails"]', "{not json"]) {
        expect(authorize(worker({ disabled: true, canEnqueue, queuesJson }), access)).toEqual({ status: 401, body: WORKER_DISABLED });
      }
    }
    // Still PocketBase's error shape, with a sentence of its own.
    expect(WORKER_DISABLED).toMatchObject({ code: 401, data: {} });
    expect(WORKER_DISABLED.message).not.toBe(NOT_SIGNED_IN.message);
  });

  it.each([false, true])("answers an identity 403 on an admin route (can_enqueue %s)", (canEnqueue) => {
    expect(authorize(worker({ canEnqueue }), "admin")).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
    // The route decides before the queues field is read.
    expect(authorize(worker({ canEnqueue, queuesJson: "{not json" }), "admin")).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
  });

  it("answers enqueue 403 to an identity without can_enqueue, and serves one with it", () => {
    expect(authorize(worker(), "enqueue")).toEqual({ status: 403, body: { error: ENQUEUE_NOT_ALLOWED } });
    expect(authorize(worker({ canEnqueue: true, queuesJson: '["emails"]' }), "enqueue")).toEqual({
      caller: { kind: "worker", id: ID, queues: ["emails"], canEnqueue: true },
    });
  });

  it.each([false, true])("serves an identity on a worker route (can_enqueue %s), with its queues", (canEnqueue) => {
    expect(authorize(worker({ canEnqueue }), "worker")).toEqual({ caller: { kind: "worker", id: ID, queues: [], canEnqueue } });
    expect(authorize(worker({ canEnqueue, queuesJson: '["a","b"]' }), "worker")).toEqual({
      caller: { kind: "worker", id: ID, queues: ["a", "b"], canEnqueue },
    });
  });

  it.each<[RouteAccess, boolean]>([["worker", false], ["worker", true], ["enqueue", true]])(
    "fails closed on a queues field no one can read (%s route, can_enqueue %s): 403, never every queue",
    (access, canEnqueue) => {
      for (const queuesJson of ["{not json", '{"emails":true}', '"emails"', "[1]", '["bad name"]', "true"]) {
        expect(authorize(worker({ canEnqueue, queuesJson }), access), queuesJson).toEqual({ status: 403, body: { error: QUEUES_UNREADABLE } });
      }
    },
  );
});

describe("parseWorkerQueues", () => {
  it.each<[string, string[]]>([
    ["", []],
    ["null", []],
    ["[]", []],
    ['["emails"]', ["emails"]],
    ['["emails","default"]', ["emails", "default"]],
    [' [ "a" , "b.c:d-e_f" ] ', ["a", "b.c:d-e_f"]],
    ['["a","a"]', ["a", "a"]],
  ])("reads %j as %j (empty: every queue)", (text, queues) => {
    expect(parseWorkerQueues(text)).toEqual(queues);
  });

  it.each([
    "{not json", "[", '{"emails":true}', '"emails"', "1", "true", "[1]", "[null]", '[["emails"]]', '["bad name"]', '[""]',
    `["${"q".repeat(65)}"]`, '["emails", 2]',
  ])("answers null for %j (unreadable)", (text) => {
    expect(parseWorkerQueues(text)).toBeNull();
  });

  it("answers null for a collection without the field, and for more names than claim-next takes (16)", () => {
    expect(parseWorkerQueues(null)).toBeNull();
    const names = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `q${i}`));
    expect(parseWorkerQueues(names(16))).toHaveLength(16);
    expect(parseWorkerQueues(names(17))).toBeNull();
  });
});

describe("workerIdRefusal", () => {
  const refusal = `workerId must be this worker identity's id (${ID}) or begin with "${ID}/" (nothing was written)`;

  it.each([ID, `${ID}/host-1`, `${ID}/host-1/slot-2`, `${ID}/`])("lets an identity name itself %j", (workerId) => {
    expect(workerIdRefusal(anyQueue, workerId)).toBeNull();
  });

  it.each([
    ["its id and more, without a slash (abc vs abcd)", `${ID}d`],
    ["its id cut short", "ab"],
    ["another identity's id", "xyz"],
    ["another identity's id and a suffix", "xyz/abc"],
    ["a slash before its id", `/${ID}`],
    ["its id in another case", "ABC"],
    ["its id after a backslash", `${ID}\\host`],
  ])("refuses %s", (_name, workerId) => {
    expect(workerIdRefusal(anyQueue, workerId)).toBe(refusal);
  });

  it("lets an admin name any holder", () => {
    for (const workerId of [ID, "xyz", `${ID}d`, "w1"]) expect(workerIdRefusal(admin, workerId)).toBeNull();
  });

  it("judges a batch by its holder, which every item carries", () => {
    expect(batchWorkerIdRefusal(anyQueue, [])).toBeNull();
    expect(batchWorkerIdRefusal(anyQueue, [{ workerId: `${ID}/a` }, { workerId: `${ID}/a` }])).toBeNull();
    expect(batchWorkerIdRefusal(anyQueue, [{ workerId: "xyz" }, { workerId: "xyz" }])).toBe(refusal);
    expect(batchWorkerIdRefusal(admin, [{ workerId: "xyz" }])).toBeNull();
  });
});

describe("mayTakeQueue", () => {
  it("lets an admin, and an identity with no queues, take any queue", () => {
    for (const queue of ["", "default", "emails", "reports"]) {
      expect(mayTakeQueue(admin, queue)).toBe(true);
      expect(mayTakeQueue(anyQueue, queue)).toBe(true);
    }
  });

  it("lets an identity take only its queues, reading a row's empty queue as the default queue", () => {
    expect(mayTakeQueue(emailsOnly, "emails")).toBe(true);
    expect(mayTakeQueue(emailsOnly, "reports")).toBe(false);
    expect(mayTakeQueue(emailsOnly, "default")).toBe(false);
    expect(mayTakeQueue(emailsOnly, "")).toBe(false);
    expect(mayTakeQueue(withDefault, "default")).toBe(true);
    expect(mayTakeQueue(withDefault, "")).toBe(true);
    // Names are exact: no prefix, no case folding.
    expect(mayTakeQueue(emailsOnly, "email")).toBe(false);
    expect(mayTakeQueue(emailsOnly, "Emails")).toBe(false);
  });

  it("is the claim by id's refusal: { claimed: false, reason: queue_not_allowed }", () => {
    expect(QUEUE_NOT_ALLOWED).toEqual({ kind: "refused", reason: "queue_not_allowed" });
    expect(claimAnswer({ row: row({ queue: "reports" }), decision: QUEUE_NOT_ALLOWED })).toEqual({ claimed: false, reason: "queue_not_allowed" });
    // Every other refusal keeps the reference's answer, without a reason.
    expect(claimAnswer({ row: row(), decision: { kind: "refused" } })).toEqual({ claimed: false });
  });
});

describe("claimQueues", () => {
  it("gives an admin, and an identity with no queues, what was asked (null: any queue)", () => {
    for (const caller of [admin, anyQueue]) {
      expect(claimQueues(caller, null)).toEqual({ queues: null });
      expect(claimQueues(caller, ["reports", "emails"])).toEqual({ queues: ["reports", "emails"] });
    }
  });

  it("narrows an identity's claim without `queue` to its own queues", () => {
    expect(claimQueues(emailsOnly, null)).toEqual({ queues: ["emails"] });
    expect(claimQueues(withDefault, null)).toEqual({ queues: ["emails", "default"] });
  });

  it("keeps what an identity asked among its queues", () => {
    expect(claimQueues(withDefault, ["default"])).toEqual({ queues: ["default"] });
    expect(claimQueues(withDefault, ["default", "emails"])).toEqual({ queues: ["default", "emails"] });
  });

  it("refuses a queue beyond the identity's, naming the first such", () => {
    expect(claimQueues(emailsOnly, ["emails", "reports", "other"])).toEqual({
      refusal: "queue reports is not among this worker identity's queues (nothing was written)",
    });
    expect(claimQueues(emailsOnly, ["default"])).toEqual({
      refusal: "queue default is not among this worker identity's queues (nothing was written)",
    });
  });
});

describe("enqueueRefusal", () => {
  const items = (queues: string[], uniqueKey = "") => queues.map((queue) => ({ queue, uniqueKey }));

  it("lets an admin, and an identity with no queues, enqueue into any queue", () => {
    expect(enqueueRefusal(admin, items(["a", "b", "default"]))).toBeNull();
    expect(enqueueRefusal(anyQueue, items(["a", "b", "default"]))).toBeNull();
  });

  it("lets an identity enqueue only into its queues: the first item beyond them refuses the whole call", () => {
    expect(enqueueRefusal(withDefault, items([]))).toBeNull();
    expect(enqueueRefusal(withDefault, items(["emails", "default", "emails"]))).toBeNull();
    expect(enqueueRefusal(withDefault, items(["emails", "reports", "other"]))).toBe(
      "queue reports is not among this worker identity's queues (nothing was written)",
    );
    expect(enqueueRefusal(emailsOnly, items(["default"]))).toBe("queue default is not among this worker identity's queues (nothing was written)");
  });

  it("refuses an identity a uniqueKey of the server's schedules (taking one would stop that scheduled job); an admin may", () => {
    const key = scheduleUniqueKey("nightly", Date.UTC(2026, 11, 2, 2, 0));
    expect(enqueueRefusal(anyQueue, items(["default"], key))).toBe(
      `jobs[0]: a uniqueKey beginning "${SCHEDULE_KEY_PREFIX}" is the server's own (its schedules'): pick another`,
    );
    expect(enqueueRefusal(anyQueue, items(["default"], "nightly-report"))).toBeNull();
    expect(enqueueRefusal(admin, items(["default"], key))).toBeNull();
  });
});

describe("lastSeenIsStale and the stamp", () => {
  it.each<[string, string, boolean]>([
    ["never stamped", "", true],
    ["an unreadable stamp", "yesterday", true],
    ["a minute ago, exactly", formatPbDate(NOW - LAST_SEEN_EVERY_MS), true],
    ["an hour ago", formatPbDate(NOW - 3_600_000), true],
    ["just under a minute ago", formatPbDate(NOW - LAST_SEEN_EVERY_MS + 1), false],
    ["a second ago", formatPbDate(NOW - 1000), false],
    ["now", formatPbDate(NOW), false],
    ["in the future (a clock that was ahead)", formatPbDate(NOW + 1), true],
    ["a day ahead", formatPbDate(NOW + 86_400_000), true],
  ])("%s: stale %s", (_name, lastSeenAt, stale) => {
    expect(lastSeenIsStale(lastSeenAt, NOW)).toBe(stale);
  });

  it("stamps one fleet_workers row by id with PocketBase's date text", () => {
    expect(stampLastSeenStatement("abc", NOW)).toEqual({
      sql: "UPDATE fleet_workers SET last_seen_at = {:now} WHERE id = {:id}",
      params: { id: "abc", now: formatPbDate(NOW) },
    });
    expect([WORKERS_COLLECTION, WORKER_FIELDS.lastSeenAt]).toEqual(["fleet_workers", "last_seen_at"]);
  });
});

describe("WORKER_NAME_PATTERN", () => {
  it.each([["abc", true], ["w-1.a_b", true], ["_ab", true], ["a".repeat(150), true], ["ab", false], ["a".repeat(151), false],
    ["-ab", false], [".ab", false], ["a b", false], ["a/b1", false], ["éab", false]] as const)("%j: %s", (name, ok) => {
    expect(WORKER_NAME_PATTERN.test(name)).toBe(ok);
  });
});

describe("answerRequest (both adapters' serve)", () => {
  function incoming(fields: Partial<IncomingRequest> = {}) {
    const body = vi.fn(() => ({ jobId: "j" }));
    const execute = vi.fn();
    const req: IncomingRequest = {
      auth: { kind: "admin" }, contentLength: 10, bodyOverLimit: () => false, body, query: (name) => `q:${name}`, execute, ...fields,
    };
    return { req, body, execute };
  }
  const ok = json(200, { ok: true });

  it("answers a refused caller before the body is read or the handler runs, and before the 413", () => {
    const handler = vi.fn(() => ok);
    const logError = vi.fn();
    const none = incoming({ auth: { kind: "none" }, contentLength: MAX_REQUEST_BODY_BYTES + 1 });
    expect(answerRequest(none.req, "worker", handler, logError)).toEqual(json(401, NOT_SIGNED_IN));
    const stale = worker({ lastSeenAt: "" });
    const onAdminRoute = incoming({ auth: stale, contentLength: MAX_REQUEST_BODY_BYTES + 1 });
    expect(answerRequest(onAdminRoute.req, "admin", handler, logError)).toEqual(json(403, { error: ADMIN_ONLY }));
    expect(answerRequest(incoming({ auth: worker({ disabled: true }) }).req, "worker", handler, logError)).toEqual(json(401, WORKER_DISABLED));
    expect(handler).not.toHaveBeenCalled();
    for (const r of [none, onAdminRoute]) {
      expect(r.body).not.toHaveBeenCalled();
      // A refused identity is not stamped as seen.
      expect(r.execute).not.toHaveBeenCalled();
    }
  });

  it("answers an admitted caller's body over the limit 413, declared or found while reading, without the handler", () => {
    const handler = vi.fn(() => ok);
    expect(answerRequest(incoming({ contentLength: MAX_REQUEST_BODY_BYTES + 1 }).req, "admin", handler, vi.fn()))
      .toEqual(json(413, { error: REQUEST_TOO_LARGE }));
    expect(answerRequest(incoming({ contentLength: -1, bodyOverLimit: () => true }).req, "worker", handler, vi.fn()))
      .toEqual(json(413, { error: REQUEST_TOO_LARGE }));
    // A declared length is never re-checked by reading.
    const overLimit = vi.fn(() => true);
    expect(answerRequest(incoming({ contentLength: MAX_REQUEST_BODY_BYTES, bodyOverLimit: overLimit }).req, "worker", handler, vi.fn())).toBe(ok);
    expect(overLimit).not.toHaveBeenCalled();
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it("runs the handler with the caller it is served as, its body and query", () => {
    let seen: FleetRequest | null = null;
    const handler = vi.fn((req: FleetRequest) => {
      seen = req;
      return json(200, { body: req.body(), q: req.query("x") });
    });
    const auth = worker({ queuesJson: '["emails"]', canEnqueue: true, lastSeenAt: formatPbDate(Date.now()) });
    const { req, execute } = incoming({ auth });
    expect(answerRequest(req, "enqueue", handler, vi.fn())).toEqual(json(200, { body: { jobId: "j" }, q: "q:x" }));
    expect(seen!.caller).toEqual({ kind: "worker", id: ID, queues: ["emails"], canEnqueue: true });
    // Seen just now: no stamp.
    expect(execute).not.toHaveBeenCalled();
  });

  it("stamps a stale identity before its handler runs, and logs a failed stamp and goes on", () => {
    const order: string[] = [];
    const handler = vi.fn(() => {
      order.push("handler");
      return ok;
    });
    const stamped = incoming({ auth: worker({ lastSeenAt: "" }), execute: vi.fn(() => void order.push("stamp")) });
    const before = Date.now();
    expect(answerRequest(stamped.req, "worker", handler, vi.fn())).toBe(ok);
    expect(order).toEqual(["stamp", "handler"]);
    const statement = (stamped.req.execute as ReturnType<typeof vi.fn>).mock.calls[0]![0] as ReturnType<typeof stampLastSeenStatement>;
    expect(statement.sql).toBe(stampLastSeenStatement(ID, 0).sql);
    expect(statement.params["id"]).toBe(ID);
    expect(Date.parse(String(statement.params["now"]).replace(" ", "T"))).toBeGreaterThanOrEqual(before);

    const failure = new Error("database is locked");
    const logError = vi.fn();
    const failing = incoming({ auth: worker({ lastSeenAt: "" }), execute: vi.fn(() => { throw failure; }) });
    expect(answerRequest(failing.req, "worker", handler, logError)).toBe(ok);
    expect(logError).toHaveBeenCalledWith(LAST_SEEN_FAILED, failure);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it("never stamps an admin", () => {
    const { req, execute } = incoming();
    answerRequest(req, "admin", () => ok, vi.fn());
    expect(execute).not.toHaveBeenCalled();
  });
});
