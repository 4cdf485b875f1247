// The numbers behind running the unit tier's SQL on sql.js (sqlite-db.ts):
// the same typical queries and statements on real SQLite and on the fake
// PocketBase's JS evaluator, over one seeded random world.
//   npx vitest bench --run --project unit test/unit/sqlite-vs-fake.bench.ts
import { bench, describe } from "vitest";
import { bulkPatchStatement, jobRowsQuery } from "../../src/lib/bulk";
import { formatPbDate } from "../../src/lib/lease";
import { expiredLeaseWhere, LEVEL_ORDER, CLAIM_ORDER, pendingDueWhere, statsQuery, topPriorityQuery, type WhereClause } from "../../src/lib/queries";
import { answerQuery, executeStatement } from "./support/fake-pocketbase";
import { NOW, seedWorld } from "./support/random-world";
import { SqliteDb } from "./support/sqlite-db";

const world = seedWorld(await SqliteDb.open("0.22"), 1, 200);
const reads: WhereClause[] = [
  statsQuery(NOW, 5),
  topPriorityQuery("", undefined, "filter", "default"),
  jobRowsQuery(pendingDueWhere(0, NOW, "", "filter", "default"), LEVEL_ORDER, 10),
  jobRowsQuery(expiredLeaseWhere(NOW, "", null), CLAIM_ORDER, 50),
];
const ids = [...world.tables.jobs.keys()].slice(0, 10);
const write = bulkPatchStatement(ids.map((id) => ({ id, patch: { version: 1, claimed_by: "w1" } })), formatPbDate(NOW));

describe("four of claim-next's and stats' reads (200 jobs)", () => {
  bench("real SQLite (sql.js)", () => {
    for (const q of reads) world.sqlite.all(q.sql, q.params);
  });
  bench("the fake's JS evaluator", () => {
    for (const q of reads) answerQuery(q.sql, q.params, world.tables);
  });
});

describe("a bulk patch of 10 jobs", () => {
  bench("real SQLite (sql.js)", () => {
    world.sqlite.execute(write.sql, write.params);
  });
  bench("the fake's JS evaluator", () => {
    executeStatement(write.sql, write.params, world.tables);
  });
});

describe("a fresh database", () => {
  bench("SqliteDb.open: an empty database with the 0.22 schema (the wasm already loaded)", async () => {
    (await SqliteDb.open("0.22")).close();
  });
});
