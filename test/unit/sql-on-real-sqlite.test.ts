// src/lib's SQL on real SQLite (sql.js, the schema PocketBase's migrations make:
// test/unit/support/sqlite-db.ts) and on the fake PocketBase's JS evaluator
// (answerQuery / executeStatement), over the same seeded random rows: each query
// must answer the same, each statement change the same rows the same way. The
// fake answers every unit test's SQL; this holds it to SQLite, and is the
// harness for running the unit tier's SQL on SQLite itself.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { heartbeatJudgeQuery, heartbeatWriteStatement, completeJudgeQuery, completeWriteStatement, heartbeatItems, completeItems, JITTER_STEPS } from "../../src/lib/batch-plans";
import { bulkPatchStatement, jobRowsQuery } from "../../src/lib/bulk";
import {
  deletePassedParksStatement, deleteExpiredClaimsStatement, dueCountQuery, flowRowsQuery, heldBackScopesQuery, heldCountQuery,
  nextQueueQuery, parkStatement, recordClaimStatement, reExpireClaimsStatement, upsertFlowStatement, windowCountQuery,
  type Scope,
} from "../../src/lib/flow";
import { flowListQuery, unfinishedInQueueQuery } from "../../src/lib/flow-endpoint";
import { deleteOldEventsStatement } from "../../src/lib/job-events";
import type { JobPatch } from "../../src/lib/job-row";
import { formatPbDate } from "../../src/lib/lease";
import {
  CLAIM_ORDER, expiredLeaseWhere, familyProbeQuery, LEVEL_ORDER, liveCountsByQueueQuery, liveUniqueKeyQuery, pendingDueWhere,
  pendingGroupCountQuery, statsQuery, statsScanQuery, topPriorityQuery, type HeldBack, type WhereClause,
} from "../../src/lib/queries";
import { deleteExpiredQuery, RETENTION_CLASSES } from "../../src/lib/retention";
import { enabledSchedulesQuery, markScheduleStatement } from "../../src/lib/schedules";
import type { ReleaseRequestFields, RenewRequestFields } from "../../src/lib/validate";
import { RELEASE_TARGETS } from "../../src/lib/types";

// Four seeds per line: together they reach every branch the tests name (about 5 s of CPU for the file).
const SEEDS = [1, 2, 3, 4];
import { answerQuery, executeStatement, type StoredRow } from "./support/fake-pocketbase";
import { dateOrEmpty, MINUTE, NOW, PREFIXES, seedWorld, storedJob, WORKERS, type World } from "./support/random-world";
import { SqliteDb } from "./support/sqlite-db";


/** Both answers to one query. */
function answers(world: World, query: WhereClause) {
  return { real: world.sqlite.all(query.sql, query.params), fake: answerQuery(query.sql, query.params, world.tables) };
}

/** Both lists of rows of a jobRowsQuery. */
function rowsOf(world: World, query: WhereClause) {
  const { real, fake } = answers(world, query);
  return { real: JSON.parse(String(real[0]?.["rows"])) as unknown[], fake: JSON.parse(String(fake[0]?.["rows"])) as unknown[] };
}

/** Every row of each table in SQLite and in the fake, in id (or insertion, or scope and name) order. */
function tablesOf(world: World) {
  const byId = <T extends { id: string }>(rows: Iterable<T>) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { sqlite, tables } = world;
  return {
    real: {
      jobs: sqlite.all("SELECT * FROM probe_jobs ORDER BY id").map(storedJob),
      flow: sqlite.all("SELECT created, updated, scope, name, paused, concurrency, rate_limit, rate_period, parked_until FROM probe_flow ORDER BY scope, name"),
      flowClaims: sqlite.all("SELECT scope, name, at, expires FROM probe_flow_claims ORDER BY rowid"),
      events: sqlite.all("SELECT id, created, updated, source, changes FROM probe_job_events ORDER BY id"),
      scheduleMarks: sqlite.all("SELECT id, last_enqueued_for FROM probe_schedules ORDER BY id"),
    },
    fake: {
      jobs: byId(tables.jobs.values()).map(storedJob),
      // A row an upsert inserts has an id of each side's own making: compared without it.
      flow: [...tables.flow.values()].map(({ id: _id, ...row }) => row)
        .sort((a, b) => (a.scope !== b.scope ? (a.scope < b.scope ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      flowClaims: tables.flowClaims,
      events: byId(tables.events.values()),
      scheduleMarks: byId(tables.schedules.values()).map((s) => ({ id: s.id, last_enqueued_for: s.last_enqueued_for })),
    },
  };
}

/** Runs a statement on both; the rows it changed must agree. */
function expectSameChange(world: World, statement: WhereClause) {
  const real = world.sqlite.execute(statement.sql, statement.params);
  const fake = executeStatement(statement.sql, statement.params, world.tables);
  expect({ changed: real }, statement.sql).toEqual({ changed: fake });
}

function expectSameTables(world: World) {
  const both = tablesOf(world);
  expect(both.real).toEqual(both.fake);
}

/** Runs a statement on both; the rows changed and the tables after must agree. */
function expectSameWrite(world: World, statement: WhereClause) {
  expectSameChange(world, statement);
  expectSameTables(world);
}

const HELD_BACKS: HeldBack[] = [{ queues: [], groups: [] }, { queues: ["default"], groups: [] }, { queues: ["q1"], groups: ["g1"] }];

describe.each(["0.22", "0.23"] as const)("src/lib's SQL on real SQLite (schema of the %s line) and on the fake, over the same random rows", (line) => {
  // One database per line, emptied and seeded again per seed: its prepared statements serve every seed.
  let sqlite: SqliteDb;
  /** Rows claim-next's reads found, over every seed: an agreement on empty answers proves nothing. */
  const found = { due: 0, expired: 0 };
  beforeAll(async () => {
    sqlite = await SqliteDb.open(line);
  });
  afterAll(() => sqlite.close());

  describe.each(SEEDS)("seed %i", (seed) => {
    let world: World;
    beforeAll(() => {
      world = seedWorld(sqlite, seed);
    });

    test("the seeded tables read back the same", () => {
      expectSameTables(world);
    });

    test("stats: statsQuery (the counts table the triggers keep) and statsScanQuery (by prefix and by queue)", () => {
      for (const cap of [1, 2, 5]) // orphanCap (config.ts) is at least 1: at 0 the partial index's `> 0` term makes SQLite count fewer than the fake
      {
        const { real, fake } = answers(world, statsQuery(NOW, cap));
        expect(real).toEqual(fake);
        for (const prefix of PREFIXES) {
          const scan = answers(world, statsScanQuery(NOW, cap, prefix));
          expect(scan.real).toEqual(scan.fake);
          for (const queue of ["default", "q1"]) {
            const one = answers(world, statsScanQuery(NOW, cap, prefix, queue));
            expect(one.real, `${prefix} ${queue}`).toEqual(one.fake);
          }
        }
      }
    });

    test("claim-next's reads: pendingDueWhere and expiredLeaseWhere rows (jobRowsQuery), the level and family probes", () => {
      for (const prefix of PREFIXES) {
        for (const held of HELD_BACKS) {
          for (const use of ["filter", "range"] as const) {
            for (const queue of [undefined, "default", "", "q1"]) {
              // One level per combination (the level is a bound value, not part of the text): the seeds cover the others.
              const priority = world.random.pick([-1, 0, 1, 2]);
              const due = rowsOf(world, jobRowsQuery(pendingDueWhere(priority, NOW, prefix, use, queue, held), LEVEL_ORDER, 7));
              expect(due.real, `${prefix} ${use} ${queue} ${priority}`).toEqual(due.fake);
              found.due += due.real.length;
              const top = answers(world, topPriorityQuery(prefix, world.random.pick([undefined, 1, 2]), use, queue));
              expect(top.real).toEqual(top.fake);
            }
          }
          for (const queues of [null, ["default"], ["q1", "q2"]]) {
            const expired = rowsOf(world, jobRowsQuery(expiredLeaseWhere(NOW, prefix, queues, held), CLAIM_ORDER, 50));
            expect(expired.real, `${prefix} ${String(queues)}`).toEqual(expired.fake);
            found.expired += expired.real.length;
          }
        }
        const family = answers(world, familyProbeQuery(prefix));
        expect(family.real).toEqual(family.fake);
      }
      for (const queue of ["default", "q1", ""]) {
        for (const limit of [0, 1, 5]) {
          const groups = answers(world, pendingGroupCountQuery(queue, limit));
          expect(groups.real, `${queue} ${limit}`).toEqual(groups.fake);
        }
      }
    });

    test("enqueue's and the gauges' reads: liveUniqueKeyQuery, liveCountsByQueueQuery", () => {
      for (const key of ["k1", "k2", "k3", "k4", "k5", "missing"]) {
        const holder = answers(world, liveUniqueKeyQuery(key));
        expect(holder.real).toEqual(holder.fake);
      }
      for (const limit of [1, 4, 1500]) {
        const counts = answers(world, liveCountsByQueueQuery(limit));
        expect(counts.real).toEqual(counts.fake);
      }
    });

    test("flow control's reads: flowRowsQuery, flowListQuery, the held/due/window counts, heldBackScopesQuery, nextQueueQuery", () => {
      const scopes: Scope[] = [
        { scope: "queue", name: "default" }, { scope: "queue", name: "q1" }, { scope: "queue", name: "q2" }, { scope: "queue", name: "" },
        { scope: "group", name: "g1" }, { scope: "group", name: "g2" }, { scope: "group", name: "" },
      ];
      const settings = answers(world, flowRowsQuery(scopes));
      const byScope = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => (`${a["scope"]}/${a["name"]}` < `${b["scope"]}/${b["name"]}` ? -1 : 1));
      expect(byScope(settings.real)).toEqual(byScope(settings.fake)); // no ORDER BY: any order
      for (const scope of [null, "queue", "group"] as const) {
        for (const name of [null, "default", "g1"]) {
          const list = answers(world, flowListQuery(scope, name, 3));
          expect(list.real).toEqual(list.fake);
        }
      }
      for (const s of scopes) {
        for (const query of [heldCountQuery(s, NOW), dueCountQuery(s, NOW), windowCountQuery(s, NOW, 60)]) {
          const count = answers(world, query);
          expect(count.real, `${s.scope} ${s.name}`).toEqual(count.fake);
        }
      }
      // Each UNION part has a LIMIT without ORDER BY, and UNION's order is SQLite's: compared as sets, with room for every row.
      const heldBack = answers(world, heldBackScopesQuery(NOW, 5000));
      expect(byScope(heldBack.real)).toEqual(byScope(heldBack.fake));
      for (const after of [null, "", "default", "q1", "q2"]) {
        const next = answers(world, nextQueueQuery(after));
        expect(next.real, String(after)).toEqual(next.fake);
      }
      for (const queue of ["default", "", "q1", "q9"]) {
        const unfinished = answers(world, unfinishedInQueueQuery(queue));
        expect(unfinished.real).toEqual(unfinished.fake);
      }
    });

    test("the schedules' page: enabledSchedulesQuery", () => {
      for (const after of ["", "a", "hourly3"]) {
        const page = answers(world, enabledSchedulesQuery(NOW, 3, after));
        const columns = (rows: Record<string, unknown>[]) => rows.map((s) => ({ id: s["id"], name: s["name"] }));
        expect(columns(page.real)).toEqual(columns(page.fake));
      }
    });

    // The writes change the world: they run after every read above (vitest runs a file's tests in order).
    test("bulkPatchStatement: random patches of text, number and JSON columns, some for missing ids", () => {
      const r = world.random;
      const ids = [...world.tables.jobs.keys()];
      for (let round = 0; round < 3; round++) {
        const patches = Array.from({ length: 12 }, (_, n) => {
          const patch: JobPatch = {};
          if (r.chance(0.5)) patch.status = r.pick(["claimed", "running", "done", "failed", "cancelled"] as const);
          if (r.chance(0.5)) patch.claimed_by = r.pick(WORKERS);
          if (r.chance(0.4)) patch.lease_expires_at = dateOrEmpty(r);
          if (r.chance(0.5)) patch.version = r.int(10);
          if (r.chance(0.3)) patch.attempts = r.int(5);
          if (r.chance(0.3)) patch.result = r.pick([{ ok: 1 }, [1, "two"], "text", 7]);
          if (r.chance(0.3)) patch.progress = { at: r.int(100) };
          if (r.chance(0.3)) patch.last_error = r.pick(["", "it broke", "quote ' and \" "]);
          if (r.chance(0.2)) patch.start_by = dateOrEmpty(r);
          return { id: n === 11 ? "missing-id" : (ids[r.int(ids.length)] as string), patch };
        });
        const once = [...new Map(patches.map((p) => [p.id, p])).values()]; // at most one patch per id (the caller merges)
        expectSameWrite(world, bulkPatchStatement(once, formatPbDate(NOW + round * 1000)));
      }
      const stats = answers(world, statsQuery(NOW, 1));
      expect(stats.real, "the triggers' counts after the writes").toEqual(stats.fake);
    });

    test("heartbeat's and complete's plans (batch-plans.ts): the judging query's answers, then the write", () => {
      const r = world.random;
      // Mostly held jobs, by their holder with their token: the plans' writing kinds, not only their refusals.
      const jobs = [...world.tables.jobs.values()];
      const heldJobs = jobs.filter((j) => j.status === "claimed" || j.status === "running");
      const someJob = (): StoredRow => r.pick(r.chance(0.7) && heldJobs.length > 0 ? heldJobs : jobs);
      const renewals: RenewRequestFields[] = Array.from({ length: 20 }, () => {
        const job = someJob();
        return {
          jobId: r.chance(0.1) ? "missing-id" : job.id, workerId: r.chance(0.8) ? job.claimed_by : r.pick(WORKERS),
          leaseSeconds: r.pick([30, 600, "x"]), leaseToken: r.chance(0.7) ? job.lease_token : r.pick([undefined, "t9"]),
          progress: r.pick([undefined, { step: r.int(9) }]),
        };
      });
      const beat = JSON.stringify(heartbeatItems([...new Map(renewals.map((x) => [x.jobId, x])).values()], NOW));
      const judged = answers(world, heartbeatJudgeQuery(beat, NOW));
      expect(judged.real.map(parsedPlan)).toEqual(judged.fake.map(parsedPlan));
      expectSameWrite(world, heartbeatWriteStatement(beat, NOW));

      const releases: ReleaseRequestFields[] = Array.from({ length: 20 }, () => {
        const job = someJob();
        const target = r.pick(RELEASE_TARGETS);
        return {
          jobId: job.id, workerId: r.chance(0.8) ? job.claimed_by : r.pick(WORKERS), target,
          leaseToken: r.chance(0.7) ? job.lease_token : r.pick([undefined, "t9"]), result: r.pick([undefined, { v: r.int(9) }]),
          error: r.pick([undefined, "failed here"]), rateLimitedFor: target === "retry" && r.chance(0.3) ? r.pick([5, 60]) : undefined,
        };
      });
      const once = [...new Map(releases.map((x) => [x.jobId, x])).values()];
      const done = JSON.stringify(completeItems(once, NOW, once.map(() => r.int(JITTER_STEPS))));
      const judgedDone = answers(world, completeJudgeQuery(done, NOW));
      expect(judgedDone.real.map(parsedPlan)).toEqual(judgedDone.fake.map(parsedPlan));
      expectSameWrite(world, completeWriteStatement(done, NOW));
    });

    test("flow control's writes: upsert, park, the claims log and its drains", () => {
      const r = world.random;
      for (let n = 0; n < 6; n++) {
        const s: Scope = r.pick([{ scope: "queue", name: "default" }, { scope: "queue", name: "q9" }, { scope: "group", name: "g1" }, { scope: "group", name: "g7" }]);
        const stampMs = NOW + n * 1000;
        expectSameChange(world, upsertFlowStatement(s, r.pick([{ paused: 1 }, { concurrency: 2, rate_limit: 0 }, { rate_limit: 3, rate_period: 60 }]), stampMs));
        expectSameChange(world, parkStatement(s, NOW + r.pick([-5, 5, 50]) * MINUTE, stampMs));
        expectSameChange(world, recordClaimStatement(s, stampMs, 60));
        expectSameChange(world, reExpireClaimsStatement(s, r.pick([30, 120])));
        expectSameTables(world);
      }
      expectSameWrite(world, deleteExpiredClaimsStatement(NOW + 30_000, 20_000));
      expectSameWrite(world, deletePassedParksStatement(NOW, 5_000));
    });

    test("retention's and the schedules' writes: deleteExpiredQuery, deleteOldEventsStatement, markScheduleStatement", () => {
      for (const retentionClass of RETENTION_CLASSES) {
        expectSameWrite(world, deleteExpiredQuery(retentionClass, formatPbDate(NOW), 10_000));
      }
      expectSameWrite(world, deleteOldEventsStatement(formatPbDate(NOW), 500));
      for (const id of [...world.tables.schedules.keys()].slice(0, 3)) {
        expectSameWrite(world, markScheduleStatement(id, { last_enqueued_for: formatPbDate(NOW) }));
      }
    });
  });

  test("the seeds' rows reach claim-next's reads: due and expired rows were found, not only empty answers", () => {
    expect(found.due).toBeGreaterThan(0);
    expect(found.expired).toBeGreaterThan(0);
  });
});

/** A judging query's row with its JSON texts parsed (key order is each side's own). */
function parsedPlan(row: Record<string, unknown>) {
  return { answers: JSON.parse(String(row["answers"])), parks: JSON.parse(String(row["parks"])), written: row["written"] };
}
