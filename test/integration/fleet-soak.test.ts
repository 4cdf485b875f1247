// Fleet soak: two processes of 4 Workers (+1 Sweeper each) on the pb-fleet client
// work through thousands of jobs with short leases while ~10% of claims are
// abandoned (a worker walks away holding its job) and crashes happen:
//   1. one worker process is SIGKILLed mid-run and started again;
//   2. PocketBase itself is SIGKILLed mid-run and restarted on the same pb_data.
// At the end every job is terminal, each has exactly one successful terminal
// release, and no result was written by a worker that had lost its lease.
// The machinery, the queue path the jobs take and the end-state checks are
// support-soak/soak.ts's (shared with batched-crash-soak.test.ts).
//
// It runs its own PocketBase (the suite's shared one must not be killed), with
// the server-side cron sweeper off so the client Sweepers do that work.
// SOAK_JOBS / SOAK_JOBS_PB_KILL change the job counts (defaults 2000 / 1000),
// SOAK_MAX_ATTEMPTS the jobs' max_attempts (default 3: low enough that a few jobs
// are dead-lettered in a run, so that path is exercised too).
import { describe, expect, it } from "vitest";
import { useSoak, type Figures } from "./support-soak/soak";

const soak = useSoak({
  name: "fleet-soak",
  completionTimeoutMs: 150_000,
  // Two jobs at once per Worker; an abandon leaves one Worker's claims orphaned.
  concurrency: 2,
  abandonRate: 0.1,
});

/** The crash simulation really happened: claims were abandoned (each came back, or was given up: soak.ts). */
function expectAbandons(figures: Figures, jobs: number): void {
  expect(figures.abandonedByHandler).toBeGreaterThan(jobs * 0.05);
}

describe("fleet soak", () => {
  it("2 processes x 4 workers + 2 sweepers, ~10% abandoned claims, one process SIGKILLed and restarted", async () => {
    const jobs = Number(process.env.SOAK_JOBS || 2_000);
    const { figures } = await soak.workerProcessCrash(jobs, `soak-kill-worker-${Date.now()}/`);
    expectAbandons(figures, jobs);
  });

  it("PocketBase SIGKILLed mid-soak and restarted on the same pb_data: the fleet recovers to the same end state", async () => {
    const jobs = Number(process.env.SOAK_JOBS_PB_KILL || 1_000);
    const { figures } = await soak.pocketBaseCrash(jobs, `soak-kill-pb-${Date.now()}/`);
    expectAbandons(figures, jobs);
  });
});
