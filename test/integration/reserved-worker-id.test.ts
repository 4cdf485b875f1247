// "pb-fleet-sweeper" is the holder the server leaves on a job it gave up. A
// worker using that id could take the give-up for its own committed release
// (refused_terminal_same_holder) and write a result over it: refused with 400.
import { describe, expect, it } from "vitest";
import { createJob, getJob, post } from "./support/fleet-api";

const RESERVED = "pb-fleet-sweeper";
const ERROR = `workerId "${RESERVED}" is reserved for pb-fleet's server sweeper: pick another id`;

describe("a reserved worker id", () => {
  it.each([
    ["/api/fleet/claim", {}],
    ["/api/fleet/renew", {}],
    ["/api/fleet/release", { status: "done" }],
  ])("is refused by %s with a 400 that changes nothing", async (path, extra) => {
    const givenUp = await createJob({
      status: "failed", claimed_by: RESERVED, result: { reason: "orphan_cap" }, consecutive_orphan_count: 5,
    });
    const before = await getJob(givenUp.id);
    expect(await post(path, { jobId: givenUp.id, workerId: RESERVED, ...extra })).toEqual({ status: 400, body: { error: ERROR } });
    expect(await getJob(givenUp.id)).toEqual(before);
  });

  it("is refused by claim-next with a 400", async () => {
    expect(await post("/api/fleet/claim-next", { workerId: RESERVED })).toEqual({ status: 400, body: { error: ERROR } });
  });
});
