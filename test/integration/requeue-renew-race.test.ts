// The sweeper's re-queue (release to pending) racing the holder's renew on a
// lease that is just about to expire: whichever commits first decides, and a
// renew that succeeded is never followed by the job being yanked back to
// pending (the TOCTOU the reference's refused_lease_live closes).
import { describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { createJob, getJob, type ApiResponse, type JobRecord } from "./support/fleet-api";
import { release, renew } from "./support/protocol";
import { sleep, together } from "./support/race";

const ROUNDS = 10;
const JOBS_PER_ROUND = 30;
/** Lease left when the row is written; the race fires around its end. */
const LEASE_MS = 250;
/** Requests fire from LEASE_MS - SPREAD_MS to LEASE_MS + SPREAD_MS after the row was written. */
const SPREAD_MS = 80;

type Outcome = "renew_won" | "requeue_won" | "neither";

interface Race {
  before: JobRecord;
  renewed: ApiResponse;
  requeued: ApiResponse;
  after: JobRecord;
}

async function raceOnce(round: number, index: number): Promise<Race> {
  const holder = `holder-${round}-${index}`;
  const leaseEnd = Date.now() + LEASE_MS;
  const before = await createJob({
    status: index % 2 === 0 ? "claimed" : "running",
    claimed_by: holder,
    lease_expires_at: formatPbDate(leaseEnd),
    version: 2,
  });
  // Spread the firing times evenly across the lease's end.
  const offset = -SPREAD_MS + (2 * SPREAD_MS * index) / (JOBS_PER_ROUND - 1);
  await sleep(leaseEnd + offset - Date.now());
  const renewFirst = (index + round) % 2 === 0;
  const [a, b] = await Promise.all(
    renewFirst
      ? [renew(before.id, holder, { leaseSeconds: 30 }), release(before.id, holder, "pending")]
      : [release(before.id, holder, "pending"), renew(before.id, holder, { leaseSeconds: 30 })],
  );
  const [renewed, requeued] = renewFirst ? [a, b] : [b, a];
  return { before, renewed, requeued, after: await getJob(before.id) };
}

/** Checks one race against the invariant and says which side won. */
function judge({ before, renewed, requeued, after }: Race): Outcome {
  expect(renewed.status).toBe(200);
  expect(requeued.status).toBe(200);
  const renewWon = renewed.body.renewed === true;
  const requeueWon = requeued.body.released === true;
  expect(renewWon && requeueWon, "both the renew and the re-queue succeeded").toBe(false);
  if (renewWon) {
    // The holder keeps the job: running, its new (live) lease stored, the sweeper refused.
    expect(requeued.body).toEqual({ released: false, reason: "refused_lease_live" });
    expect(after).toMatchObject({
      status: "running", claimed_by: before.claimed_by, version: before.version + 1,
      lease_expires_at: renewed.body.job.lease_expires_at,
    });
    expect(parsePbDate(after.lease_expires_at)!).toBeGreaterThan(Date.now());
    return "renew_won";
  }
  expect(renewed.body).toEqual({ renewed: false });
  if (requeueWon) {
    expect(after).toMatchObject({
      status: "pending", claimed_by: "", version: before.version + 1,
      reclaim_count: before.reclaim_count + 1, lease_expires_at: before.lease_expires_at,
    });
    return "requeue_won";
  }
  // The re-queue came while the lease was live and the renew after it lapsed:
  // nobody wrote, and the row waits for the next sweep.
  expect(requeued.body).toEqual({ released: false, reason: "refused_lease_live" });
  expect(after).toEqual(before);
  return "neither";
}

describe("sweeper re-queue racing the holder's renew", () => {
  it(`never leaves a successfully renewed job pending (${ROUNDS} rounds x ${JOBS_PER_ROUND} jobs around the lease's end)`, async () => {
    const outcomes: Record<Outcome, number> = { renew_won: 0, requeue_won: 0, neither: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const races = await together(JOBS_PER_ROUND, (i) => raceOnce(round, i));
      for (const race of races) outcomes[judge(race)] += 1;
    }
    console.log(`requeue-vs-renew outcomes: ${JSON.stringify(outcomes)}`);
    // The timing spread must have produced both winners, or the race was not exercised.
    expect(outcomes.renew_won, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.requeue_won, JSON.stringify(outcomes)).toBeGreaterThan(0);
  });

  it("a re-queue based on a stale list is refused once the holder has renewed", async () => {
    for (let i = 0; i < 20; i++) {
      // 2 s: about to expire, yet longer than a create and a renew take on a loaded CI machine (300 ms was not).
      const before = await createJob({ status: "claimed", claimed_by: "h", lease_expires_at: formatPbDate(Date.now() + 2_000), version: 1 });
      // The sweeper listed the row as (about to be) expired; the holder renews first.
      expect((await renew(before.id, "h", { leaseSeconds: 30 })).body.renewed).toBe(true);
      expect(await release(before.id, "h", "pending")).toEqual({
        status: 200, body: { released: false, reason: "refused_lease_live" },
      });
      expect(await getJob(before.id)).toMatchObject({ status: "running", claimed_by: "h", version: 2 });
    }
  });
});
