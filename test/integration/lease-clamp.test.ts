// leaseSeconds: a JSON number > 0 is clamped to [1, 3600]; anything else means
// 30. Checked on the stored lease of claim and renew (lease_expires_at - now).
import { describe, expect, it } from "vitest";
import { createJob, getJob } from "./support/fleet-api";
import { claim, expectStampedDuring, heldJob, renew, timed } from "./support/protocol";

const CASES: [string, unknown, number][] = [
  ["missing", undefined, 30],
  ['the string "60"', "60", 30],
  ["null", null, 30],
  ["0", 0, 30],
  ["-5", -5, 30],
  ["true", true, 30],
  ["[60]", [60], 30],
  ["0.001 (floored to 1 s)", 0.001, 1],
  ["0.5 (floored to 1 s)", 0.5, 1],
  ["1.5", 1.5, 1.5],
  ["120", 120, 120],
  ["3600.5 (capped)", 3600.5, 3600],
  ["1e9 (capped to 3600 s)", 1e9, 3600],
];

function leaseField(leaseSeconds: unknown): object {
  return leaseSeconds === undefined ? {} : { leaseSeconds };
}

describe("leaseSeconds clamp", () => {
  it.each(CASES)("claim with leaseSeconds %s (%j) gives a lease of %s s", async (_what, leaseSeconds, expected) => {
    const job = await createJob();
    const { result: res, t0, t1 } = await timed(() => claim(job.id, "w1", leaseField(leaseSeconds)));
    expect(res.body).toMatchObject({ claimed: true });
    const row = await getJob(job.id);
    expect(res.body.job.lease_expires_at).toBe(row.lease_expires_at);
    expectStampedDuring(row.lease_expires_at, t0, t1, expected * 1000);
  });

  it.each(CASES)("renew with leaseSeconds %s (%j) gives a lease of %s s", async (_what, leaseSeconds, expected) => {
    const job = await heldJob("w1");
    const { result: res, t0, t1 } = await timed(() => renew(job.id, "w1", leaseField(leaseSeconds)));
    expect(res.body).toMatchObject({ renewed: true });
    const row = await getJob(job.id);
    expect(res.body.job.lease_expires_at).toBe(row.lease_expires_at);
    expectStampedDuring(row.lease_expires_at, t0, t1, expected * 1000);
  });
});
