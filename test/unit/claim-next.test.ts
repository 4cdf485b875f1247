import { describe, expect, it } from "vitest";
import { claimNext } from "../../src/lib/claim-next";
import type { JobBatch, JobPatch, JobRow } from "../../src/lib/job-row";
import { expiredLeaseWhere, pendingWhere, type WhereClause } from "../../src/lib/queries";
import { isClaimable } from "../../src/lib/transitions";
import { EXPIRED, held, LIVE, NOW, row } from "./support/rows";

/** A JobBatch over rows in memory; find answers the two candidate queries by the lib's own predicates. */
function memoryBatch(rows: JobRow[]): JobBatch & { writes: { id: string; patch: JobPatch }[] } {
  const byId = new Map(rows.map((r) => [r.id, { ...r }]));
  const pendingSql = pendingWhere("").sql;
  const expiredSql = expiredLeaseWhere(NOW, "").sql;
  const writes: { id: string; patch: JobPatch }[] = [];
  return {
    writes,
    find(where: WhereClause, _order, limit) {
      const matches = [...byId.values()].filter((r) => {
        if (where.sql === pendingSql) return r.status === "pending";
        if (where.sql === expiredSql) return r.status !== "pending" && isClaimable(r, NOW);
        throw new Error(`unexpected query ${where.sql}`);
      });
      return matches.sort((a, b) => (a.created < b.created ? -1 : 1)).slice(0, limit).map((r) => ({ ...r }));
    },
    write(r, patch) {
      writes.push({ id: r.id, patch });
      byId.set(r.id, Object.assign({ ...byId.get(r.id)! }, patch) as JobRow);
    },
  };
}

const at = (n: number) => `2025-01-15 11:00:0${n}.000Z`;
const request = (limit: number) => ({ workerId: "w1", leaseSeconds: 30, limit, probeKeyPrefix: "" });
let tokens = 0;
const newToken = () => `tok${++tokens}`;

describe("claimNext (the claim-next transaction's logic)", () => {
  it("claims the oldest claimable rows, pending and expired alike, up to the limit", () => {
    const batch = memoryBatch([
      row({ id: "p2", created: at(2) }),
      held("w-dead", EXPIRED, { id: "e1", created: at(1), consecutive_orphan_count: 0 }),
      held("w-live", LIVE, { id: "l0", created: at(0) }),
      row({ id: "p3", created: at(3) }),
    ]);
    expect(claimNext(batch, request(2), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["e1", "p2"]);
  });

  it("fills the limit with later rows when a candidate is given up at the cap", () => {
    const batch = memoryBatch([
      held("w-dead", EXPIRED, { id: "poison", created: at(1), consecutive_orphan_count: 5 }),
      row({ id: "p2", created: at(2) }),
      row({ id: "p3", created: at(3) }),
    ]);
    expect(claimNext(batch, request(2), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["p2", "p3"]);
    expect(batch.writes.find((w) => w.id === "poison")?.patch).toMatchObject({ status: "failed" });
  });

  it("stops after a bounded number of rounds even when every candidate is poison", () => {
    const poison = Array.from({ length: 50 }, (_, i) =>
      held("w-dead", EXPIRED, { id: `x${String(i).padStart(2, "0")}`, created: at(0), consecutive_orphan_count: 5 }));
    const batch = memoryBatch(poison);
    expect(claimNext(batch, request(1), NOW, 5, newToken)).toEqual([]);
    expect(batch.writes.length).toBeLessThanOrEqual(8); // CLAIM_NEXT_ROUNDS rounds of at most `limit` x 2 candidates
    expect(batch.writes.length).toBeGreaterThan(0);
  });

  it("answers nothing, writing nothing, when nothing is claimable", () => {
    const batch = memoryBatch([held("w-live", LIVE), row({ id: "d", status: "done" })]);
    expect(claimNext(batch, request(3), NOW, 5, newToken)).toEqual([]);
    expect(batch.writes).toEqual([]);
  });
});
