/**
 * The checks of the server's answers: each parse* takes a call's parsed JSON
 * and answers it typed, or throws a FleetProtocolError naming what is missing
 * (a server of another version, or something that is not a pb-fleet, must not
 * pass as a refusal or an empty answer).
 */
import { WORKER_FIELDS } from "../../lib/identity.js";
import {
  CLAIM_REFUSALS,
  RELEASE_REFUSALS,
  RENEW_REFUSALS,
  RETRY_REFUSALS,
  type CancelResponse,
  type ClaimNextResponse,
  type ClaimRefusal,
  type CompleteItem,
  type CompleteResult,
  type EnqueuedJob,
  type FleetStats,
  type FlowRequest,
  type FlowResponse,
  type FlowStateResponse,
  type HeartbeatItem,
  type HeartbeatResult,
  type JobView,
  type ReleaseResponse,
  type RenewRefusal,
  type RenewResponse,
  type RetryResponse,
  type SweepResponse,
  type SweptJob,
} from "../../lib/types.js";
import { FleetProtocolError } from "../errors.js";
import { isObject } from "../json-object.js";
import { isFlowAnswer, isFlowStateAnswer } from "../flow-options.js";
import type { ClaimResult, HeldJob, JobRecord, WorkerIdentity } from "./types.js";

/** Every SweptJob outcome, checked by the compiler against the protocol's type. */
const SWEEP_OUTCOMES: Record<SweptJob["outcome"], true> = { requeued: true, gave_up: true, timed_out: true };

export function parseClaim(op: string, body: unknown): ClaimResult {
  if (!isObject(body) || typeof body["claimed"] !== "boolean") {
    throw new FleetProtocolError(op, "answer has no boolean `claimed`", body);
  }
  if (!body["claimed"]) {
    const reason = body["reason"];
    return (CLAIM_REFUSALS as readonly unknown[]).includes(reason) ? { claimed: false, reason: reason as ClaimRefusal } : { claimed: false };
  }
  if (!isJobView(body["job"])) throw new FleetProtocolError(op, "claimed:true without a `job`", body);
  const token = body["leaseToken"];
  return {
    claimed: true,
    job: body["job"],
    leaseToken: typeof token === "string" && token !== "" ? token : undefined,
    alreadyHeld: body["alreadyHeld"] === true,
  };
}

export function parseClaimNext(body: unknown): HeldJob[] {
  if (!isObject(body) || !Array.isArray(body["jobs"]) ||
      !body["jobs"].every((j: unknown) => isObject(j) && isJobView(j["job"]))) {
    throw new FleetProtocolError("claimNext", "answer has no `jobs` array of { job, leaseToken }", body);
  }
  return (body as ClaimNextResponse).jobs.map((j) => ({ job: j.job, leaseToken: j.leaseToken || undefined, alreadyHeld: false }));
}

export function parseRenew(body: unknown): RenewResponse {
  if (!isObject(body) || typeof body["renewed"] !== "boolean" || (body["renewed"] && !isJobView(body["job"]))) {
    throw new FleetProtocolError("renew", "answer has no boolean `renewed` (and `job` when true)", body);
  }
  return body["renewed"] ? body as RenewResponse : renewRefused(body);
}

export function parseRelease(body: unknown): ReleaseResponse {
  if (!isObject(body) || typeof body["released"] !== "boolean") {
    throw new FleetProtocolError("release", "answer has no boolean `released`", body);
  }
  if (body["released"] ? !isJobView(body["job"]) : !(RELEASE_REFUSALS as readonly unknown[]).includes(body["reason"])) {
    throw new FleetProtocolError("release", "answer has neither a `job` nor a known refusal `reason`", body);
  }
  return body as ReleaseResponse;
}

/** One heartbeat chunk's answer: a result per item of `chunk`, in its order. */
export function parseHeartbeatResults(body: unknown, chunk: readonly HeartbeatItem[]): HeartbeatResult[] {
  if (!isObject(body) || !Array.isArray(body["results"]) || body["results"].length !== chunk.length ||
      !body["results"].every((r: unknown, i) => isObject(r) && r["jobId"] === chunk[i]?.jobId && typeof r["renewed"] === "boolean")) {
    throw new FleetProtocolError("heartbeat", `answer has no \`results\` array of ${chunk.length} { jobId, renewed } in request order`, body);
  }
  return (body["results"] as Array<Record<string, unknown>>).map((r): HeartbeatResult =>
    r["renewed"] ? r as unknown as HeartbeatResult : { jobId: r["jobId"] as string, ...renewRefused(r) });
}

/** One complete chunk's answer: a result per item of `chunk`, in its order. */
export function parseCompleteResults(body: unknown, chunk: readonly CompleteItem[]): CompleteResult[] {
  if (!isObject(body) || !Array.isArray(body["results"]) || body["results"].length !== chunk.length ||
      !body["results"].every((r: unknown, i) => isObject(r) && r["jobId"] === chunk[i]?.jobId && (
        r["released"] === true ||
        (r["released"] === false && (RELEASE_REFUSALS as readonly unknown[]).includes(r["reason"]))))) {
    throw new FleetProtocolError("complete", `answer has no \`results\` array of ${chunk.length} { jobId, released, reason? } ` +
      "in request order (a known refusal `reason` when released is false)", body);
  }
  return body["results"] as CompleteResult[];
}

export function parseSweep(body: unknown): SweepResponse {
  if (!isObject(body) || typeof body["requeued"] !== "number" || typeof body["gaveUp"] !== "number" ||
      !Array.isArray(body["jobs"]) || !body["jobs"].every(isSweptJob)) {
    throw new FleetProtocolError("sweep", "answer lacks the counts `requeued` and `gaveUp`, or a `jobs` array of " +
      "{ id, outcome, claimedBy, consecutiveOrphanCount }", body);
  }
  return body as SweepResponse;
}

/** One enqueue request's answer: `count` jobs, in request order. */
export function parseEnqueued(op: string, body: unknown, count: number): EnqueuedJob[] {
  if (!isObject(body) || !Array.isArray(body["jobs"]) || body["jobs"].length !== count || !body["jobs"].every(isEnqueuedJob)) {
    throw new FleetProtocolError(op, `answer has no \`jobs\` array of ${count} { id, probeKey, created }`, body);
  }
  return body["jobs"] as EnqueuedJob[];
}

export function parseCancel(body: unknown): CancelResponse {
  if (!isObject(body) || typeof body["cancelled"] !== "boolean" || (body["cancelled"] && !isJobView(body["job"]))) {
    throw new FleetProtocolError("cancel", "answer has no boolean `cancelled` (and `job` when true)", body);
  }
  return body as CancelResponse;
}

export function parseRetry(body: unknown): RetryResponse {
  if (!isObject(body) || typeof body["retried"] !== "boolean" ||
      (body["retried"] ? !isJobView(body["job"])
        : body["reason"] !== undefined && !(RETRY_REFUSALS as readonly unknown[]).includes(body["reason"]))) {
    throw new FleetProtocolError("retry", "answer has no boolean `retried` (with `job` when true, a known `reason` or none when false)", body);
  }
  return body as RetryResponse;
}

/** setFlow's answer: the settings of the scope `request` asked for. */
export function parseSetFlow(body: unknown, request: FlowRequest): FlowResponse["flow"] {
  if (!isFlowAnswer(body, request)) {
    throw new FleetProtocolError("setFlow", "answer has no `flow` { queue | group, paused, concurrency, rateLimit, parkedUntil } " +
      "of the scope asked for", body);
  }
  return body.flow;
}

export function parseFlowState(body: unknown): FlowStateResponse {
  if (!isFlowStateAnswer(body)) {
    throw new FleetProtocolError("getFlow", "answer has no `queues` and `groups` arrays of " +
      "{ name, paused, concurrency, rateLimit, parkedUntil, held, due, claimsInWindow }", body);
  }
  return body;
}

export function parseStats(body: unknown): FleetStats {
  if (!isObject(body) || !isObject(body["counts"])) throw new FleetProtocolError("stats", "answer has no `counts`", body);
  return body as unknown as FleetStats;
}

export function parseRecord(op: string, body: unknown): JobRecord {
  if (!isRecordLike(body)) throw new FleetProtocolError(op, "answer is not a record (no string `id`)", body);
  return body as unknown as JobRecord;
}

/** One page of the record API's list. */
export function parseRecordPage(op: string, body: unknown): JobRecord[] {
  if (!isObject(body) || !Array.isArray(body["items"]) || !body["items"].every(isRecordLike)) {
    throw new FleetProtocolError(op, "answer has no `items` array of records", body);
  }
  return body["items"] as JobRecord[];
}

/** An admin's or superuser's sign-in answer: its token. */
export function parseAuthToken(op: string, body: unknown): string {
  if (!isObject(body) || typeof body["token"] !== "string" || body["token"] === "") {
    throw new FleetProtocolError(op, "answer has no `token`", body);
  }
  return body["token"];
}

/** A worker's auth answer `{ token, record }` (sign-in or refresh): its token and its identity. */
export function parseWorkerAuth(op: string, body: unknown): { token: string; identity: WorkerIdentity } {
  const token = parseAuthToken(op, body);
  const record = (body as Record<string, unknown>)["record"];
  if (!isRecordLike(record) || record["id"] === "") throw new FleetProtocolError(op, "answer has no `record` with an `id`", body);
  return { token, identity: toWorkerIdentity(record) };
}

/** What identity() answers of a `fleet_workers` record (a `queues` that is not an array of names reads as none). */
function toWorkerIdentity(record: Record<string, any>): WorkerIdentity {
  const queues: unknown = record[WORKER_FIELDS.queues];
  const name: unknown = record[WORKER_FIELDS.name];
  return {
    id: record["id"] as string,
    name: typeof name === "string" ? name : "",
    queues: Array.isArray(queues) ? queues.filter((q): q is string => typeof q === "string") : [],
    canEnqueue: record[WORKER_FIELDS.canEnqueue] === true,
  };
}

/** A refused renew (or heartbeat item): its reason when the client knows it, else none. */
function renewRefused(body: Record<string, unknown>): { renewed: false; reason?: RenewRefusal } {
  const reason = body["reason"];
  return (RENEW_REFUSALS as readonly unknown[]).includes(reason) ? { renewed: false, reason: reason as RenewRefusal } : { renewed: false };
}


function isRecordLike(value: unknown): value is Record<string, any> {
  return isObject(value) && typeof value["id"] === "string";
}

function isJobView(value: unknown): value is JobView {
  return isObject(value) && typeof value["id"] === "string" && typeof value["status"] === "string";
}

function isEnqueuedJob(value: unknown): value is EnqueuedJob {
  return isObject(value) && typeof value["id"] === "string" && value["id"] !== "" &&
    typeof value["probeKey"] === "string" && typeof value["created"] === "boolean";
}

function isSweptJob(value: unknown): value is SweptJob {
  return isObject(value) && typeof value["id"] === "string" && typeof value["claimedBy"] === "string" &&
    typeof value["consecutiveOrphanCount"] === "number" &&
    typeof value["outcome"] === "string" && Object.hasOwn(SWEEP_OUTCOMES, value["outcome"]);
}
