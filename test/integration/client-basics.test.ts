// FleetClient against the real PocketBase of the suite: enqueue, claim (and the
// alreadyHeld answer to a retry), renew, release, writeResult, listing, claimNext,
// and the typed errors for 400, 401, a timeout and a refused connection.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  FleetAuthError, FleetClient, FleetHttpError, FleetNetworkError, FleetTimeoutError,
} from "../../src/client/index";
import { createJob, futureDate, getJob, pastDate, randomKey } from "./support/fleet-api";

const url = inject("pbUrl");
const admin = { email: inject("adminEmail"), password: inject("adminPassword") };
const client = new FleetClient({ url, ...admin });

describe("FleetClient on a real server", () => {
  it("enqueue creates a pending job with version 0 and zero counters; enqueueMany keeps the order", async () => {
    const key = randomKey("cb");
    const row = await client.enqueue(key);
    expect(row).toMatchObject({
      probe_key: key, status: "pending", claimed_by: "", version: 0, reclaim_count: 0, consecutive_orphan_count: 0,
    });
    expect(await getJob(row.id)).toMatchObject({ status: "pending", version: 0 });
    const keys = [1, 2, 3, 4, 5].map((i) => `${key}/${i}`);
    const rows = await client.enqueueMany(keys, { concurrency: 3 });
    expect(rows.map((r) => r.probe_key)).toEqual(keys);
    expect(rows.every((r) => r.status === "pending")).toBe(true);
  });

  it("claim, alreadyHeld on the holder's retry, renew, release, refused_terminal_same_holder, writeResult", async () => {
    const { id } = await client.enqueue(randomKey("cb"));
    const claim = await client.claim(id, "w-1", 30);
    expect(claim).toMatchObject({ claimed: true, alreadyHeld: false, job: { id, status: "claimed", claimed_by: "w-1", version: 1 } });
    if (!claim.claimed) throw new Error("unreachable");
    expect(claim.leaseToken).toMatch(/.{8,}/);

    // The same worker asking again (its first answer lost) is told it holds the job, with the same token.
    expect(await client.claim(id, "w-1", 30)).toEqual({ ...claim, alreadyHeld: true });
    expect(await client.claim(id, "w-2", 30)).toEqual({ claimed: false });

    const renewed = await client.renew(id, "w-1", 60, claim.leaseToken);
    expect(renewed).toMatchObject({ renewed: true, job: { status: "running", version: 2 } });
    expect(await client.renew(id, "w-2", 60)).toEqual({ renewed: false });
    expect(await client.renew(id, "w-1", 60, "not-the-token")).toEqual({ renewed: false });

    expect(await client.release(id, "w-1", "done", claim.leaseToken)).toMatchObject({ released: true, job: { status: "done", version: 3 } });
    expect(await client.release(id, "w-1", "done", claim.leaseToken)).toEqual({ released: false, reason: "refused_terminal_same_holder" });
    expect(await client.release(id, "w-2", "done")).toEqual({ released: false, reason: "refused_not_holder" });

    await client.writeResult(id, { latencyMs: 12, workerId: "w-1" });
    const row = await client.getJob(id);
    expect(row).toMatchObject({ status: "done", claimed_by: "w-1", version: 3, result: { latencyMs: 12, workerId: "w-1" } });
    expect(row.finished_at).not.toBe("");
  });

  it("a release with a stale token is refused_stale_token", async () => {
    const { id } = await client.enqueue(randomKey("cb"));
    const claim = await client.claim(id, "w-1");
    expect(claim.claimed).toBe(true);
    expect(await client.release(id, "w-1", "done", "some-older-token")).toEqual({ released: false, reason: "refused_stale_token" });
  });

  it("claimNext claims the oldest claimable jobs of a prefix through /api/fleet/claim-next", async () => {
    const prefix = randomKey("cbn") + "/";
    const rows = await client.enqueueMany([0, 1, 2].map((i) => `${prefix}${i}`), { concurrency: 1 });
    const held = await client.claimNext({ workerId: "w-n", limit: 2, leaseSeconds: 20, probeKeyPrefix: prefix });
    expect(client.hasClaimNext).toBe(true);
    expect(held.map((h) => h.job.id)).toEqual([rows[0]!.id, rows[1]!.id]);
    expect(held.every((h) => h.job.claimed_by === "w-n" && typeof h.leaseToken === "string" && !h.alreadyHeld)).toBe(true);
    expect((await client.claimNext({ workerId: "w-n", limit: 5, probeKeyPrefix: prefix })).map((h) => h.job.id)).toEqual([rows[2]!.id]);
    expect(await client.claimNext({ workerId: "w-n", probeKeyPrefix: prefix })).toEqual([]);
  });

  it("listClaimable: pending and expired held rows, oldest first; listExpiredLeases: only the expired held ones", async () => {
    const prefix = randomKey("cbl") + "/";
    const pending = await createJob({ probe_key: prefix + "a" });
    const expired = await createJob({ probe_key: prefix + "b", status: "running", claimed_by: "gone", lease_expires_at: pastDate() });
    await createJob({ probe_key: prefix + "c", status: "claimed", claimed_by: "alive", lease_expires_at: futureDate() });
    await createJob({ probe_key: prefix + "d", status: "done", claimed_by: "x", lease_expires_at: pastDate() });
    const noLease = await createJob({ probe_key: prefix + "e", status: "claimed", claimed_by: "odd", lease_expires_at: "" });
    expect((await client.listClaimable({ probeKeyPrefix: prefix })).map((r) => r.id)).toEqual([pending.id, expired.id, noLease.id]);
    expect((await client.listExpiredLeases({ probeKeyPrefix: prefix })).map((r) => r.id).sort()).toEqual([expired.id, noLease.id].sort());
    // A prefix is a prefix, not a pattern: "_" and "%" match only themselves.
    expect(await client.listClaimable({ probeKeyPrefix: prefix.slice(0, -1) + "_" })).toEqual([]);
    expect(await client.stats({ probeKeyPrefix: prefix })).toMatchObject({
      counts: { pending: 1, claimed: 2, running: 1, done: 1, failed: 0 }, total: 5, expiredLeases: 2,
    });
  });

  it("HTTP 400 from the protocol is a FleetHttpError with the server's message", async () => {
    const err = await client.release("any", "w", "finished" as "done").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 400, op: "release", body: { error: "status must be done|failed|pending" } });
    await expect(client.claim("", "w")).rejects.toMatchObject({ status: 400, body: { error: "jobId and workerId are required" } });
  });

  it("a bad token is cured by signing in again (401 or the record API's 403); a token-only client throws FleetAuthError", async () => {
    const healing = new FleetClient({ url, ...admin });
    await healing.authenticate();
    healing.setToken("not-a-valid-token");
    const { id } = await healing.enqueue(randomKey("cb401"));
    expect(healing.token).not.toBe("not-a-valid-token");
    expect((await healing.claim(id, "w")).claimed).toBe(true);

    const tokenOnly = new FleetClient({ url, token: "not-a-valid-token" });
    const err = await tokenOnly.claim(id, "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err.status).toBe(401);
    // The record API sees a bad token as a guest: 403, handled the same way.
    await expect(tokenOnly.getJob(id)).rejects.toMatchObject({ name: "FleetAuthError", status: 403 });

    const wrongPassword = new FleetClient({ url, email: admin.email, password: "wrong-password" });
    await expect(wrongPassword.claim(id, "w")).rejects.toMatchObject({ name: "FleetAuthError", op: "authenticate", status: 400 });
  });

  it("a request to an unreachable address is a FleetNetworkError", async () => {
    const closed = await listenThenClose();
    const err = await new FleetClient({ url: `http://127.0.0.1:${closed}`, token: "t" }).claim("j", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetNetworkError);
    expect(err.message).toContain("ECONNREFUSED");
  });

  describe("a server that never answers", () => {
    let silent: Server;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.push(socket);
      });
      await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    });

    it("gives FleetTimeoutError after the configured timeout", async () => {
      const port = (silent.address() as { port: number }).port;
      const c = new FleetClient({ url: `http://127.0.0.1:${port}`, token: "t", timeoutMs: 300 });
      const err = await c.getJob("j").catch((e) => e);
      expect(err).toBeInstanceOf(FleetTimeoutError);
      expect(err).toMatchObject({ timeoutMs: 300, op: "getJob" });
    });
  });
});

/** A port on 127.0.0.1 with nothing listening on it (bound, then released). */
function listenThenClose(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
