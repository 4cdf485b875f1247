// Releases from everyone but the holder are all refused and change nothing;
// the holder's own release still succeeds, exactly once even when it is sent
// many times at once.
import { describe, expect, it } from "vitest";
import { createJob, getJob } from "./support/fleet-api";
import { claim, release, viewOf } from "./support/protocol";
import { count, together } from "./support/race";

const ROUNDS = 10;
const TARGETS = ["done", "failed", "pending"] as const;

describe("release storms", () => {
  it(`100 releases from non-holders are all refused (${ROUNDS} rounds); then the holder's release succeeds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const job = await createJob();
      expect((await claim(job.id, "holder", { leaseSeconds: 60 })).body.claimed).toBe(true);
      const before = await getJob(job.id);

      const answers = await together(100, (i) => release(job.id, `intruder-${i % 7}`, TARGETS[i % 3]!));
      expect(answers).toEqual(answers.map(() => ({ status: 200, body: { released: false, reason: "refused_not_holder" } })));
      expect(await getJob(job.id)).toEqual(before);

      const own = await release(job.id, "holder", "done");
      const after = await getJob(job.id);
      expect(own).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
      expect(after).toMatchObject({ status: "done", claimed_by: "holder", version: before.version + 1 });
    }
  });

  it(`the holder's release sent 20 times at once amid 50 intruders commits once (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const job = await createJob();
      expect((await claim(job.id, "holder", { leaseSeconds: 60 })).body.claimed).toBe(true);
      const before = await getJob(job.id);

      const answers = await together(70, (i) => (i % 7 < 2 ? release(job.id, "holder", "done") : release(job.id, `intruder-${i}`, "done")));
      const holderAnswers = answers.filter((_, i) => i % 7 < 2);
      const intruderAnswers = answers.filter((_, i) => i % 7 >= 2);
      expect(count(holderAnswers, (a) => a.body.released === true), `round ${round}`).toBe(1);
      // Every holder copy that lost saw the winner's commit: "your own release committed".
      expect(holderAnswers.filter((a) => a.body.released !== true)).toEqual(
        Array.from({ length: holderAnswers.length - 1 }, () => ({
          status: 200, body: { released: false, reason: "refused_terminal_same_holder" },
        })),
      );
      expect(intruderAnswers.every((a) => a.body.reason === "refused_not_holder")).toBe(true);
      expect(await getJob(job.id)).toMatchObject({ status: "done", claimed_by: "holder", version: before.version + 1 });
    }
  });
});
