// enqueue("k") and enqueue("k", { payload }) give a job the same retry
// defaults: max_attempts DEFAULT_MAX_ATTEMPTS (25), the queue's own default
// for a job enqueued without `maxAttempts`. The bare form goes through the
// record API, whose field default, 0, means "no cap", which a Worker treats
// as "never retry": so the bare form asks for the queue's default itself.
import { describe, expect, it } from "vitest";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";
import { DEFAULT_MAX_ATTEMPTS } from "../../src/lib/queue";
import { validateEnqueueRequest } from "../../src/lib/validate";

/** A server with the queue: its enqueue decides defaults with the server's own validation; the record API stores what it is given. */
function queueServer() {
  const stored: Array<{ probeKey: string; maxAttempts: number }> = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    if (path === AUTH_PATHS.superusers) return Response.json({ token: "t" });
    if (path === "/api/fleet/enqueue") {
      const valid = validateEnqueueRequest(body, Date.now());
      if (!valid.ok) return Response.json({ error: valid.error }, { status: 400 });
      for (const job of valid.value) stored.push({ probeKey: job.probeKey, maxAttempts: job.maxAttempts });
      return Response.json({ jobs: valid.value.map((job, i) => ({ id: `q${i}`, probeKey: job.probeKey, created: true })) });
    }
    if (path === "/api/collections/probe_jobs/records") {
      // The field's default when a create leaves it out is 0 (no cap).
      stored.push({ probeKey: body.probe_key, maxAttempts: body.max_attempts ?? 0 });
      return Response.json({ id: "r1", created: "", updated: "", max_attempts: 0, ...body });
    }
    return Response.json({ code: 404, message: "Not found.", data: {} }, { status: 404 });
  }) as typeof fetch;
  return { stored, client: new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl }) };
}

describe("enqueue's retry defaults", () => {
  it(`bare enqueue("k"), enqueue("k", { payload }) and enqueueMany(["k"]) all get max_attempts ${DEFAULT_MAX_ATTEMPTS}`, async () => {
    expect(DEFAULT_MAX_ATTEMPTS).toBe(25);
    const { stored, client } = queueServer();
    const row = await client.enqueue("probe/bare");
    await client.enqueue("probe/payload", { payload: { url: "https://a.example" } });
    await client.enqueueMany(["probe/many"]);
    expect(row.max_attempts).toBe(DEFAULT_MAX_ATTEMPTS);
    expect(stored).toEqual([
      { probeKey: "probe/bare", maxAttempts: DEFAULT_MAX_ATTEMPTS },
      { probeKey: "probe/payload", maxAttempts: DEFAULT_MAX_ATTEMPTS },
      { probeKey: "probe/many", maxAttempts: DEFAULT_MAX_ATTEMPTS },
    ]);
  });

  it("an explicit maxAttempts still wins (0: no cap)", async () => {
    const { stored, client } = queueServer();
    await client.enqueue("probe/capless", { maxAttempts: 0 });
    expect(stored).toEqual([{ probeKey: "probe/capless", maxAttempts: 0 }]);
  });
});
