// The one lease rule, on both sides: each text of the shared table is stored
// raw (as a hand edit would, past the record API's normalisation) in a held
// row, and SQLite's half (stats, claim-next's candidate query) must say what
// the handlers' JavaScript half (claim by id, claim-next's compare-and-set)
// says. A held row the two sides disagree on either wedges claim-next or is
// stolen from a live holder.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLeaseLive } from "../../src/lib/lease";
import { leaseTexts } from "../support/lease-texts";
import { createJob, get, post, randomKey, type RequestOptions } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { rawSql, rawSqlValue } from "./support/raw-sql";

let server: OwnServer;
let opts: RequestOptions;
beforeAll(async () => {
  server = await startOwnServer({ testHooks: ["raw-sql.pb.js"] });
  opts = { baseUrl: server.url, token: server.token };
});
afterAll(async () => {
  await server?.stop();
});

async function heldRowWithLease(prefix: string, lease: string) {
  const job = await createJob({ probe_key: prefix + "job", status: "running", claimed_by: "holder", version: 1 }, opts);
  await rawSql(opts, "UPDATE probe_jobs SET lease_expires_at = {:lease} WHERE id = {:id}", { lease, id: job.id });
  // Stored as given (the record API would show PocketBase's reading of it instead).
  expect(await rawSqlValue(opts, "SELECT lease_expires_at AS value FROM probe_jobs WHERE id = {:id}", { id: job.id })).toBe(lease);
  return job;
}

describe("the lease rule in SQL agrees with the lease rule in JavaScript", () => {
  it.each(leaseTexts(Date.now()).map((t) => [t.name, t.text, t.live] as const))(
    "%s (%j): live %s on every path",
    async (_name, text, live) => {
      expect(isLeaseLive(text, Date.now())).toBe(live); // the JavaScript half, here and now
      const prefix = randomKey("lease") + "/";
      const job = await heldRowWithLease(prefix, text);
      const scope = `probeKeyPrefix=${encodeURIComponent(prefix)}`;

      // SQLite: the stats' expired-lease count.
      expect((await get(`/api/fleet/stats?${scope}`, opts)).body.expiredLeases).toBe(live ? 0 : 1);

      // JavaScript: claim by id refuses a live lease and steals an expired one.
      const byId = await post("/api/fleet/claim", { jobId: job.id, workerId: "prober", leaseSeconds: 1 }, opts);
      expect(byId.body.claimed).toBe(!live);
      if (!live) return; // the row now has a fresh lease: the rest was said

      // Both: claim-next's query must not find it, and its compare-and-set would refuse it.
      const next = await post("/api/fleet/claim-next", { workerId: "prober", probeKeyPrefix: prefix }, opts);
      expect(next.body).toEqual({ jobs: [] });
      expect((await post("/api/fleet/sweep", { probeKeyPrefix: prefix }, opts)).body).toMatchObject({ requeued: 0 });
    },
  );

  it("never leaves claim-next answering nothing while an older held row with an odd lease waits (the reported wedge)", async () => {
    const prefix = randomKey("wedge") + "/";
    const odd = await heldRowWithLease(prefix, "2099-01-01T00:00:00Z");
    const answer = await post("/api/fleet/claim-next", { workerId: "w", probeKeyPrefix: prefix }, opts);
    expect(answer.body.jobs.map((j: { job: { id: string } }) => j.job.id)).toEqual([odd.id]);
  });
});
