// docs/flow-control.md "Limits", the rate window: a group with rateLimit { limit: 5,
// periodSeconds: 2 } drained by 20 concurrent callers for 10 s (most by
// claim-next, some by claim by id: every winning claim counts) never wins more
// than 5 claims in any 2-second window, and still wins at least 20 (the limit
// paces the fleet, it does not stop it). The winners finish their jobs in
// every way the contract names (done, a retry that comes back and is claimed
// again, a delete), and each claim stays counted. Each win's instant is read
// from its answer (lease_expires_at - leaseSeconds: the claim's instant plus
// the lease it asked for) and checked against the row's claimed_at while the
// job is still held: a job claimed again re-stamps its claimed_at, so the
// rows afterwards would not show every claim.
import { describe, expect, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import type { EnqueueItem } from "../../src/lib/types";
import { claimNext, enqueueOk, get, getQueueJob, post, randomKey, send } from "./support/fleet-api";
import { sleep } from "./support/race";

const LIMIT = 5;
const PERIOD_S = 2;
const CALLERS = 20;
const BY_ID_CALLERS = 5;
const RUN_MS = 10_000;
/** Few: the fleet runs out of fresh jobs and claims the retried ones again (each claim stays counted). */
const JOBS = 16;
const LEASE_SECONDS = 30;

interface Win {
  at: number;
  jobId: string;
  worker: string;
  path: "claim-next" | "claim";
}

describe("a group's rate limit under 20 concurrent callers", () => {
  it(`rateLimit { limit: ${LIMIT}, periodSeconds: ${PERIOD_S} }: never more than ${LIMIT} claims in a ${PERIOD_S} s window, at least 20 in ${RUN_MS / 1000} s`, async () => {
    const queue = randomKey("fr");
    const group = `${queue}-host`;
    const prefix = `${queue}/`;
    const set = await post("/api/fleet/flow", { group, rateLimit: { limit: LIMIT, periodSeconds: PERIOD_S } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.flow).toEqual({ group, paused: false, concurrency: null, rateLimit: { limit: LIMIT, periodSeconds: PERIOD_S }, parkedUntil: null });

    const items: EnqueueItem[] = Array.from({ length: JOBS }, (_, i) => ({ probeKey: `${prefix}${i}`, queue, group }));
    const ids = (await enqueueOk(items)).map((j) => j.id);
    const wins: Win[] = [];
    const problems: string[] = [];
    const reasons: Record<string, number> = {};
    let windowPeakSeen = 0;
    const started = Date.now();
    let finishing = 0;

    /** A win: its instant from the answer, checked against the row while this caller still holds the job. */
    const won = async (worker: string, path: Win["path"], job: { id: string; lease_expires_at: string; status: string; claimed_by: string }, token: string, seq: number) => {
      const leaseEnd = parsePbDate(job.lease_expires_at);
      expect(leaseEnd, job.lease_expires_at).not.toBeNull();
      const at = leaseEnd! - LEASE_SECONDS * 1000;
      expect(job).toMatchObject({ status: "claimed", claimed_by: worker });
      wins.push({ at, jobId: job.id, worker, path });
      const row = (await getQueueJob(job.id)) as Awaited<ReturnType<typeof getQueueJob>> & { claimed_at: string; group_key: string };
      if (parsePbDate(row.claimed_at) !== at) problems.push(`${job.id}: the answer's lease says claimed at ${at}, the row's claimed_at is ${row.claimed_at}`);
      expect(row.group_key).toBe(group);
      // Finish it: done, retry (it comes back after its backoff and is claimed again), or delete.
      finishing++;
      const how = seq % 4;
      if (how === 0) {
        const res = await post("/api/fleet/complete", { workerId: worker, releases: [{ jobId: job.id, leaseToken: token, status: "done" }] });
        expect(res.body.results?.[0]?.released, JSON.stringify(res.body)).toBe(true);
      } else if (how !== 3) {
        const res = await post("/api/fleet/release", { jobId: job.id, workerId: worker, leaseToken: token, status: "retry", error: "again" });
        expect(res.body.released, JSON.stringify(res.body)).toBe(true);
      } else {
        const res = await send("DELETE", `/api/collections/probe_jobs/records/${job.id}`, undefined);
        expect(res.status, JSON.stringify(res.body)).toBe(204);
      }
      finishing--;
    };

    // The server's own count of the window, read while the fleet runs, judged once every claim is known: at its
    // instant G the server counts the claims stamped after G - period, and a claim stamped just before G whose
    // transaction committed after it was read in is one of them, so a reading past the limit is wrong only if
    // more claims than it counts were stamped between the request's start - period and its answer.
    const samples: { sentAt: number; answeredAt: number; n: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const sentAt = Date.now();
        const res = await get(`/api/fleet/flow?group=${encodeURIComponent(group)}`);
        expect(res.status).toBe(200);
        const n = (res.body.groups as { claimsInWindow: number }[])[0]?.claimsInWindow ?? 0;
        samples.push({ sentAt, answeredAt: Date.now(), n });
        windowPeakSeen = Math.max(windowPeakSeen, n);
        await sleep(150);
      }
    })();

    let seq = 0;
    await Promise.all(Array.from({ length: CALLERS }, async (_, c) => {
      const worker = `${queue}-w${c}`;
      while (Date.now() - started < RUN_MS) {
        if (c < CALLERS - BY_ID_CALLERS) {
          const res = await claimNext({ workerId: worker, queue, limit: 1 + (c % 3), leaseSeconds: LEASE_SECONDS });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          for (const { job, leaseToken } of res.body.jobs) await won(worker, "claim-next", job, leaseToken, seq++);
          if (res.body.jobs.length > 0) continue;
        } else {
          const jobId = ids[Math.floor(Math.random() * ids.length)]!;
          const res = await post("/api/fleet/claim", { jobId, workerId: worker, leaseSeconds: LEASE_SECONDS });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          if (res.body.claimed === true && res.body.alreadyHeld !== true) {
            await won(worker, "claim", res.body.job, res.body.leaseToken, seq++);
            continue;
          }
          if (res.body.claimed === false) reasons[res.body.reason ?? "(none)"] = (reasons[res.body.reason ?? "(none)"] ?? 0) + 1;
        }
        await sleep(10 + Math.random() * 20);
      }
    }));
    sampling = false;
    await sampler;
    expect(finishing).toBe(0);

    wins.sort((a, b) => a.at - b.at);
    const first = wins[0]?.at ?? 0;
    const timeline = wins.map((w) => `+${w.at - first} ms ${w.path} ${w.jobId}`).join("\n");
    // Every window (t - period, t] that ends at a claim holds at most LIMIT claims; any window holding more would contain one such.
    let worst = 0;
    for (let j = 0; j < wins.length; j++) {
      let n = 0;
      for (let i = j; i >= 0 && wins[i]!.at > wins[j]!.at - PERIOD_S * 1000; i--) n++;
      worst = Math.max(worst, n);
      if (n > LIMIT) problems.push(`${n} claims in (${wins[j]!.at - first - PERIOD_S * 1000}, ${wins[j]!.at - first}] ms`);
    }
    for (const s of samples) {
      const stamped = wins.filter((w) => w.at > s.sentAt - PERIOD_S * 1000 && w.at <= s.answeredAt).length;
      if (s.n > LIMIT && s.n > stamped) problems.push(`GET /api/fleet/flow: claimsInWindow ${s.n}, of ${stamped} claims stamped around it`);
    }
    const byPath = { "claim-next": wins.filter((w) => w.path === "claim-next").length, claim: wins.filter((w) => w.path === "claim").length };
    const reclaimed = wins.length - new Set(wins.map((w) => w.jobId)).size;
    console.log(
      `[flow-rate-limit] ${wins.length} claims (${JSON.stringify(byPath)}, ${reclaimed} of jobs claimed again) in ${RUN_MS / 1000} s; ` +
        `worst window ${worst}; server's claimsInWindow peak ${windowPeakSeen}; claim-by-id refusals ${JSON.stringify(reasons)}`,
    );
    expect(problems, `the claims, from the first:\n${timeline}`).toEqual([]);
    expect(wins.length, `the claims:\n${timeline}`).toBeGreaterThanOrEqual(20);
    expect(worst).toBe(LIMIT);
    expect(reclaimed, "jobs claimed again after a retry").toBeGreaterThan(0);
    // Claims by id were held back by the rate limit, by name.
    expect(reasons["rate_limit"] ?? 0).toBeGreaterThan(0);
  }, 60_000);
});
