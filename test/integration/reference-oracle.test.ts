// pb-fleet against the reference hooks (../shared/reference/fleet-claim.pb.js):
// the same scripted scenarios run on both servers must give the same HTTP
// status, the same body and the same stored row at every step. Ids, timestamps
// and pb-fleet's extra `leaseToken` are left out of the comparison; a lease is
// compared by its length in whole seconds and whether a step changed it.
import { describe, expect, inject, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import {
  createJob,
  futureDate,
  getJob,
  pastDate,
  patchJob,
  post,
  randomKey,
  type ApiResponse,
  type JobFields,
  type JobRecord,
  type RequestOptions,
} from "./support/fleet-api";
import { withoutLeaseToken } from "./support/protocol";

const referenceUrl = inject("referenceUrl");
const pbLine = inject("pbLine");
const referenceToken = inject("referenceToken");
const ci = process.env.CI === "true";
const SKIP_REASON =
  "no reference server: ../shared/reference/fleet-claim.pb.js is absent (it is not part of the project; " +
  "a team checkout has it beside the repository), so pb-fleet cannot be compared with the reference";

const A = "worker-a";
const B = "worker-b";
const DATE_FIELDS = ["lease_expires_at", "claimed_at", "finished_at", "requeued_at"] as const;

/** One server's run of a scenario, recorded step by step in comparable form. */
class Session {
  readonly transcript: unknown[] = [];
  private jobId = "";
  private row: JobRecord | null = null;

  constructor(private readonly server: RequestOptions, private readonly probeKey: string) {}

  async job(fields: JobFields = {}): Promise<void> {
    this.row = await createJob({ probe_key: this.probeKey, ...fields }, this.server);
    this.jobId = this.row.id;
    this.transcript.push({ step: "create", row: this.comparableRow(this.row, null, Date.now()) });
  }

  async patch(label: string, fields: JobFields): Promise<void> {
    const previous = this.row;
    this.row = await patchJob(this.jobId, fields, this.server);
    this.transcript.push({ step: `patch ${label}`, row: this.comparableRow(this.row, previous, Date.now()) });
  }

  claim(worker: unknown, extra: object = {}) {
    return this.send("claim", "/api/fleet/claim", { jobId: "$job", workerId: worker, ...extra });
  }

  renew(worker: unknown, extra: object = {}) {
    return this.send("renew", "/api/fleet/renew", { jobId: "$job", workerId: worker, ...extra });
  }

  release(worker: unknown, status: unknown) {
    return this.send("release", "/api/fleet/release", { jobId: "$job", workerId: worker, status });
  }

  /** Any request; `body` may use the placeholder "$job" for this scenario's job id. */
  async send(label: string, path: string, body: unknown, opts: Omit<RequestOptions, "baseUrl"> = {}): Promise<void> {
    const resolved = JSON.parse(JSON.stringify(body ?? null).replaceAll('"$job"', JSON.stringify(this.jobId)));
    const t0 = Date.now();
    const res: ApiResponse = await post(path, body === undefined ? undefined : resolved, {
      ...this.server,
      ...opts,
      token: opts.token === undefined ? this.server.token : opts.token,
    });
    const t1 = Date.now();
    const previous = this.row;
    if (this.jobId !== "") this.row = await getJob(this.jobId, this.server);
    this.transcript.push({
      step: `${label} ${JSON.stringify(body)}${opts.rawBody !== undefined ? ` raw ${JSON.stringify(opts.rawBody)}` : ""}`,
      status: res.status,
      body: this.comparableBody(res.body),
      row: this.row && this.comparableRow(this.row, previous, t0, t1),
    });
  }

  private comparableBody(body: unknown): unknown {
    const rest = withoutLeaseToken(body) as Record<string, unknown> | null;
    if (rest === null || typeof rest !== "object" || typeof rest["job"] !== "object" || rest["job"] === null) return rest;
    const job = { ...(rest["job"] as Record<string, unknown>) };
    expect(job["id"]).toBe(this.jobId);
    job["id"] = "<the job>";
    job["lease_expires_at"] = job["lease_expires_at"] === "" ? "" : "<date>";
    return { ...rest, job };
  }

  private comparableRow(row: JobRecord, previous: JobRecord | null, t0: number, t1 = t0): Record<string, unknown> {
    const dates: Record<string, unknown> = {};
    for (const field of DATE_FIELDS) {
      const value = row[field];
      dates[field] = value === "" ? "" : previous !== null && previous[field] === value ? "<unchanged>" : "<new>";
    }
    const leaseEnd = parsePbDate(row.lease_expires_at);
    return {
      probe_key: row.probe_key,
      status: row.status,
      claimed_by: row.claimed_by,
      version: row.version,
      reclaim_count: row.reclaim_count,
      consecutive_orphan_count: row.consecutive_orphan_count,
      result: row.result,
      ...dates,
      // Whole seconds from the request to the lease's end: 30, 1, 3600, ... (negative when lapsed).
      lease_seconds: dates["lease_expires_at"] === "<new>" && leaseEnd !== null ? wholeLeaseSeconds(leaseEnd, t0, t1) : null,
    };
  }
}

/**
 * The lease's length in whole seconds: the server stamped it at some moment
 * between sending the request (t0) and its answer (t1), so the smallest whole
 * number of seconds that ends at the lease from within that span (100 ms of
 * clock slack). Rounding from t0 alone read 31 for a 30 s lease on a loaded
 * machine whose server took the request up 600 ms late.
 */
function wholeLeaseSeconds(leaseEnd: number, t0: number, t1: number): number {
  const shortest = Math.ceil((leaseEnd - t1) / 1000 - 0.1);
  const longest = Math.floor((leaseEnd - t0) / 1000 + 0.1);
  return shortest <= longest ? shortest : Math.round((leaseEnd - t0) / 1000);
}

type Scenario = (s: Session) => Promise<void>;

const SCENARIOS: [string, Scenario][] = [
  ["claim, retry, renew and finish, with every refusal on the way", async (s) => {
    await s.job();
    await s.claim(A, { leaseSeconds: 60 });
    await s.claim(A, { leaseSeconds: 600 }); // alreadyHeld, lease kept
    await s.claim(B);
    await s.renew(B);
    await s.release(B, "done");
    await s.release(A, "pending"); // refused_lease_live
    await s.renew(A, { leaseSeconds: 120 });
    await s.renew(A);
    await s.release(A, "done");
    await s.release(A, "done"); // refused_terminal_same_holder
    await s.release(A, "pending");
    await s.release(B, "failed");
    await s.claim(A);
    await s.claim(B);
    await s.renew(A);
  }],
  ["a dead holder: refused after expiry, stolen, re-queued, claimed again, failed", async (s) => {
    await s.job({ reclaim_count: 0, consecutive_orphan_count: 0 });
    await s.claim(A, { leaseSeconds: 30 });
    await s.patch("lease lapsed", { lease_expires_at: pastDate() });
    await s.renew(A);
    await s.release(A, "done"); // refused_not_holder: expired
    await s.claim(B); // steal
    await s.renew(B, { leaseSeconds: 10 });
    await s.patch("lease lapsed", { lease_expires_at: pastDate() });
    await s.release(A, "pending"); // not the holder any more
    await s.release(B, "pending"); // the sweeper's re-queue
    await s.release(B, "pending"); // pending row: not the holder
    await s.renew(B);
    await s.claim(A);
    await s.patch("lease lapsed", { lease_expires_at: pastDate() });
    await s.claim(A); // a steal from itself
    await s.release(A, "failed");
    await s.release(A, "done");
  }],
  ["empty and odd leases", async (s) => {
    await s.job({ status: "claimed", claimed_by: A, lease_expires_at: "", version: 3 });
    await s.renew(A);
    await s.release(A, "done");
    await s.claim(A); // empty lease counts as expired: a steal
    await s.patch("lease emptied", { lease_expires_at: "" });
    await s.release(A, "pending");
    await s.patch("held by B, running, empty lease", { status: "running", claimed_by: B, lease_expires_at: "" });
    await s.claim(A);
  }],
  ["terminal rows are never claimable and answer their holder", async (s) => {
    await s.job({ status: "done", claimed_by: A, lease_expires_at: futureDate(), version: 4, consecutive_orphan_count: 2 });
    await s.claim(A);
    await s.claim(B);
    await s.renew(A);
    await s.release(A, "failed");
    await s.release(B, "done");
    await s.patch("failed, lease lapsed", { status: "failed", lease_expires_at: pastDate() });
    await s.claim(A);
    await s.release(A, "pending");
    await s.release(B, "pending");
  }],
  ["a pending row with a live lease and a holder name", async (s) => {
    await s.job({ status: "pending", claimed_by: A, lease_expires_at: futureDate(), reclaim_count: 2, consecutive_orphan_count: 3 });
    await s.renew(A);
    await s.release(A, "done");
    await s.claim(B, { leaseSeconds: 5 });
    await s.release(B, "done");
  }],
  ["leaseSeconds: defaults, floor and cap", async (s) => {
    await s.job();
    for (const leaseSeconds of ["60", null, 0, -5, 0.001, 1e9, 120, true, [60], { s: 1 }, 2]) {
      await s.claim(A, { leaseSeconds });
      await s.renew(A, { leaseSeconds });
      await s.patch("lease lapsed", { lease_expires_at: pastDate() });
    }
  }],
  ["validation errors on all three endpoints", async (s) => {
    await s.job({ status: "claimed", claimed_by: A, lease_expires_at: futureDate() });
    const idBodies: unknown[] = [
      {}, { workerId: A }, { jobId: "$job" }, { jobId: "", workerId: A }, { jobId: "$job", workerId: "" },
      { jobId: null, workerId: A }, { jobId: 0, workerId: A }, { jobId: "$job", workerId: false },
      { jobId: "$job", workerId: 7 }, { jobId: "$job", workerId: { id: A } }, { jobId: "$job", workerId: [A] },
      { jobId: "$job", workerId: true }, { jobId: 12345, workerId: A }, { jobId: { id: "$job" }, workerId: A },
      { jobId: ["$job"], workerId: A }, { jobId: true, workerId: A }, { jobId: 1, workerId: 2 },
    ];
    for (const path of ["/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release"]) {
      for (const body of idBodies) await s.send("bad ids", path, { status: "done", ...(body as object) });
      await s.send("invalid JSON", path, undefined, { rawBody: '{"jobId": ' });
      await s.send("top-level array", path, undefined, { rawBody: JSON.stringify([{ jobId: "x", workerId: A }]) });
      await s.send("text/plain", path, undefined, { rawBody: JSON.stringify({ jobId: "x", workerId: A, status: "done" }), contentType: "text/plain" });
      await s.send("empty body", path, undefined, { rawBody: "" });
    }
    for (const status of [undefined, "", null, false, 0, "DONE", "claimed", "running", " done", 1, true, ["done"], { s: "done" }]) {
      await s.send("bad status", "/api/fleet/release", status === undefined ? { jobId: "$job", workerId: A } : { jobId: "$job", workerId: A, status });
    }
    await s.send("bad ids and status", "/api/fleet/release", { jobId: "$job", workerId: 3, status: "nope" });
  }],
  ["unknown jobs", async (s) => {
    await s.send("claim", "/api/fleet/claim", { jobId: "doesnotexist123", workerId: A });
    await s.send("renew", "/api/fleet/renew", { jobId: "doesnotexist123", workerId: A });
    for (const status of ["done", "failed", "pending"]) {
      await s.send("release", "/api/fleet/release", { jobId: "doesnotexist123", workerId: A, status });
    }
  }],
  ["requests without an admin token", async (s) => {
    await s.job();
    for (const path of ["/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release"]) {
      await s.send("no token", path, { jobId: "$job", workerId: A, status: "done" }, { token: null });
      await s.send("bad token", path, { jobId: "$job", workerId: A, status: "done" }, { token: "not-a-token" });
    }
    await s.claim(A);
  }],
];

describe("pb-fleet answers like the reference hooks", () => {
  if (pbLine !== "0.22") {
    // A true limitation, not a hidden failure: there is no reference for this API to compare with.
    const why =
      `the reference hooks (../shared/reference/fleet-claim.pb.js) are written for PocketBase 0.22's JS API ` +
      `($app.dao(), $apis.requireAdminAuth()) and cannot load on PocketBase ${inject("pbVersion")}; ` +
      "the oracle comparison runs on 0.22.x only, where it checks the handlers that this bundle shares";
    console.warn(`reference-oracle: skipped, ${why}.`);
    it.skip(`skipped: ${why}`, () => {});
    return;
  }
  if (referenceUrl === null || referenceToken === null) {
    if (ci) {
      it("runs in CI", () => {
        expect.fail(`CI=true but ${SKIP_REASON}.`);
      });
    } else {
      console.warn(`reference-oracle: skipped, ${SKIP_REASON}.`);
      it.skip(`skipped: ${SKIP_REASON}`, () => {});
    }
    return;
  }

  it.each(SCENARIOS)("%s", async (_name, scenario) => {
    const probeKey = randomKey("oracle");
    const fleet = new Session({}, probeKey);
    const reference = new Session({ baseUrl: referenceUrl, token: referenceToken }, probeKey);
    await Promise.all([scenario(fleet), scenario(reference)]);
    expect(fleet.transcript).toHaveLength(reference.transcript.length);
    for (let i = 0; i < fleet.transcript.length; i++) {
      expect(fleet.transcript[i], `step ${i} differs from the reference`).toEqual(reference.transcript[i]);
    }
  });
});
