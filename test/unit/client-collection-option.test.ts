// The jobs collection is not the client's to choose: the server reads and
// writes only probe_jobs, so a client listing another collection would show
// jobs no claim ever takes. The option is gone from the types; a JS caller
// still passing another name gets a TypeError saying so.
import { describe, expect, it } from "vitest";
import { DEFAULT_COLLECTION, FleetClient } from "../../src/client/fleet-client";
import { JOBS_COLLECTION as SERVER_JOBS_COLLECTION } from "../../src/adapter/contract";
import { JOBS_COLLECTION } from "../../src/lib/record-filters";
import * as pkg from "../../src/client/index";

const creds = { url: "http://fleet.test", email: "a@x.io", password: "secret123" };

describe("FleetClient's jobs collection", () => {
  it("is the server's collection, probe_jobs", () => {
    expect(JOBS_COLLECTION).toBe(SERVER_JOBS_COLLECTION);
    expect(JOBS_COLLECTION).toBe("probe_jobs");
    expect(DEFAULT_COLLECTION).toBe(JOBS_COLLECTION);
    expect(pkg.JOBS_COLLECTION).toBe(JOBS_COLLECTION);
    expect(new FleetClient(creds).collection).toBe(JOBS_COLLECTION);
  });

  it.each(["other_jobs", "", 7])("throws a TypeError when a JS caller passes collection %j", (collection) => {
    const make = () => new FleetClient({ ...creds, collection } as unknown as ConstructorParameters<typeof FleetClient>[0]);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(/the server always uses probe_jobs.*remove the option/);
  });

  it("still accepts collection: \"probe_jobs\" (what the option could only usefully have been)", () => {
    const c = new FleetClient({ ...creds, collection: "probe_jobs" } as unknown as ConstructorParameters<typeof FleetClient>[0]);
    expect(c.collection).toBe("probe_jobs");
  });

  it("has no `collection` in its options type", () => {
    // @ts-expect-error: the option is gone from FleetClientOptions.
    const opts: ConstructorParameters<typeof FleetClient>[0] = { ...creds, collection: "probe_jobs" };
    expect(opts).toBeDefined();
  });
});
