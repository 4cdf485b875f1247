// Exactly one of N concurrent claimers wins a fresh job, round after round, and
// the stored row names that winner (version 1: a single write happened).
import { describe, expect, it } from "vitest";
import { createJob, getJob, randomKey } from "./support/fleet-api";
import { claim, viewOf, withoutLeaseToken } from "./support/protocol";
import { count, together } from "./support/race";

const ROUNDS = 20;

describe("concurrent claims on one pending job", () => {
  it.each([20, 50, 200])(`%i claimers: exactly one wins in each of ${ROUNDS} rounds`, async (claimers) => {
    for (let round = 0; round < ROUNDS; round++) {
      const job = await createJob({ probe_key: randomKey(`race${claimers}`) });
      const workers = Array.from({ length: claimers }, (_, i) => `r${round}-w${i}`);
      const answers = await together(claimers, (i) => claim(job.id, workers[i]!, { leaseSeconds: 60 }));

      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const winners = answers.flatMap((a, i) => (a.body.claimed === true ? [i] : []));
      expect(winners, `round ${round}: winners`).toHaveLength(1);
      expect(count(answers, (a) => JSON.stringify(a.body) === '{"claimed":false}')).toBe(claimers - 1);

      const row = await getJob(job.id);
      const winner = winners[0]!;
      expect(row).toMatchObject({ status: "claimed", claimed_by: workers[winner], version: 1, reclaim_count: 0 });
      expect(withoutLeaseToken(answers[winner]!.body)).toEqual({ claimed: true, job: viewOf(row) });
    }
  });
});
