// A batch's probe_job_events record stays far inside its field (declared
// 2,000,000 bytes, not enforced on these saves) whatever the batch: the
// changes are cut into records of at most JOB_EVENT_MAX_BYTES of JSON.
import { describe, expect, it } from "vitest";
import { JOB_EVENT_MAX_BYTES, jobEventChunks } from "../../src/lib/job-events";
import { MAX_BATCH_ITEMS, MAX_PROBE_KEY_BYTES, MAX_WORKER_ID_BYTES, utf8ByteLength } from "../../src/lib/queue";
import type { JobView } from "../../src/lib/types";

const change = (i: number, probeKey: string, claimedBy: string): JobView => ({
  id: `job${String(i).padStart(12, "0")}`, probe_key: probeKey, status: "running", claimed_by: claimedBy,
  lease_expires_at: "2026-12-01 10:00:00.000Z", version: 12345,
});
const bytesOf = (changes: JobView[]) => utf8ByteLength(JSON.stringify(changes));

describe("jobEventChunks", () => {
  it("keeps an ordinary batch in one record, in order", () => {
    const changes = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => change(i, `probe/${i}`, "worker-1"));
    expect(jobEventChunks(changes)).toEqual([changes]);
    expect(jobEventChunks([])).toEqual([]);
  });

  it("a full batch at the identifier bounds, even of characters JSON escapes, fits one field", () => {
    const escaped = "\u0001".repeat(MAX_PROBE_KEY_BYTES); // 6 bytes each as JSON
    const changes = Array.from({ length: MAX_BATCH_ITEMS }, (_, i) => change(i, escaped, "w".repeat(MAX_WORKER_ID_BYTES)));
    const chunks = jobEventChunks(changes);
    expect(chunks.flat()).toEqual(changes);
    expect(chunks).toHaveLength(1);
    expect(bytesOf(chunks[0]!)).toBeLessThanOrEqual(JOB_EVENT_MAX_BYTES);
  });

  it("splits rows whose keys were written long through the record API (no bound there), never over the limit", () => {
    const changes = Array.from({ length: 30 }, (_, i) => change(i, "k".repeat(200_000), "w"));
    const chunks = jobEventChunks(changes);
    expect(chunks.flat()).toEqual(changes);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(bytesOf(chunk)).toBeLessThanOrEqual(JOB_EVENT_MAX_BYTES);
  });
});
