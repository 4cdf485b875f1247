// Stealers racing for one expired lease: exactly one takes it, and the row
// records exactly one reclaim.
import { describe, expect, it } from "vitest";
import { createJob, getJob, pastDate } from "./support/fleet-api";
import { claim, viewOf, withoutLeaseToken } from "./support/protocol";
import { together } from "./support/race";

const ROUNDS = 20;
const STEALERS = 50;

describe("concurrent steals of an expired lease", () => {
  it.each(["claimed", "running"])(`${STEALERS} stealers of an expired %s lease: one winner, reclaim_count exactly 1`, async (status) => {
    for (let round = 0; round < ROUNDS; round++) {
      const job = await createJob({ status, claimed_by: "dead", lease_expires_at: pastDate(5_000), version: 5 });
      const answers = await together(STEALERS, (i) => claim(job.id, `s${i}`, { leaseSeconds: 60 }));

      expect(answers.every((a) => a.status === 200)).toBe(true);
      const winners = answers.flatMap((a, i) => (a.body.claimed === true ? [i] : []));
      expect(winners, `round ${round}: winners`).toHaveLength(1);
      const row = await getJob(job.id);
      expect(row).toMatchObject({
        status: "claimed", claimed_by: `s${winners[0]}`, version: 6, reclaim_count: 1, consecutive_orphan_count: 0,
      });
      expect(withoutLeaseToken(answers[winners[0]!]!.body)).toEqual({ claimed: true, job: viewOf(row) });
    }
  });
});
