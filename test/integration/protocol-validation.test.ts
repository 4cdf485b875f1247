// Every HTTP 400 of the fleet protocol, with the reference's messages, on all three
// endpoints; and a rejected request never touches the row it names. Each row is
// in a state where the same request with valid fields WOULD write, so an
// unchanged row proves the validation stopped it.
import { describe, expect, it } from "vitest";
import { createJob, futureDate, getJob, post, type JobRecord } from "./support/fleet-api";
import { ENDPOINTS, heldJob, type Endpoint } from "./support/protocol";

const REQUIRED = "jobId and workerId are required";
const WORKER_NOT_STRING = "workerId must be a string";
const JOB_NOT_STRING = "jobId must be a string";
const STATUS_REQUIRED = "status is required (done|failed|pending)";
const STATUS_INVALID = "status must be done|failed|pending";

/** A row that a valid request from w1 to this endpoint would change. */
function rowFor(endpoint: Endpoint): Promise<JobRecord> {
  if (endpoint === "/api/fleet/claim") return createJob();
  return heldJob("w1", { lease_expires_at: futureDate() });
}

/** Release also needs a valid status, so that only the ids are wrong. */
function extraFor(endpoint: Endpoint): Record<string, unknown> {
  return endpoint === "/api/fleet/release" ? { status: "done" } : { leaseSeconds: 60 };
}

type BodyOf = (jobId: string) => Record<string, unknown>;

const ID_CASES: [string, BodyOf, string][] = [
  ["an empty body object", () => ({}), REQUIRED],
  ["jobId missing", () => ({ workerId: "w1" }), REQUIRED],
  ["workerId missing", (id) => ({ jobId: id }), REQUIRED],
  ["jobId empty", () => ({ jobId: "", workerId: "w1" }), REQUIRED],
  ["workerId empty", (id) => ({ jobId: id, workerId: "" }), REQUIRED],
  ["jobId null", () => ({ jobId: null, workerId: "w1" }), REQUIRED],
  ["workerId null", (id) => ({ jobId: id, workerId: null }), REQUIRED],
  ["jobId 0", () => ({ jobId: 0, workerId: "w1" }), REQUIRED],
  ["workerId false", (id) => ({ jobId: id, workerId: false }), REQUIRED],
  ["workerId a number", (id) => ({ jobId: id, workerId: 7 }), WORKER_NOT_STRING],
  ["workerId an object", (id) => ({ jobId: id, workerId: { id: "w1" } }), WORKER_NOT_STRING],
  ["workerId an array", (id) => ({ jobId: id, workerId: ["w1"] }), WORKER_NOT_STRING],
  ["workerId true", (id) => ({ jobId: id, workerId: true }), WORKER_NOT_STRING],
  ["jobId a number", () => ({ jobId: 12345, workerId: "w1" }), JOB_NOT_STRING],
  ["jobId an object", (id) => ({ jobId: { id }, workerId: "w1" }), JOB_NOT_STRING],
  ["jobId an array", (id) => ({ jobId: [id], workerId: "w1" }), JOB_NOT_STRING],
  ["jobId true", () => ({ jobId: true, workerId: "w1" }), JOB_NOT_STRING],
  ["both ids numbers (workerId is checked first)", () => ({ jobId: 1, workerId: 2 }), WORKER_NOT_STRING],
];

/** Bodies PocketBase reads as `{}`: what reaches the handler has no ids at all. */
const RAW_CASES: [string, (jobId: string) => string, string | undefined][] = [
  ["invalid JSON", (id) => `{"jobId": "${id}", "workerId": "w1",`, undefined],
  ["a top-level array", (id) => JSON.stringify([{ jobId: id, workerId: "w1", status: "done" }]), undefined],
  ["a text/plain body", (id) => JSON.stringify({ jobId: id, workerId: "w1", status: "done" }), "text/plain"],
  ["an empty body", () => "", undefined],
  ["JSON null", () => "null", undefined],
  ["a JSON string", (id) => JSON.stringify(id), undefined],
];

const STATUS_CASES: [string, unknown, string][] = [
  ["missing", undefined, STATUS_REQUIRED],
  ["empty", "", STATUS_REQUIRED],
  ["null", null, STATUS_REQUIRED],
  ["false", false, STATUS_REQUIRED],
  ["0", 0, STATUS_REQUIRED],
  ['"DONE"', "DONE", STATUS_INVALID],
  ['"claimed"', "claimed", STATUS_INVALID],
  ['"running"', "running", STATUS_INVALID],
  ['" done"', " done", STATUS_INVALID],
  ['"abandoned"', "abandoned", STATUS_INVALID],
  ["a number", 1, STATUS_INVALID],
  ["true", true, STATUS_INVALID],
  ["an array", ["done"], STATUS_INVALID],
  ["an object", { status: "done" }, STATUS_INVALID],
];

async function expectRejected(
  endpoint: Endpoint,
  send: (jobId: string) => ReturnType<typeof post>,
  error: string,
): Promise<void> {
  const before = await rowFor(endpoint);
  const res = await send(before.id);
  expect(res).toEqual({ status: 400, body: { error } });
  expect(await getJob(before.id)).toEqual(before);
}

describe.each(ENDPOINTS)("%s validation", (endpoint) => {
  it.each(ID_CASES)("rejects %s", async (_what, bodyOf, error) => {
    await expectRejected(endpoint, (id) => post(endpoint, { ...extraFor(endpoint), ...bodyOf(id) }), error);
  });

  it.each(RAW_CASES)("rejects %s as missing ids", async (_what, raw, contentType) => {
    await expectRejected(endpoint, (id) => post(endpoint, undefined, { rawBody: raw(id), contentType }), REQUIRED);
  });
});

describe("/api/fleet/release status validation", () => {
  it.each(STATUS_CASES)("rejects status %s", async (_what, status, error) => {
    await expectRejected(
      "/api/fleet/release",
      (id) => post("/api/fleet/release", status === undefined ? { jobId: id, workerId: "w1" } : { jobId: id, workerId: "w1", status }),
      error,
    );
  });

  it("checks the ids before the status", async () => {
    await expectRejected("/api/fleet/release", (id) => post("/api/fleet/release", { jobId: id, workerId: 3, status: "nope" }), WORKER_NOT_STRING);
    await expectRejected("/api/fleet/release", () => post("/api/fleet/release", { workerId: "w1" }), REQUIRED);
  });
});
