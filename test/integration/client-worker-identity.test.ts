// FleetClient and Worker signed in as a worker identity (a record of
// fleet_workers, made here through the record API as the suite's admin)
// against the real server: a Worker holding only that credential drains the
// jobs an admin enqueued under `${id}/...`; identity() tells the record;
// enqueue needs can_enqueue (a FleetForbiddenError otherwise); a wrong
// password, a disabled or deleted identity are FleetAuthErrors; the admin's
// routes are refused; the workerId must be the identity's; an identity with
// queues claims only jobs of those, and claim-next's `queue` narrows further.
import { describe, expect, inject, it } from "vitest";
import {
  FleetAuthError, FleetClient, FleetForbiddenError, Worker, type FleetClientOptions, type WorkerJob,
} from "../../src/client/index";
import { countJobsByPrefix, getJob, randomKey } from "./support/fleet-api";
import { eventually } from "./support/eventually";
import { pbLine } from "./support/pocketbase-line";
import {
  createWorkerIdentity, deleteWorkerIdentity, updateWorkerIdentity, type WorkerIdentityFields,
} from "./support/worker-identities";

const url = inject("pbUrl");
const admin = new FleetClient({ url, email: inject("adminEmail"), password: inject("adminPassword") });

/** A fresh identity, and a client signed in as it with its name and password (or `extra`). */
async function workerClient(fields: WorkerIdentityFields = {}, extra: Partial<FleetClientOptions> = {}) {
  const identity = await createWorkerIdentity(fields);
  const client = new FleetClient({ url, worker: { identity: identity.name, password: identity.password }, ...extra });
  return { identity, client };
}

/** Runs `worker` until every job of `ids` is done, then stops it. */
async function drain(worker: Worker<any, any>, ids: readonly string[]): Promise<void> {
  worker.start();
  try {
    await eventually(async () => {
      const rows = await Promise.all(ids.map((id) => getJob(id)));
      expect(rows.map((r) => r.status)).toEqual(ids.map(() => "done"));
    });
  } finally {
    await worker.stop();
  }
}

describe("a Worker holding only a worker identity's credential", () => {
  it("drains the jobs an admin enqueued, claiming as `${record id}/${workerId}`", async () => {
    const prefix = randomKey("cwi") + "/";
    const jobs = await admin.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ probeKey: `${prefix}${i}`, payload: { i } })));
    const { identity, client } = await workerClient();
    const seen: string[] = [];
    const worker = new Worker(client, {
      workerId: "drain", concurrency: 2, leaseSeconds: 10, pollInterval: 50, maxPollInterval: 200, probeKeyPrefix: prefix,
      handler: async (job: WorkerJob<{ i: number }>) => {
        seen.push(job.workerId);
        return { doubled: job.payload.i * 2 };
      },
    });
    await drain(worker, jobs.map((j) => j.id));
    expect(worker.workerId).toBe(`${identity.id}/drain`);
    expect(new Set(seen)).toEqual(new Set([`${identity.id}/drain`]));
    for (const [i, job] of jobs.entries()) {
      const row = await getJob(job.id);
      expect(row.claimed_by.startsWith(`${identity.id}/`)).toBe(true);
      expect(row).toMatchObject({ status: "done", claimed_by: `${identity.id}/drain`, result: { doubled: i * 2 } });
    }
  });

  it("with only a worker token (no password) it drains too, and identity() reads the record through auth-refresh", async () => {
    const prefix = randomKey("cwt") + "/";
    const [job] = await admin.enqueueMany([{ probeKey: `${prefix}only` }]);
    const identity = await createWorkerIdentity({ queues: [] });
    const client = new FleetClient({ url, worker: { token: identity.token } });
    expect(await client.identity()).toEqual({ id: identity.id, name: identity.name, queues: [], canEnqueue: false });
    const worker = new Worker(client, { pollInterval: 50, probeKeyPrefix: prefix, handler: async () => "ok" });
    await drain(worker, [job!.id]);
    expect((await getJob(job!.id)).claimed_by.startsWith(`${identity.id}/`)).toBe(true);
  });
});

describe("FleetClient as a worker identity", () => {
  it("identity() answers the record's id, name, queues and can_enqueue", async () => {
    const queue = randomKey("q");
    const { identity, client } = await workerClient({ queues: [queue], canEnqueue: true });
    expect(await client.identity()).toEqual({ id: identity.id, name: identity.name, queues: [queue], canEnqueue: true });
    expect(client.token).not.toBe("");
  });

  it("without can_enqueue, enqueue is a FleetForbiddenError (403 with the server's message) and nothing is written", async () => {
    const prefix = randomKey("cwe") + "/";
    const { client } = await workerClient({ canEnqueue: false });
    const err = await client.enqueue(`${prefix}x`, { payload: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetForbiddenError);
    expect(err).toMatchObject({ status: 403, op: "enqueue" });
    expect((err as FleetForbiddenError).body).toMatchObject({ error: expect.stringContaining("can_enqueue") });
    expect(await countJobsByPrefix(prefix)).toBe(0);
  });

  it("with can_enqueue, enqueue works, into a queue of its choosing", async () => {
    const prefix = randomKey("cwq") + "/";
    const queue = randomKey("q");
    const { client } = await workerClient({ canEnqueue: true });
    const job = await client.enqueue(`${prefix}x`, { queue, payload: { a: 1 } });
    expect(job).toMatchObject({ probeKey: `${prefix}x`, created: true });
    expect(await getJob(job.id)).toMatchObject({ status: "pending", queue, payload: { a: 1 } });
  });

  it("a wrong password is a FleetAuthError of the sign-in, with a sentence", async () => {
    const { identity } = await workerClient();
    const client = new FleetClient({ url, worker: { identity: identity.name, password: "not-the-password" } });
    const err = await client.claimNext({ workerId: identity.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ op: "authenticate", status: 400 });
    expect((err as Error).message).toContain(`the worker identity "${identity.name}"'s name or password was refused`);
    await expect(client.identity()).rejects.toBeInstanceOf(FleetAuthError);
  });

  it("a disabled identity's next call is a FleetAuthError (0.23+ refuses its sign-in too)", async () => {
    const { identity, client } = await workerClient();
    await client.identity(); // signed in while enabled
    await updateWorkerIdentity(identity.id, { disabled: true });
    const err = await client.claimNext({ workerId: identity.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).not.toBeInstanceOf(FleetForbiddenError);
    const fresh = new FleetClient({ url, worker: { identity: identity.name, password: identity.password } });
    const signIn = await fresh.identity().catch((e: unknown) => e);
    if (pbLine() === "0.22") {
      // 0.22 has no authRule: the sign-in works, and the hooks refuse the calls.
      expect(signIn).toMatchObject({ id: identity.id });
      await expect(fresh.claimNext({ workerId: identity.id })).rejects.toMatchObject({ name: "FleetAuthError", status: 401 });
    } else {
      // The collection's authRule (disabled = false) refuses the sign-in: 403.
      expect(signIn).toBeInstanceOf(FleetAuthError);
      expect(signIn).toMatchObject({ op: "authenticate", status: 403 });
      expect((signIn as Error).message).toContain(`the worker identity "${identity.name}" may not sign in: is it disabled?`);
    }
  });

  it("a deleted identity: its token is refused (401), and signing in again is refused", async () => {
    const { identity, client } = await workerClient();
    const tokenOnly = new FleetClient({ url, worker: { token: identity.token } });
    await client.identity();
    await deleteWorkerIdentity(identity.id);
    await expect(tokenOnly.claimNext({ workerId: identity.id })).rejects.toMatchObject({ name: "FleetAuthError", status: 401 });
    await expect(client.claimNext({ workerId: identity.id })).rejects.toMatchObject({ name: "FleetAuthError", op: "authenticate", status: 400 });
  });

  it("the admin's routes are refused: sweep, stats, cancel and the record API", async () => {
    const { client } = await workerClient({ canEnqueue: true });
    const [job] = await admin.enqueueMany([{ probeKey: randomKey("cwa") }]);
    for (const call of [() => client.sweep(), () => client.stats(), () => client.cancel(job!.id), () => client.retry(job!.id)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FleetForbiddenError);
      expect((err as FleetForbiddenError).body).toMatchObject({ error: expect.any(String) });
    }
    // The record API: 403 on some versions, 401 on others; an auth refusal either way.
    await expect(client.getJob(job!.id)).rejects.toBeInstanceOf(FleetAuthError);
    expect((await getJob(job!.id)).status).toBe("pending");
  });
});

describe("the server's rules for a worker identity's calls", () => {
  it("workerId must be the identity's id or begin with `${id}/`: another is a 403, and nothing is written", async () => {
    const prefix = randomKey("cwr") + "/";
    const [job] = await admin.enqueueMany([{ probeKey: `${prefix}x` }]);
    const { identity, client } = await workerClient();
    const before = await getJob(job!.id);
    for (const workerId of ["someone-else", `${identity.id}x`, `x/${identity.id}`]) {
      await expect(client.claim(job!.id, workerId), workerId).rejects.toBeInstanceOf(FleetForbiddenError);
      await expect(client.claimNext({ workerId, probeKeyPrefix: prefix }), workerId).rejects.toBeInstanceOf(FleetForbiddenError);
    }
    expect(await getJob(job!.id)).toEqual(before);
    // Its own id, bare or with a suffix, is taken.
    expect(await client.claim(job!.id, identity.id)).toMatchObject({ claimed: true });
    expect(await client.renew(job!.id, `${identity.id}`, 10)).toMatchObject({ renewed: true });
    await expect(client.release(job!.id, `${identity.id}/other`, "done")).resolves.toMatchObject({ released: false });
    expect(await client.release(job!.id, identity.id, "done")).toMatchObject({ released: true });
  });

  it("an identity with queues claims only jobs of those; claim by id of another queue's job is queue_not_allowed", async () => {
    const prefix = randomKey("cwq") + "/";
    const mine = randomKey("crawl");
    const other = randomKey("other");
    const jobs = await admin.enqueueMany([
      { probeKey: `${prefix}m1`, queue: mine }, { probeKey: `${prefix}o1`, queue: other },
      { probeKey: `${prefix}m2`, queue: mine }, { probeKey: `${prefix}d1` },
    ]);
    const [m1, o1, m2, d1] = jobs.map((j) => j.id) as [string, string, string, string];
    const { identity, client } = await workerClient({ queues: [mine] });
    expect(await client.claim(o1, identity.id)).toEqual({ claimed: false, reason: "queue_not_allowed" });
    expect(await client.claim(d1, identity.id)).toEqual({ claimed: false, reason: "queue_not_allowed" });
    const queues: string[] = [];
    const worker = new Worker(client, {
      workerId: "q", pollInterval: 50, maxPollInterval: 200, probeKeyPrefix: prefix,
      handler: async (job) => {
        queues.push(job.queue ?? "(none)");
        return null;
      },
    });
    await drain(worker, [m1, m2]);
    expect(queues).toEqual([mine, mine]);
    expect((await getJob(o1)).status).toBe("pending");
    expect((await getJob(d1)).status).toBe("pending");
    // Asking for a queue outside its list is a 403.
    await expect(client.claimNext({ workerId: identity.id, queue: other, probeKeyPrefix: prefix })).rejects.toBeInstanceOf(FleetForbiddenError);
    await expect(client.claimNext({ workerId: identity.id, queue: [mine, other], probeKeyPrefix: prefix }))
      .rejects.toBeInstanceOf(FleetForbiddenError);
  });

  it("claim-next's `queue` (the Worker's `queue` option) narrows an unrestricted identity to those queues", async () => {
    const prefix = randomKey("cwn") + "/";
    const wanted = randomKey("fetch");
    const jobs = await admin.enqueueMany([
      { probeKey: `${prefix}w1`, queue: wanted }, { probeKey: `${prefix}x1`, queue: randomKey("x") }, { probeKey: `${prefix}d1` },
    ]);
    const [w1, x1, d1] = jobs.map((j) => j.id) as [string, string, string];
    const { client } = await workerClient();
    const worker = new Worker(client, { queue: [wanted], pollInterval: 50, probeKeyPrefix: prefix, handler: async () => null });
    await drain(worker, [w1]);
    expect((await getJob(x1)).status).toBe("pending");
    expect((await getJob(d1)).status).toBe("pending");
    // The default queue by its name.
    const [held] = await client.claimNext({ workerId: (await client.identity())!.id, queue: "default", probeKeyPrefix: prefix });
    expect(held?.job).toMatchObject({ id: d1, queue: "default" });
  });
});
