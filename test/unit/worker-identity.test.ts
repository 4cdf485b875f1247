// A Worker whose client is a worker identity claims under the identity's
// record id: its workerId becomes `${id}/${workerId}` when it starts (kept
// when it already is the id or begins with `${id}/`), workerId may be left
// out (hostname-pid), and every claim, renew, release and event carries the
// effective id. Its `queue` option goes to claim-next.
import { hostname } from "node:os";
import { describe, expect, it, vi } from "vitest";
import { FleetAuthError } from "../../src/client/errors";
import type { ClaimNextOptions, HeldJob, RequestOptions, WorkerIdentity } from "../../src/client/fleet-client";
import { identityWorkerId, Worker } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";

useFakeClock();

const ID = "wrk1234567890ab";
const IDENTITY: WorkerIdentity = { id: ID, name: "scraper-1", queues: [], canEnqueue: false };

/** FakeFleet as a worker identity's client: identity() answers `answers` in turn (an Error is thrown), then the last. */
class IdentityFleet extends FakeFleet {
  readonly isWorkerIdentity = true;
  readonly claimOptions: ClaimNextOptions[] = [];
  identityCalls = 0;
  constructor(readonly answers: Array<WorkerIdentity | Error> = [IDENTITY]) {
    super();
  }
  async identity(_req?: RequestOptions): Promise<WorkerIdentity | null> {
    const answer = this.answers[Math.min(this.identityCalls++, this.answers.length - 1)]!;
    if (answer instanceof Error) throw answer;
    return answer;
  }
  override claimNext(opts: ClaimNextOptions): Promise<HeldJob[]> {
    this.claimOptions.push(opts);
    return super.claimNext(opts);
  }
}

describe("identityWorkerId", () => {
  it("puts the configured id after `${id}/`, unless it already is the id or begins with `${id}/`", () => {
    expect(identityWorkerId(ID, "host-1")).toBe(`${ID}/host-1`);
    expect(identityWorkerId(ID, ID)).toBe(ID);
    expect(identityWorkerId(ID, `${ID}/a/b`)).toBe(`${ID}/a/b`);
    // A longer id that merely starts with this one is another identity's.
    expect(identityWorkerId(ID, `${ID}x/a`)).toBe(`${ID}/${ID}x/a`);
  });
});

describe("Worker with a worker identity's client", () => {
  it("claims, renews, releases and reports as `${id}/${workerId}` from its start on", async () => {
    const fake = new IdentityFleet();
    const { id: jobId } = fake.add();
    const events: string[] = [];
    const worker = new Worker(fake, {
      workerId: "host-1", leaseSeconds: 3, pollInterval: 50,
      handler: async (job, signal) => {
        events.push(`handler ${job.workerId}`);
        await wait(2_500, signal); // past one renew (every second)
        return "ok";
      },
    });
    worker.on("claimed", (e) => events.push(`claimed ${e.workerId}`));
    worker.on("renewed", (e) => events.push(`renewed ${e.workerId}`));
    worker.on("released", (e) => events.push(`released ${e.workerId}`));
    expect(worker.workerId).toBe("host-1"); // not known before the start
    worker.start();
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);
    const effective = `${ID}/host-1`;
    expect(worker.workerId).toBe(effective);
    expect(fake.identityCalls).toBe(1);
    expect(new Set(events.map((e) => e.split(" ")[1]))).toEqual(new Set([effective]));
    expect(events).toEqual(expect.arrayContaining([`claimed ${effective}`, `renewed ${effective}`, `released ${effective}`]));
    expect(fake.rows.get(jobId)).toMatchObject({ status: "done", claimed_by: effective });
    expect(new Set(fake.calls.map((c) => c.workerId).filter((w) => w !== undefined))).toEqual(new Set([effective]));
    expect(fake.renewsSent().length).toBeGreaterThan(0);
  });

  it.each([ID, `${ID}/kept`])("keeps a configured workerId that is already the identity's (%s)", async (configured) => {
    const fake = new IdentityFleet();
    const worker = new Worker(fake, { workerId: configured, pollInterval: 50, handler: async () => null }).start();
    await vi.advanceTimersByTimeAsync(10);
    await worker.stop();
    expect(worker.workerId).toBe(configured);
    expect(fake.claimOptions[0]?.workerId).toBe(configured);
  });

  it("may leave workerId out: `${id}/${hostname}-${pid}`", async () => {
    const fake = new IdentityFleet();
    const worker = new Worker(fake, { pollInterval: 50, handler: async () => null }).start();
    await vi.advanceTimersByTimeAsync(10);
    await worker.stop();
    expect(worker.workerId).toBe(`${ID}/${hostname()}-${process.pid}`);
    expect(fake.claimOptions[0]?.workerId).toBe(worker.workerId);
  });

  it("an admin client's Worker still needs a workerId", () => {
    expect(() => new Worker(new FakeFleet(), { handler: async () => null })).toThrow(/^Worker: `workerId` must be a non-empty string/);
  });

  it("an identity that cannot be read yet (sign-in refused, server away) is reported and asked again; nothing is claimed meanwhile", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.999999);
    const refused = new FleetAuthError("authenticate", "authenticate: HTTP 400: Failed to authenticate.", {}, { status: 400 });
    const fake = new IdentityFleet([refused, refused, IDENTITY]);
    const errors: string[] = [];
    const worker = new Worker(fake, { workerId: "h", pollInterval: 100, handler: async () => null });
    worker.on("error", (e) => errors.push(e.op));
    worker.start();
    await vi.advanceTimersByTimeAsync(50);
    expect(fake.callsOf("claimNext")).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(400);
    await worker.stop();
    expect(errors).toEqual(["identity", "identity"]);
    expect(fake.identityCalls).toBe(3);
    expect(fake.claimOptions.length).toBeGreaterThan(0);
    expect(fake.claimOptions.every((o) => o.workerId === `${ID}/h`)).toBe(true);
  });

  it("stop() while the identity is still unknown ends without a claim", async () => {
    const fake = new IdentityFleet([new Error("down")]);
    const worker = new Worker(fake, { workerId: "h", pollInterval: 100, handler: async () => null }).start();
    await vi.advanceTimersByTimeAsync(10);
    await settle(worker.stop(), vi);
    expect(fake.claimOptions).toHaveLength(0);
    expect(worker.workerId).toBe("h");
  });
});

describe("Worker `queue` option", () => {
  it("is sent as claim-next's queue, a name or a list", async () => {
    for (const queue of ["crawl", ["crawl", "fetch"]]) {
      const fake = new IdentityFleet();
      const worker = new Worker(fake, { workerId: "h", queue, pollInterval: 50, handler: async () => null }).start();
      await vi.advanceTimersByTimeAsync(10);
      await worker.stop();
      expect(fake.claimOptions[0]?.queue).toEqual(queue);
    }
  });

  it("is left out when not given", async () => {
    const fake = new FakeFleet();
    const spy = vi.spyOn(fake, "claimNext");
    const worker = new Worker(fake, { workerId: "h", handler: async () => null }).start();
    await worker.stop();
    expect(Object.keys(spy.mock.calls[0]![0])).not.toContain("queue");
  });

  it("a bad queue is refused when the Worker is built", () => {
    for (const queue of ["", "a b", [], ["ok", ""]]) {
      expect(() => new Worker(new FakeFleet(), { workerId: "h", queue: queue as never, handler: async () => null }))
        .toThrow(/^Worker: `queue(\[\d+\])?` must be/);
    }
  });
});
