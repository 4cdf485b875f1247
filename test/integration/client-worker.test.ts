// Worker and Sweeper against the real PocketBase of the suite, each scoped to its
// own probe_key prefix: results and failures are written after the release, a
// stolen lease aborts the handler and writes nothing, the sweeper re-queues and
// gives up (here on its list path, as on a server without /api/fleet/sweep; see
// client-sweeper-server-path.test.ts for the server's sweep), and
// stop({ mode: "release" }) hands a job back to pending.
import { describe, expect, inject, it } from "vitest";
import {
  FleetClient, FleetHttpError, PermanentJobError, Sweeper, Worker, type FleetApi, type WorkerJob,
} from "../../src/client/index";
import { createJob, futureDate, getJob, pastDate, patchJob, randomKey } from "./support/fleet-api";
import { eventually } from "./support/eventually";

const client = new FleetClient({ url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword") });

describe("Worker on a real server", () => {
  it("runs every job of its prefix: done with the handler's value in the release, failed with last_error on a PermanentJobError", async () => {
    const prefix = randomKey("cw") + "/";
    const rows = await client.enqueueMany(Array.from({ length: 12 }, (_, i) => `${prefix}${i}`));
    const worker = new Worker(client, {
      workerId: randomKey("worker"), concurrency: 3, leaseSeconds: 10, pollInterval: 50, maxPollInterval: 200,
      probeKeyPrefix: prefix,
      handler: async (job: WorkerJob) => {
        if (job.probe_key.endsWith("/7")) throw new PermanentJobError("probe 7 exploded");
        return { key: job.probe_key, by: job.workerId, claimVersion: job.version };
      },
    }).start();
    try {
      await eventually(async () => {
        const finished = await Promise.all(rows.map((r) => getJob(r.id)));
        expect(finished.every((r) => r.status === "done" || r.status === "failed")).toBe(true);
      });
    } finally {
      await worker.stop();
    }
    for (const row of await Promise.all(rows.map((r) => getJob(r.id)))) {
      if (row.probe_key.endsWith("/7")) {
        expect(row).toMatchObject({ status: "failed", claimed_by: worker.workerId, last_error: "probe 7 exploded", result: null });
      } else {
        expect(row).toMatchObject({ status: "done", claimed_by: worker.workerId, result: { key: row.probe_key, by: worker.workerId, claimVersion: 1 } });
      }
      expect(row.finished_at).not.toBe("");
    }
  });

  it("a stolen lease aborts the handler at the next renew, and the old holder writes nothing", async () => {
    const prefix = randomKey("cws") + "/";
    const { id } = await client.enqueue(prefix + "job");
    let aborted: Promise<unknown> | null = null;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const worker = new Worker(client, {
      workerId: randomKey("old"), leaseSeconds: 3, renewEvery: 0.5, pollInterval: 50, probeKeyPrefix: prefix,
      handler: (_job, signal) => {
        aborted = new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason)));
        started();
        return aborted.then(() => "the old holder's result");
      },
    });
    const lost: string[] = [];
    worker.on("lease_lost", (e) => lost.push(e.reason));
    worker.start();
    await running;
    // The holder looks dead to the server (its lease passed) and a new worker steals the job.
    await patchJob(id, { lease_expires_at: pastDate(1_000) });
    const steal = await client.claim(id, "new-holder", 30);
    expect(steal).toMatchObject({ claimed: true, alreadyHeld: false });
    const reason = await aborted!;
    expect(reason).toMatchObject({ name: "LeaseLostError", reason: "renew_refused" });
    await worker.stop();
    expect(lost).toEqual(["renew_refused"]);
    const row = await getJob(id);
    expect(row).toMatchObject({ status: "claimed", claimed_by: "new-holder", result: null, reclaim_count: 1 });
  });

  it('stop({ mode: "release" }) hands the running job back to pending', async () => {
    const prefix = randomKey("cwr") + "/";
    const { id } = await client.enqueue(prefix + "job");
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const worker = new Worker(client, {
      workerId: randomKey("leaving"), leaseSeconds: 30, pollInterval: 50, probeKeyPrefix: prefix,
      handler: (_job, signal) => {
        started();
        return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
    }).start();
    await running;
    await worker.stop({ mode: "release" });
    expect(await getJob(id)).toMatchObject({ status: "pending", claimed_by: "", result: null, consecutive_orphan_count: 1 });
  });
});

/** The client as a server without POST /api/fleet/sweep serves it: the Sweeper lists and releases itself. */
const withoutServerSweep: FleetApi = {
  claimNext: client.claimNext.bind(client),
  claim: client.claim.bind(client),
  renew: client.renew.bind(client),
  release: client.release.bind(client),
  writeResult: client.writeResult.bind(client),
  listExpiredLeases: client.listExpiredLeases.bind(client),
  sweep: () => Promise.reject(new FleetHttpError("sweep", 404, "Not Found.", {})),
};

describe("Sweeper on a real server, without its sweep endpoint", () => {
  it("re-queues expired leases of its prefix and gives up a job at maxReclaimAttempts", async () => {
    const prefix = randomKey("csw") + "/";
    const dead = await createJob({ probe_key: prefix + "dead", status: "running", claimed_by: "dead-worker", lease_expires_at: pastDate(), version: 3 });
    const capped = await createJob({
      probe_key: prefix + "capped", status: "claimed", claimed_by: "dead-again", lease_expires_at: pastDate(), consecutive_orphan_count: 2,
    });
    const alive = await createJob({ probe_key: prefix + "alive", status: "running", claimed_by: "w", lease_expires_at: futureDate() });
    const sweeper = new Sweeper(withoutServerSweep, { maxReclaimAttempts: 2, probeKeyPrefix: prefix, sweeperId: "sweeper-it" });
    const counts = await sweeper.sweepOnce();
    expect(sweeper.serverSweeps).toBe(false);
    expect(counts).toEqual({ listed: 2, requeued: 1, gaveUp: 1, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0 });
    expect(await getJob(dead.id)).toMatchObject({ status: "pending", claimed_by: "", version: 4, consecutive_orphan_count: 1, reclaim_count: 1 });
    const failed = await getJob(capped.id);
    expect(failed).toMatchObject({
      status: "failed", claimed_by: "sweeper-it", result: { error: "gave up after 2 orphaned leases", reason: "orphan_cap" },
    });
    expect(failed.finished_at).not.toBe("");
    expect((await getJob(alive.id)).status).toBe("running");
    expect(await sweeper.sweepOnce()).toMatchObject({ listed: 0 });
  });
});
