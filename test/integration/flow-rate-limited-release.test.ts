// A `retry` release with rateLimitedFor (docs/flow-control.md "Release targets"), by
// /release and by items of /complete: the job goes back to pending due now + N
// (not the backoff), its error stored, the attempt given back (so waiting out a
// rate limit never dead-letters it: maxAttempts 3, rate-limited 50 times, is
// still pending); its group, or its queue when it has none, is parked until
// max(its park, now + N); the claim stays counted in the rate window.
// rateLimitedFor with another status or out of range is a 400 that writes
// nothing, and a refused release parks nothing.
import { describe, expect, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import { enqueueOk, get, getQueueJob, patchJob, pastDate, post, randomKey, type QueueJobRecord } from "./support/fleet-api";
import { claim, timed } from "./support/protocol";
import { sleep } from "./support/race";

const LEASE = 60;

async function setFlow(body: Record<string, unknown>): Promise<any> {
  const res = await post("/api/fleet/flow", body);
  expect(res.status, `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).toBe(200);
  return res.body.flow;
}

/** GET /api/fleet/flow's entry of one scope (null: absent). */
async function flowOf(kind: "queue" | "group", name: string): Promise<any> {
  const res = await get(`/api/fleet/flow?${kind}=${encodeURIComponent(name)}`);
  expect(res.status).toBe(200);
  return (kind === "queue" ? res.body.queues : res.body.groups)[0] ?? null;
}

async function claimOk(id: string, workerId: string): Promise<string> {
  const res = await claim(id, workerId, { leaseSeconds: LEASE });
  expect(res.body, `claim of ${id}`).toMatchObject({ claimed: true });
  return res.body.leaseToken as string;
}

function releaseLimited(jobId: string, workerId: string, leaseToken: string, rateLimitedFor: unknown, extra: object = {}) {
  return post("/api/fleet/release", { jobId, workerId, status: "retry", leaseToken, rateLimitedFor, ...extra });
}

/** A stored date within [t0, t1] + offsetMs (ms rounding aside). */
function expectAt(pbDate: string | null, t0: number, t1: number, offsetMs: number): void {
  const t = parsePbDate(pbDate ?? "");
  expect(t, `"${pbDate}"`).not.toBeNull();
  expect(t!).toBeGreaterThanOrEqual(t0 + offsetMs - 2);
  expect(t!).toBeLessThanOrEqual(t1 + offsetMs + 2);
}

describe("release retry with rateLimitedFor", () => {
  it("back to pending due now + N, error stored, the attempt given back; the group parked until now + N; the claim still counted", async () => {
    const queue = randomKey("frl");
    const group = `${queue}.api`;
    await setFlow({ group, rateLimit: { limit: 5, periodSeconds: 60 } });
    const [job, sibling] = await enqueueOk([
      { probeKey: `${queue}/a`, queue, group, maxAttempts: 3 },
      { probeKey: `${queue}/b`, queue, group },
    ]);
    const token = await claimOk(job!.id, "w1");
    const held = await getQueueJob(job!.id);
    expect(held).toMatchObject({ attempts: 1, status: "claimed" });

    const { result: res, t0, t1 } = await timed(() => releaseLimited(job!.id, "w1", token, 3, { error: "429 Too Many Requests" }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await getQueueJob(job!.id);
    expect(res.body).toEqual({
      released: true,
      job: { id: job!.id, probe_key: `${queue}/a`, status: "pending", claimed_by: "", lease_expires_at: "", version: held.version + 1 },
    });
    expect(row).toMatchObject({
      status: "pending", attempts: 0, max_attempts: 3, last_error: "429 Too Many Requests", claimed_by: "", lease_token: "",
      dead_lettered_at: "", finished_at: "", version: held.version + 1, reclaim_count: held.reclaim_count, consecutive_orphan_count: 0,
    });
    // due at now + 3 s exactly, not after the backoff (which would be at least 1 s, at most 1.25 s, for attempt 1)
    expectAt(row.run_at, t0, t1, 3_000);
    const parked = await flowOf("group", group);
    expectAt(parked.parkedUntil, t0, t1, 3_000);
    expect(parked).toMatchObject({ claimsInWindow: 1, held: 0 });
    // the group is parked, not the queue
    expect((await flowOf("queue", queue)).parkedUntil).toBeNull();
    expect((await claim(sibling!.id, "w2", { leaseSeconds: LEASE })).body).toEqual({ claimed: false, reason: "paused" });
    expect((await claim(job!.id, "w2", { leaseSeconds: LEASE })).body).toEqual({ claimed: false });

    // once N has passed, both are handed out again, and each claim counts once more
    await sleep(Math.max(0, parsePbDate(row.run_at)! - Date.now()) + 50);
    const next = await post("/api/fleet/claim-next", { workerId: "w3", queue, limit: 5, leaseSeconds: LEASE });
    expect(next.body.jobs.map((j: any) => [j.job.id, j.job.attempts]).sort()).toEqual([[job!.id, 1], [sibling!.id, 1]].sort());
    expect((await flowOf("group", group)).claimsInWindow).toBe(3);
  });

  it("a job with no group parks its queue; an item of /complete does the same", async () => {
    const queue = randomKey("frl-q");
    const [a, b, c] = await enqueueOk([{ probeKey: `${queue}/a`, queue }, { probeKey: `${queue}/b`, queue }, { probeKey: `${queue}/c`, queue }]);
    const ta = await claimOk(a!.id, "w");
    const tb = await claimOk(b!.id, "w");
    const { result: res, t0, t1 } = await timed(() => post("/api/fleet/complete", {
      workerId: "w",
      releases: [
        { jobId: a!.id, leaseToken: ta, status: "retry", rateLimitedFor: 1.5, error: "slow down" },
        { jobId: b!.id, leaseToken: tb, status: "done", result: { ok: true } },
      ],
    }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toMatchObject([
      { jobId: a!.id, released: true, job: { status: "pending", claimed_by: "" } },
      { jobId: b!.id, released: true, job: { status: "done" } },
    ]);
    const row = await getQueueJob(a!.id);
    expect(row).toMatchObject({ status: "pending", attempts: 0, last_error: "slow down", claimed_by: "" });
    expectAt(row.run_at, t0, t1, 1_500);
    expectAt((await flowOf("queue", queue)).parkedUntil, t0, t1, 1_500);
    expect(await getQueueJob(b!.id)).toMatchObject({ status: "done", result: { ok: true } });
    expect((await claim(c!.id, "w2", { leaseSeconds: LEASE })).body).toEqual({ claimed: false, reason: "paused" });
  });

  it("the park is max(existing, now + N): a longer park is kept, a shorter one extended", async () => {
    const queue = randomKey("frl-max");
    const group = `${queue}-g`;
    const [a, b] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group }, { probeKey: `${queue}/b`, queue, group }]);
    const ta = await claimOk(a!.id, "w");
    const tb = await claimOk(b!.id, "w");

    const long = await setFlow({ group, parkSeconds: 120 });
    expect((await releaseLimited(a!.id, "w", ta, 3)).body).toMatchObject({ released: true });
    expect((await flowOf("group", group)).parkedUntil).toBe(long.parkedUntil);

    await setFlow({ group, parkSeconds: 1 });
    const { result: res, t0, t1 } = await timed(() => releaseLimited(b!.id, "w", tb, 30));
    expect(res.body).toMatchObject({ released: true });
    expectAt((await flowOf("group", group)).parkedUntil, t0, t1, 30_000);
  });

  it("the claim stays counted in the rate window after the attempt is given back", async () => {
    const queue = randomKey("frl-win");
    const group = `${queue}-g`;
    await setFlow({ group, rateLimit: { limit: 2, periodSeconds: 60 } });
    const [job, other] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group }, { probeKey: `${queue}/b`, queue, group }]);
    for (let i = 1; i <= 2; i++) {
      const token = await claimOk(job!.id, `w${i}`);
      expect((await releaseLimited(job!.id, `w${i}`, token, 1)).body).toMatchObject({ released: true });
      expect((await getQueueJob(job!.id)).attempts).toBe(0);
      await sleep(1_050);
    }
    expect((await flowOf("group", group)).claimsInWindow).toBe(2);
    expect((await claim(job!.id, "w3", { leaseSeconds: LEASE })).body).toEqual({ claimed: false, reason: "rate_limit" });
    expect((await claim(other!.id, "w3", { leaseSeconds: LEASE })).body).toEqual({ claimed: false, reason: "rate_limit" });
  });

  it("maxAttempts 3, rate-limited 50 times (release and complete alike): never dead-lettered", async () => {
    const queue = randomKey("frl-50");
    const group = `${queue}-g`;
    const [job] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group, maxAttempts: 3 }]);
    for (let i = 0; i < 50; i++) {
      const token = await claimOk(job!.id, "w");
      expect((await getQueueJob(job!.id)).attempts, `claim ${i + 1}`).toBe(1);
      const res = i % 2 === 0
        ? await releaseLimited(job!.id, "w", token, 60, { error: `429 #${i}` })
        : await post("/api/fleet/complete", { workerId: "w", releases: [{ jobId: job!.id, leaseToken: token, status: "retry", rateLimitedFor: 60, error: `429 #${i}` }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const row = await getQueueJob(job!.id);
      expect(row, `after rate-limited release ${i + 1}`).toMatchObject({ status: "pending", attempts: 0, dead_lettered_at: "", last_error: `429 #${i}` });
      // Set-up only: the minute's wait skipped (due now, the park lifted), so the next claim can come at once.
      await patchJob(job!.id, { run_at: pastDate(1_000) } as any);
      await setFlow({ group, parkSeconds: 0 });
    }
    const row = await getQueueJob(job!.id);
    expect(row).toMatchObject({ status: "pending", attempts: 0, max_attempts: 3, dead_lettered_at: "", finished_at: "" });
    // its attempts are whole: three real failures are what it takes
    for (let attempt = 1; attempt <= 3; attempt++) {
      const token = await claimOk(job!.id, "w");
      const res = await post("/api/fleet/release", { jobId: job!.id, workerId: "w", status: "retry", leaseToken: token, error: `real ${attempt}` });
      expect(res.body.job.status).toBe(attempt < 3 ? "pending" : "failed");
      if (attempt < 3) await patchJob(job!.id, { run_at: pastDate(1_000) } as any);
    }
    expect(await getQueueJob(job!.id)).toMatchObject({ status: "failed", attempts: 3, last_error: "real 3" });
  }, 60_000);
});

describe("rateLimitedFor refused", () => {
  it.each([
    ["with status done", { status: "done", rateLimitedFor: 5 }],
    ["with status failed", { status: "failed", rateLimitedFor: 5 }],
    ["with status pending", { status: "pending", rateLimitedFor: 5 }],
    ["0", { status: "retry", rateLimitedFor: 0 }],
    ["0.5", { status: "retry", rateLimitedFor: 0.5 }],
    ["-1", { status: "retry", rateLimitedFor: -1 }],
    ["86401", { status: "retry", rateLimitedFor: 86_401 }],
    ["a string", { status: "retry", rateLimitedFor: "5" }],
    ["true", { status: "retry", rateLimitedFor: true }],
    ["an object", { status: "retry", rateLimitedFor: { seconds: 5 } }],
  ])("%s: a 400 from /release and from /complete, and nothing written", async (_what, fields) => {
    const queue = randomKey("frl-bad");
    const group = `${queue}-g`;
    const [a, b] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group }, { probeKey: `${queue}/b`, queue, group }]);
    const ta = await claimOk(a!.id, "w");
    const tb = await claimOk(b!.id, "w");
    const before = [await getQueueJob(a!.id), await getQueueJob(b!.id)];

    const single = await post("/api/fleet/release", { jobId: a!.id, workerId: "w", leaseToken: ta, error: "x", ...fields });
    expect(single.status, JSON.stringify(single.body)).toBe(400);
    expect(single.body).toEqual({ error: expect.stringMatching(/rateLimitedFor/) });
    // one good item beside the bad one: the whole call is refused
    const batch = await post("/api/fleet/complete", {
      workerId: "w",
      releases: [{ jobId: b!.id, leaseToken: tb, status: "done" }, { jobId: a!.id, leaseToken: ta, ...fields }],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(400);
    expect(batch.body).toEqual({ error: expect.stringMatching(/^releases\[1\]: .*rateLimitedFor/) });

    expect([await getQueueJob(a!.id), await getQueueJob(b!.id)]).toEqual(before as QueueJobRecord[]);
    expect(await flowOf("group", group)).toBeNull();
  });

  it("the bounds 1 and 86400 are accepted", async () => {
    const queue = randomKey("frl-ok");
    const [a, b] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group: `${queue}-a` }, { probeKey: `${queue}/b`, queue, group: `${queue}-b` }]);
    for (const [job, seconds] of [[a!, 1], [b!, 86_400]] as const) {
      const token = await claimOk(job.id, "w");
      const { result: res, t0, t1 } = await timed(() => releaseLimited(job.id, "w", token, seconds));
      expect(res.body).toMatchObject({ released: true });
      expectAt((await getQueueJob(job.id)).run_at, t0, t1, seconds * 1000);
    }
  });

  it("a release refused (expired lease, another holder, stale token) parks nothing and writes nothing", async () => {
    const queue = randomKey("frl-ref");
    const group = `${queue}-g`;
    const [a] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group }]);
    const res = await claim(a!.id, "w", { leaseSeconds: 1 });
    const token = res.body.leaseToken as string;
    const before = await getQueueJob(a!.id);
    expect((await releaseLimited(a!.id, "other", token, 5)).body).toEqual({ released: false, reason: "refused_not_holder" });
    expect((await releaseLimited(a!.id, "w", "stale-token", 5)).body).toEqual({ released: false, reason: "refused_stale_token" });
    await sleep(1_100);
    expect((await releaseLimited(a!.id, "w", token, 5)).body).toEqual({ released: false, reason: "refused_not_holder" });
    expect(await getQueueJob(a!.id)).toEqual(before);
    expect(await flowOf("group", group)).toBeNull();
  });
});
