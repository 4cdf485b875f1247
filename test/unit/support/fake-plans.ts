// The fake PocketBase's answers to src/lib/batch-plans.ts's statements: the
// model the real statements are checked against (test/support/batch-model.ts,
// transitions.ts's rules), so the unit tier runs the batch endpoints' rules
// without SQLite. The judging query is answered on a copy of the rows; the
// write runs the same model on the rows themselves.
import {
  completeJudgeQuery, completeWriteStatement, heartbeatJudgeQuery, heartbeatWriteStatement,
} from "../../../src/lib/batch-plans";
import type { ReleaseRequestFields, RenewRequestFields } from "../../../src/lib/validate";
import type { ReleaseTarget } from "../../../src/lib/types";
import { modelComplete, modelHeartbeat, rateLimitedForOf, type StoredRow } from "../../support/batch-model";

type Params = Record<string, unknown>;
type Item = Record<string, string | number | undefined>;

const HEARTBEAT_JUDGE = heartbeatJudgeQuery("", 0).sql;
const HEARTBEAT_WRITE = heartbeatWriteStatement("", 0).sql;
const COMPLETE_JUDGE = completeJudgeQuery("", 0).sql;
const COMPLETE_WRITE = completeWriteStatement("", 0).sql;

function renewalsOf(items: Item[], nowMs: number): RenewRequestFields[] {
  return items.map((i) => ({
    jobId: String(i["id"]), workerId: String(i["w"]), leaseSeconds: (Number(i["em"]) - nowMs) / 1000,
    leaseToken: i["tok"] === undefined ? undefined : String(i["tok"]),
    progress: i["p"] === undefined ? undefined : JSON.parse(String(i["p"])),
  }));
}

function releasesOf(items: Item[], nowMs: number): ReleaseRequestFields[] {
  return items.map((i) => ({
    jobId: String(i["id"]), workerId: String(i["w"]), target: String(i["t"]) as ReleaseTarget,
    leaseToken: i["tok"] === undefined ? undefined : String(i["tok"]),
    result: i["res"] === undefined ? undefined : JSON.parse(String(i["res"])),
    error: i["err"] === undefined ? undefined : String(i["err"]),
    rateLimitedFor: i["ra"] === undefined ? undefined : rateLimitedForOf(String(i["ra"]), nowMs),
  }));
}

function run(sql: string, params: Params, jobs: Map<string, StoredRow>) {
  const items = JSON.parse(String(params["items"])) as Item[];
  const nowMs = Number(params["nowMs"]);
  if (sql === HEARTBEAT_JUDGE || sql === HEARTBEAT_WRITE) return { items, outcome: modelHeartbeat(jobs, renewalsOf(items, nowMs), nowMs) };
  const steps = items.map((i) => Number(i["j"] ?? 0));
  return { items, outcome: modelComplete(jobs, releasesOf(items, nowMs), nowMs, steps) };
}

const isPlan = (sql: string) => sql === HEARTBEAT_JUDGE || sql === COMPLETE_JUDGE || sql === HEARTBEAT_WRITE || sql === COMPLETE_WRITE;

/** The judging query's one row, or null when `sql` is not one. */
export function answerPlanQuery(sql: string, params: Params, jobs: Map<string, StoredRow>): Record<string, unknown>[] | null {
  if (sql !== HEARTBEAT_JUDGE && sql !== COMPLETE_JUDGE) return null;
  const copy = new Map([...jobs].map(([id, row]) => [id, { ...row }]));
  const before = new Map([...jobs].map(([id, row]) => [id, { ...row }]));
  const { items, outcome } = run(sql, params, copy);
  const parks = items.flatMap((item, k) => {
    const answer = outcome.answers[k] as { released?: boolean };
    const row = before.get(String(item["id"]));
    return item["ra"] !== undefined && answer.released === true && row !== undefined
      ? [{ k, queue: row["queue"] ?? "", group_key: row["group_key"] ?? "" }] : [];
  });
  return [{ answers: JSON.stringify(outcome.answers), parks: JSON.stringify(parks), written: outcome.written.length }];
}

/** The write's changed rows, or null when `sql` is not one. */
export function executePlanStatement(sql: string, params: Params, jobs: Map<string, StoredRow>): number | null {
  if (!isPlan(sql) || sql === HEARTBEAT_JUDGE || sql === COMPLETE_JUDGE) return null;
  return run(sql, params, jobs).outcome.written.length;
}
