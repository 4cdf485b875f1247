// GENERATED FILE - DO NOT EDIT. For PocketBase 0.22.x.
// Built by esbuild.config.mjs from src/handlers, src/adapter and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.

routerAdd("POST", "/api/fleet/claim", (__context) => {
return (globalThis["pbFleet POST /api/fleet/claim b65a2a4a89dd"] || (globalThis["pbFleet POST /api/fleet/claim b65a2a4a89dd"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function clampLeaseSeconds(raw) {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
var FLOW_ROW_SHAPE = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
var FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";
function flowRowsQuery(scopes) {
  const params = {};
  const terms = scopes.map((s, i) => {
    params[`s${i}`] = s.scope;
    params[`n${i}`] = s.name;
    return `(scope = {:s${i}} AND name = {:n${i}})`;
  });
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow WHERE ${terms.join(" OR ")}`, params };
}
function scopeTerm(s, params) {
  params["scopeName"] = s.name;
  if (s.scope === "group") return "group_key != '' AND group_key = {:scopeName}";
  return s.name === DEFAULT_QUEUE ? "queue IN ({:scopeName}, '')" : "queue = {:scopeName}";
}
function heldCountQuery(s, nowMs) {
  const params = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND ${statusInSql(HELD_STATUSES)} AND ${LIVE_LEASE_SQL}`,
    params
  };
}
var COUNT_SHAPE = { n: 0 };
function windowCountQuery(s, nowMs, periodSeconds) {
  return {
    sql: `SELECT COUNT(*) AS n FROM ${FLOW_CLAIMS_TABLE} WHERE scope = {:scope} AND name = {:name} AND at > {:since}`,
    params: { scope: s.scope, name: s.name, since: nowMs - periodSeconds * 1e3 }
  };
}
function recordWindowClaimsStatement(claims, nowMs) {
  return {
    sql: `INSERT INTO ${FLOW_CLAIMS_TABLE} (scope, name, at, expires) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), {:at}, {:at} + json_extract(value, '$[2]') * 1000 FROM json_each({:claims})`,
    params: { at: nowMs, claims: JSON.stringify(claims.map((c) => [c.scope.scope, c.scope.name, c.periodSeconds])) }
  };
}
function isParked(row, nowMs) {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}
function flowGate(batch, nowMs) {
  const states = {};
  const loadedIds = {};
  let withSettings = 0;
  const logged = [];
  const count = (query) => {
    var _a, _b;
    return (_b = (_a = batch.queryOne(query, COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : 0;
  };
  const stateOf = (s) => {
    const st = states[keyOf(s)];
    if (st === void 0) throw new Error(`pb-fleet: flow scope ${s.scope} ${s.name} was not loaded`);
    return st;
  };
  const load = (rows) => {
    var _a;
    const missing = [];
    const seen = {};
    for (const row of rows) {
      if (loadedIds[row.id]) continue;
      loadedIds[row.id] = true;
      for (const s of scopesOf(row)) {
        const key = keyOf(s);
        if (states[key] !== void 0 || seen[key]) continue;
        seen[key] = true;
        missing.push(s);
      }
    }
    if (missing.length === 0) return;
    const found = {};
    for (const row of batch.queryAll(flowRowsQuery(missing), FLOW_ROW_SHAPE)) found[keyOf({ scope: row.scope, name: row.name })] = row;
    for (const s of missing) {
      const row = (_a = found[keyOf(s)]) != null ? _a : null;
      const state = { row, held: 0, claims: 0 };
      if (row !== null) withSettings++;
      if (row !== null && row.concurrency > 0) state.held = count(heldCountQuery(s, nowMs));
      if (row !== null && row.rate_limit > 0) state.claims = count(windowCountQuery(s, nowMs, row.rate_period));
      states[keyOf(s)] = state;
    }
  };
  return {
    load,
    refusal(row) {
      load([row]);
      if (withSettings === 0) return null;
      const scopes = scopesOf(row);
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && (st.row.paused === 1 || isParked(st.row, nowMs))) return { reason: "paused", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.concurrency > 0 && st.held >= st.row.concurrency) return { reason: "concurrency_limit", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.rate_limit > 0 && st.claims >= st.row.rate_limit) return { reason: "rate_limit", scope: s };
      }
      return null;
    },
    claimed(row) {
      if (withSettings === 0) return;
      for (const s of scopesOf(row)) {
        const st = stateOf(s);
        if (st.row === null) continue;
        if (st.row.concurrency > 0) st.held++;
        if (st.row.rate_limit > 0) {
          st.claims++;
          logged.push({ scope: s, periodSeconds: st.row.rate_period });
        }
      }
    },
    flush() {
      if (logged.length === 0) return;
      batch.execute(recordWindowClaimsStatement(logged, nowMs));
      logged.length = 0;
    }
  };
}
function scopesOf(row) {
  var _a;
  const queue = { scope: "queue", name: storedQueueName(row.queue) };
  const group = (_a = row.group_key) != null ? _a : "";
  return group === "" ? [queue] : [queue, { scope: "group", name: group }];
}
function keyOf(s) {
  return `${s.scope}\0${s.name}`;
}
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}
function startByPassed(row, nowMs) {
  var _a;
  const startBy = (_a = row.start_by) != null ? _a : "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";

// src/lib/queue.ts
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isDue(row, nowMs) {
  return row.run_at <= formatPbDate(nowMs);
}
function isClaimable(row, nowMs) {
  return row.status === "pending" && isDue(row, nowMs) || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
var REFERENCE_STEAL = { kind: "reference" };
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2, stealRule = REFERENCE_STEAL, flow) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  if (steal && isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  if (startByPassed(row, nowMs)) return { kind: "refused", reason: "start_by_passed" };
  const held = flow === void 0 ? null : flow(row);
  if (held !== null) return { kind: "refused", reason: held };
  const claimedAt = formatPbDate(nowMs);
  const patch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds, deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: claimedAt })),
    lease_token: newLeaseToken2(),
    // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim, and a timeout's deadline from it.
    claimed_at: claimedAt,
    attempts: row.attempts + 1
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
var ORPHAN_CAP_REASON = "orphan_cap";
var GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
var GIVE_UP_AFTER = " times in a row without a release";
function giveUpPatch(row, nowMs) {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds, deadline) {
  const end = nowMs + clampLeaseSeconds(leaseSeconds) * 1e3;
  return formatPbDate(deadline === null ? end : Math.min(end, deadline));
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
var QUEUE_NOT_ALLOWED = { kind: "refused", reason: "queue_not_allowed" };
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function mayTakeQueue(caller, queue) {
  if (caller.kind === "admin" || caller.queues.length === 0) return true;
  return caller.queues.indexOf(storedQueueName(queue)) !== -1;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function newLeaseToken() {
  return $security.randomString(24);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/answers.ts
function claimAnswer(outcome) {
  var _a;
  if (outcome === null) return { claimed: false };
  const { row, decision } = outcome;
  if (decision.kind === "already_held") {
    return { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
  }
  if (decision.kind === "refused" && decision.reason !== void 0) return { claimed: false, reason: decision.reason };
  if (decision.kind !== "win") return { claimed: false };
  return { claimed: true, job: jobView(row, decision.patch), leaseToken: (_a = decision.patch.lease_token) != null ? _a : "" };
}
function claimPatch(decision) {
  return decision.kind === "win" || decision.kind === "give_up" || decision.kind === "timed_out" ? decision.patch : null;
}

// src/lib/claim-by-id.ts
function claimById(batch, req, nowMs, newLeaseToken2, mayTake) {
  const row = batch.find(jobByIdWhere(req.jobId), ["id ASC"], 1)[0];
  if (row === void 0) return null;
  const refused = mayTake(row.queue);
  if (refused !== null) return { row, decision: refused };
  const gate = flowGate(batch, nowMs);
  const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken2, void 0, (r) => {
    var _a, _b;
    return (_b = (_a = gate.refusal(r)) == null ? void 0 : _a.reason) != null ? _b : null;
  });
  if (decision.kind === "win") {
    gate.claimed(row);
    gate.flush();
  }
  const patch = claimPatch(decision);
  if (patch !== null) batch.write(row, patch);
  return { row, decision };
}

// src/lib/validate.ts
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

// src/handlers/claim.ts
function handleClaim(req) {
  const valid = validateClaimRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJobs((batch, now) => claimById(batch, valid.value, now, newLeaseToken, (queue) => mayTakeQueue(req.caller, queue) ? null : QUEUE_NOT_ALLOWED));
  return json(200, claimAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleClaim, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/renew", (__context) => {
return (globalThis["pbFleet POST /api/fleet/renew 75bd077c3d23"] || (globalThis["pbFleet POST /api/fleet/renew 75bd077c3d23"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function clampLeaseSeconds(raw) {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_LEASE_TOKEN_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_PROGRESS_BYTES = 4096;
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function jsonLongerThan(value, maxBytes) {
  const text = JSON.stringify(value);
  return text !== void 0 && utf8LongerThan(text, maxBytes);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isStaleToken(row, req) {
  return req.leaseToken !== void 0 && req.leaseToken !== row.lease_token;
}
function decideRenew(row, req, nowMs) {
  if (!isHeldStatus(row.status)) return REFUSED_RENEW;
  if (row.claimed_by !== req.workerId || isStaleToken(row, req)) return REFUSED_RENEW;
  if (isPastDeadline(row, nowMs)) return { kind: "refused", reason: "timed_out" };
  if (!isLeaseLive(row.lease_expires_at, nowMs)) return REFUSED_RENEW;
  const patch = {
    status: "running",
    lease_expires_at: leaseEnd(nowMs, req.leaseSeconds, deadlineMs(row)),
    version: row.version + 1
  };
  if (req.progress !== void 0) patch.progress = req.progress;
  return { kind: "renew", patch };
}
var REFUSED_RENEW = { kind: "refused" };
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function leaseEnd(nowMs, leaseSeconds, deadline) {
  const end = nowMs + clampLeaseSeconds(leaseSeconds) * 1e3;
  return formatPbDate(deadline === null ? end : Math.min(end, deadline));
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobIn(store, jobId, decide, patchOf) {
  return inTransaction(store, (tx) => {
    const found = store.find(tx, jobByIdWhere(jobId), ["id ASC"], 1)[0];
    if (found === void 0) return null;
    const row = store.rowOf(found);
    const decision = decide(row, Date.now());
    const patch = patchOf(decision);
    if (patch !== null) store.write(tx, found, patch);
    return { row, decision };
  });
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJob(jobId, decide, patchOf) {
  return updateJobIn(STORE, jobId, decide, patchOf);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/answers.ts
function renewAnswer(outcome) {
  if (outcome === null) return { renewed: false };
  const { row, decision } = outcome;
  if (decision.kind === "refused") return decision.reason === void 0 ? { renewed: false } : { renewed: false, reason: decision.reason };
  return { renewed: true, job: jobView(row, decision.patch) };
}
function renewPatch(decision) {
  return decision.kind === "renew" ? decision.patch : null;
}

// src/lib/validate.ts
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateRenewRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const lease = readLeaseToken(data);
  if (lease.error !== void 0) return fail(lease.error);
  const leaseToken = lease.token;
  const progress = absentIfNull(asBody(data)["progress"]);
  if (progress !== void 0 && jsonLongerThan(progress, MAX_PROGRESS_BYTES)) {
    return fail(`progress must be at most ${MAX_PROGRESS_BYTES} bytes as JSON`);
  }
  const { jobId, workerId, leaseSeconds } = ids.value;
  return { ok: true, value: { jobId, workerId, leaseSeconds, leaseToken, progress } };
}
function absentIfNull(value) {
  return value === null ? void 0 : value;
}
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return { token: void 0 };
  if (typeof token !== "string" || token === "") return { error: LEASE_TOKEN_ERROR };
  const tooLong = tooLongError("leaseToken", token, MAX_LEASE_TOKEN_BYTES);
  return tooLong === null ? { token } : { error: tooLong };
}

// src/handlers/renew.ts
function handleRenew(req) {
  const valid = validateRenewRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJob(valid.value.jobId, (row, now) => decideRenew(row, valid.value, now), renewPatch);
  return json(200, renewAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleRenew, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/release", (__context) => {
return (globalThis["pbFleet POST /api/fleet/release 6d428a5801db"] || (globalThis["pbFleet POST /api/fleet/release 6d428a5801db"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
function parkScopeOf(row) {
  var _a;
  const group = (_a = row.group_key) != null ? _a : "";
  return group === "" ? { scope: "queue", name: storedQueueName(row.queue) } : { scope: "group", name: group };
}
var NEW_ID_SQL = "substr(lower(hex(randomblob(8))), 1, 15)";
function parkStatement(s, untilMs, nowMs) {
  const until = formatPbDate(untilMs);
  return {
    sql: `INSERT INTO probe_flow (id, scope, name, parked_until, created, updated) VALUES (${NEW_ID_SQL}, {:scope}, {:name}, {:until}, {:stamp}, {:stamp}) ON CONFLICT (scope, name) DO UPDATE SET parked_until = MAX(COALESCE(parked_until, ''), excluded.parked_until), updated = excluded.updated`,
    params: { scope: s.scope, name: s.name, until, stamp: formatPbDate(nowMs) }
  };
}
function parkFor(batch, row, seconds, nowMs) {
  batch.execute(parkStatement(parkScopeOf(row), rateLimitedUntilMs(nowMs, seconds), nowMs));
}
function rateLimitedUntilMs(nowMs, seconds) {
  return nowMs + Math.round(seconds * 1e3);
}
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var MAX_RATE_LIMITED_FOR_SECONDS = 86400;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";

// src/lib/queue.ts
var MAX_RESULT_BYTES = 1048576;
var MAX_ERROR_BYTES = 65536;
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_LEASE_TOKEN_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function jsonLongerThan(value, maxBytes) {
  const text = JSON.stringify(value);
  return text !== void 0 && utf8LongerThan(text, maxBytes);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isTerminalStatus(status) {
  return inStatusClass(TERMINAL_STATUSES, status);
}
function isStaleToken(row, req) {
  return req.leaseToken !== void 0 && req.leaseToken !== row.lease_token;
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function decideRelease(row, req, nowMs) {
  if (!isHeldStatus(row.status)) {
    if (isTerminalStatus(row.status) && row.status !== "cancelled" && row.claimed_by === req.workerId) {
      return refused(isStaleToken(row, req) ? "refused_stale_token" : "refused_terminal_same_holder");
    }
    return refused("refused_not_holder");
  }
  if (row.claimed_by !== req.workerId) return refused("refused_not_holder");
  if (isStaleToken(row, req)) return refused("refused_stale_token");
  const live = isLeaseLive(row.lease_expires_at, nowMs);
  if (req.target === "pending") {
    if (live) return refused("refused_lease_live");
    const patch = isPastDeadline(row, nowMs) ? timeoutPatch(row, nowMs) : requeuePatch(row, nowMs);
    return { kind: "release", patch: withOutcome(patch, req) };
  }
  if (!live) return refused("refused_not_holder");
  if (req.target === "retry" && req.rateLimitedFor !== void 0) {
    return { kind: "release", patch: withOutcome(rateLimitedPatch(row, nowMs, req.rateLimitedFor), req), park: req.rateLimitedFor };
  }
  if (req.target === "retry") return { kind: "release", patch: withOutcome(retryPatch(row, nowMs, req), req) };
  return {
    kind: "release",
    patch: withOutcome({
      status: req.target,
      finished_at: formatPbDate(nowMs),
      // A finished job starts any later orphaning with a fresh budget.
      consecutive_orphan_count: 0,
      version: row.version + 1
    }, req)
  };
}
function withOutcome(patch, req) {
  if (req.result !== void 0) patch.result = req.result;
  if (req.error !== void 0) patch.last_error = req.error;
  return patch;
}
function retryPatch(row, nowMs, req) {
  var _a;
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return deadLetterPatch(row, nowMs, req.error !== void 0 ? req.error : MAX_ATTEMPTS_ERROR);
  }
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, (_a = req.jitter) != null ? _a : 0)));
  patch.consecutive_orphan_count = 0;
  return patch;
}
function rateLimitedPatch(row, nowMs, seconds) {
  var _a;
  const patch = backToPendingPatch(row, formatPbDate(rateLimitedUntilMs(nowMs, seconds)));
  patch.attempts = Math.max(0, row.attempts - 1);
  patch.consecutive_orphan_count = 0;
  if (((_a = row.start_by) != null ? _a : "") !== "") patch.start_by = "";
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
function requeuePatch(row, nowMs) {
  return {
    status: "pending",
    claimed_by: "",
    lease_token: "",
    // The expired lease stays as the row's "last in flight" marker.
    reclaim_count: row.reclaim_count + 1,
    consecutive_orphan_count: row.consecutive_orphan_count + 1,
    requeued_at: formatPbDate(nowMs),
    version: row.version + 1
  };
}
function refused(reason) {
  return { kind: "refused", reason };
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var RELEASE_TARGETS = ["done", "failed", "pending", "retry"];
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/answers.ts
function releaseAnswer(outcome) {
  if (outcome === null) return { released: false, reason: "refused_not_holder" };
  const { row, decision } = outcome;
  return decision.kind === "refused" ? { released: false, reason: decision.reason } : { released: true, job: jobView(row, decision.patch) };
}
function releasePatch(decision) {
  return decision.kind === "release" ? decision.patch : null;
}

// src/lib/release-by-id.ts
function releaseById(batch, jobId, release, nowMs) {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  if (row === void 0) return null;
  const decision = decideRelease(row, release, nowMs);
  const patch = releasePatch(decision);
  if (patch !== null) batch.write(row, patch);
  if (decision.kind === "release" && decision.park !== void 0) parkFor(batch, row, decision.park, nowMs);
  return { row, decision };
}

// src/lib/validate.ts
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateReleaseRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return fail("status is required (done|failed|pending)");
  if (!isReleaseTarget(target)) return fail("status must be done|failed|pending");
  const lease = readLeaseToken(data);
  if (lease.error !== void 0) return fail(lease.error);
  const leaseToken = lease.token;
  const result = absentIfNull(asBody(data)["result"]);
  if (result !== void 0 && jsonLongerThan(result, MAX_RESULT_BYTES)) {
    return fail(`result must be at most ${MAX_RESULT_BYTES} bytes as JSON`);
  }
  const error = absentIfNull(asBody(data)["error"]);
  if (error !== void 0 && typeof error !== "string") return fail("error must be a string when given");
  if (error !== void 0 && utf8LongerThan(error, MAX_ERROR_BYTES)) {
    return fail(`error must be at most ${MAX_ERROR_BYTES} bytes`);
  }
  const rateLimitedFor = absentIfNull(asBody(data)["rateLimitedFor"]);
  if (rateLimitedFor !== void 0) {
    if (target !== "retry") return fail("rateLimitedFor is only for status retry");
    if (typeof rateLimitedFor !== "number" || !(rateLimitedFor >= 1) || rateLimitedFor > MAX_RATE_LIMITED_FOR_SECONDS) {
      return fail(`rateLimitedFor must be a number from 1 to ${MAX_RATE_LIMITED_FOR_SECONDS}`);
    }
  }
  return {
    ok: true,
    value: {
      jobId: ids.value.jobId,
      workerId: ids.value.workerId,
      target,
      leaseToken,
      result,
      error,
      rateLimitedFor
    }
  };
}
function absentIfNull(value) {
  return value === null ? void 0 : value;
}
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return { token: void 0 };
  if (typeof token !== "string" || token === "") return { error: LEASE_TOKEN_ERROR };
  const tooLong = tooLongError("leaseToken", token, MAX_LEASE_TOKEN_BYTES);
  return tooLong === null ? { token } : { error: tooLong };
}
function isReleaseTarget(value) {
  return RELEASE_TARGETS.indexOf(value) !== -1;
}

// src/handlers/release.ts
function handleRelease(req) {
  const valid = validateReleaseRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const { jobId, workerId, target, leaseToken, result, error, rateLimitedFor } = valid.value;
  const refused2 = workerIdRefusal(req.caller, workerId);
  if (refused2 !== null) return json(403, { error: refused2 });
  const release = { workerId, target, leaseToken, result, error, jitter: Math.random(), rateLimitedFor };
  const outcome = updateJobs((batch, now) => releaseById(batch, jobId, release, now));
  return json(200, releaseAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleRelease, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/claim-next", (__context) => {
return (globalThis["pbFleet POST /api/fleet/claim-next 815fd624edec"] || (globalThis["pbFleet POST /api/fleet/claim-next 815fd624edec"] = (() => {
var __defProp = Object.defineProperty;
var __defProps = Object.defineProperties;
var __getOwnPropDescs = Object.getOwnPropertyDescriptors;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};
var __spreadProps = (a, b) => __defProps(a, __getOwnPropDescs(b));

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function clampLeaseSeconds(raw) {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;
function pbDateMsSql(column) {
  return `(CASE WHEN ${column} GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(${column}, 1, 19), '+0 seconds') = substr(${column}, 1, 19) THEN CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER) * 1000 + CAST(substr(${column}, 21, 3) AS INTEGER) END)`;
}
function formatPbDateSql(ms) {
  return `(strftime('%Y-%m-%d %H:%M:%f', CAST(${ms} AS INTEGER) / 1000.0, 'unixepoch') || 'Z')`;
}

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_COLLECTION = "probe_flow";
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
var FLOW_ROW_SHAPE = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
var FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";
function flowRowsQuery(scopes) {
  const params = {};
  const terms = scopes.map((s, i) => {
    params[`s${i}`] = s.scope;
    params[`n${i}`] = s.name;
    return `(scope = {:s${i}} AND name = {:n${i}})`;
  });
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow WHERE ${terms.join(" OR ")}`, params };
}
function heldBackScopesQuery(nowMs, limit) {
  const held = (match) => `(SELECT COUNT(*) FROM probe_jobs j WHERE ${match} AND ${statusInSql(HELD_STATUSES, "j.status")} AND ${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "j.lease_expires_at")})`;
  const groupHeld = held("j.group_key != '' AND j.group_key = f.name");
  const queueHeld = held("j.queue IN (f.name, CASE WHEN f.name = {:defaultQueue} THEN '' ELSE f.name END)");
  const inWindow = `(SELECT COUNT(*) FROM ${FLOW_CLAIMS_TABLE} c WHERE c.scope = f.scope AND c.name = f.name AND c.at > {:nowMs} - f.rate_period * 1000)`;
  const part = (where) => `SELECT scope, name FROM (SELECT f.scope, f.name FROM probe_flow f WHERE ${where} LIMIT {:limit})`;
  return {
    sql: [
      part("f.paused = 1"),
      part("f.parked_until != '' AND f.parked_until > {:now}"),
      part(`f.scope = 'group' AND f.concurrency > 0 AND ${groupHeld} >= f.concurrency`),
      part(`f.scope = 'queue' AND f.concurrency > 0 AND ${queueHeld} >= f.concurrency`),
      part(`f.rate_limit > 0 AND ${inWindow} >= f.rate_limit`)
    ].join(" UNION "),
    params: { now: formatPbDate(nowMs), nowMs, limit, defaultQueue: DEFAULT_QUEUE }
  };
}
var SCOPE_SHAPE = { scope: "", name: "" };
var HELD_BACK_SCOPES_LIMIT = 5e3;
function scopeTerm(s, params) {
  params["scopeName"] = s.name;
  if (s.scope === "group") return "group_key != '' AND group_key = {:scopeName}";
  return s.name === DEFAULT_QUEUE ? "queue IN ({:scopeName}, '')" : "queue = {:scopeName}";
}
function heldCountQuery(s, nowMs) {
  const params = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND ${statusInSql(HELD_STATUSES)} AND ${LIVE_LEASE_SQL}`,
    params
  };
}
var COUNT_SHAPE = { n: 0 };
var STARTABLE_SQL = "(COALESCE(start_by, '') = '' OR attempts > 0 OR start_by > {:now})";
function windowCountQuery(s, nowMs, periodSeconds) {
  return {
    sql: `SELECT COUNT(*) AS n FROM ${FLOW_CLAIMS_TABLE} WHERE scope = {:scope} AND name = {:name} AND at > {:since}`,
    params: { scope: s.scope, name: s.name, since: nowMs - periodSeconds * 1e3 }
  };
}
function recordWindowClaimsStatement(claims, nowMs) {
  return {
    sql: `INSERT INTO ${FLOW_CLAIMS_TABLE} (scope, name, at, expires) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), {:at}, {:at} + json_extract(value, '$[2]') * 1000 FROM json_each({:claims})`,
    params: { at: nowMs, claims: JSON.stringify(claims.map((c) => [c.scope.scope, c.scope.name, c.periodSeconds])) }
  };
}
function isParked(row, nowMs) {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}
function flowGate(batch, nowMs) {
  const states = {};
  const loadedIds = {};
  let withSettings = 0;
  const logged = [];
  const count = (query) => {
    var _a, _b;
    return (_b = (_a = batch.queryOne(query, COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : 0;
  };
  const stateOf = (s) => {
    const st = states[keyOf(s)];
    if (st === void 0) throw new Error(`pb-fleet: flow scope ${s.scope} ${s.name} was not loaded`);
    return st;
  };
  const load = (rows) => {
    var _a;
    const missing = [];
    const seen = {};
    for (const row of rows) {
      if (loadedIds[row.id]) continue;
      loadedIds[row.id] = true;
      for (const s of scopesOf(row)) {
        const key = keyOf(s);
        if (states[key] !== void 0 || seen[key]) continue;
        seen[key] = true;
        missing.push(s);
      }
    }
    if (missing.length === 0) return;
    const found = {};
    for (const row of batch.queryAll(flowRowsQuery(missing), FLOW_ROW_SHAPE)) found[keyOf({ scope: row.scope, name: row.name })] = row;
    for (const s of missing) {
      const row = (_a = found[keyOf(s)]) != null ? _a : null;
      const state = { row, held: 0, claims: 0 };
      if (row !== null) withSettings++;
      if (row !== null && row.concurrency > 0) state.held = count(heldCountQuery(s, nowMs));
      if (row !== null && row.rate_limit > 0) state.claims = count(windowCountQuery(s, nowMs, row.rate_period));
      states[keyOf(s)] = state;
    }
  };
  return {
    load,
    refusal(row) {
      load([row]);
      if (withSettings === 0) return null;
      const scopes = scopesOf(row);
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && (st.row.paused === 1 || isParked(st.row, nowMs))) return { reason: "paused", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.concurrency > 0 && st.held >= st.row.concurrency) return { reason: "concurrency_limit", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.rate_limit > 0 && st.claims >= st.row.rate_limit) return { reason: "rate_limit", scope: s };
      }
      return null;
    },
    claimed(row) {
      if (withSettings === 0) return;
      for (const s of scopesOf(row)) {
        const st = stateOf(s);
        if (st.row === null) continue;
        if (st.row.concurrency > 0) st.held++;
        if (st.row.rate_limit > 0) {
          st.claims++;
          logged.push({ scope: s, periodSeconds: st.row.rate_period });
        }
      }
    },
    flush() {
      if (logged.length === 0) return;
      batch.execute(recordWindowClaimsStatement(logged, nowMs));
      logged.length = 0;
    }
  };
}
function scopesOf(row) {
  var _a;
  const queue = { scope: "queue", name: storedQueueName(row.queue) };
  const group = (_a = row.group_key) != null ? _a : "";
  return group === "" ? [queue] : [queue, { scope: "group", name: group }];
}
function keyOf(s) {
  return `${s.scope}\0${s.name}`;
}
function nextQueueQuery(after) {
  return after === null ? { sql: "SELECT queue AS name FROM probe_jobs ORDER BY queue LIMIT 1", params: {} } : { sql: "SELECT queue AS name FROM probe_jobs WHERE queue > {:after} ORDER BY queue LIMIT 1", params: { after } };
}
var NAME_SHAPE = { name: "" };
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}
function startByPassed(row, nowMs) {
  var _a;
  const startBy = (_a = row.start_by) != null ? _a : "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";
function timedOutErrorSql(timeoutSeconds) {
  return `('${TIMED_OUT_BEFORE}' || (${timeoutSeconds}) || '${TIMED_OUT_AFTER}')`;
}

// src/lib/queue.ts
var MAX_WORKER_ID_BYTES = 256;
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function retryBackoffSql(attempts, jitter) {
  const exponent = `MAX(0, MIN((${attempts}) - 1, ${BACKOFF_MAX_EXPONENT}))`;
  const delay = `${BACKOFF_BASE_MS} * (1 << ${exponent}) * (1 + ${BACKOFF_JITTER} * MIN(MAX(${jitter}, 0), 1))`;
  return `MAX(${BACKOFF_BASE_MS}, MIN(${BACKOFF_CAP_MS}, ${delay}))`;
}
function hasAttemptsLeftSql(attempts, maxAttempts) {
  return `((${maxAttempts}) <= 0 OR (${attempts}) < (${maxAttempts}))`;
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isDue(row, nowMs) {
  return row.run_at <= formatPbDate(nowMs);
}
function isClaimable(row, nowMs) {
  return row.status === "pending" && isDue(row, nowMs) || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
var REFERENCE_STEAL = { kind: "reference" };
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2, stealRule = REFERENCE_STEAL, flow) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  if (steal && isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  if (startByPassed(row, nowMs)) return { kind: "refused", reason: "start_by_passed" };
  const held = flow === void 0 ? null : flow(row);
  if (held !== null) return { kind: "refused", reason: held };
  const claimedAt = formatPbDate(nowMs);
  const patch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds, deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: claimedAt })),
    lease_token: newLeaseToken2(),
    // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim, and a timeout's deadline from it.
    claimed_at: claimedAt,
    attempts: row.attempts + 1
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
var ORPHAN_CAP_REASON = "orphan_cap";
var GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
var GIVE_UP_AFTER = " times in a row without a release";
function giveUpErrorSql(orphanCount) {
  return `('${GIVE_UP_BEFORE}' || ((${orphanCount}) + 1) || '${GIVE_UP_AFTER}')`;
}
function giveUpPatch(row, nowMs) {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds, deadline) {
  const end = nowMs + clampLeaseSeconds(leaseSeconds) * 1e3;
  return formatPbDate(deadline === null ? end : Math.min(end, deadline));
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function mayTakeQueue(caller, queue) {
  if (caller.kind === "admin" || caller.queues.length === 0) return true;
  return caller.queues.indexOf(storedQueueName(queue)) !== -1;
}
function claimQueues(caller, asked) {
  if (caller.kind === "admin" || caller.queues.length === 0) return { queues: asked };
  if (asked === null) return { queues: caller.queues };
  for (const queue of asked) if (!mayTakeQueue(caller, queue)) return { refusal: queueRefusal(queue) };
  return { queues: asked };
}
function queueRefusal(queue) {
  return `queue ${queue} is not among this worker identity's queues (nothing was written)`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}
function queueJobView(row, patch) {
  var _a, _b, _c, _d, _e, _f, _g, _h;
  const p = patch != null ? patch : {};
  const view = jobView(row, patch);
  view.payload = parseJsonField(row.payload);
  view.priority = row.priority;
  view.run_at = (_a = p.run_at) != null ? _a : row.run_at;
  view.attempts = (_b = p.attempts) != null ? _b : row.attempts;
  view.max_attempts = row.max_attempts;
  view.last_error = (_c = p.last_error) != null ? _c : row.last_error;
  view.dead_lettered_at = (_d = p.dead_lettered_at) != null ? _d : row.dead_lettered_at;
  view.unique_key = row.unique_key;
  view.queue = storedQueueName(row.queue);
  view.progress = p.progress !== void 0 ? p.progress : parseJsonField(row.progress);
  view.group_key = (_e = row.group_key) != null ? _e : "";
  view.timeout_seconds = (_f = row.timeout_seconds) != null ? _f : 0;
  const deadline = isHeldStatus((_g = p.status) != null ? _g : row.status) ? deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: (_h = p.claimed_at) != null ? _h : row.claimed_at }) : null;
  view.deadline = deadline === null ? null : formatPbDate(deadline);
  return view;
}

// src/adapter/runtime.ts
function newLeaseToken() {
  return $security.randomString(24);
}
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
function pendingDueWhere(priority, nowMs, probeKeyPrefix, use = "filter", queue, held = NONE_HELD) {
  const params = { priority, now: formatPbDate(nowMs) };
  return withPrefix(
    `${queueTerm(queue, params)}status = 'pending' AND ${levelTerms(use, "priority = {:priority} AND run_at <= {:now}")} AND ${STARTABLE_SQL}${heldBackTerms(held, params)}`,
    params,
    probeKeyPrefix,
    use
  );
}
function pendingGroupsCte(params, queue, groupLimit) {
  params["groupQueue"] = queue;
  params["groupLimit"] = groupLimit;
  const next = "SELECT group_key FROM probe_jobs WHERE status = 'pending' AND queue = {:groupQueue}";
  return `WITH RECURSIVE grp(k) AS (SELECT (${next} ORDER BY group_key LIMIT 1) UNION ALL SELECT (${next} AND group_key > grp.k ORDER BY group_key LIMIT 1) FROM grp WHERE grp.k IS NOT NULL LIMIT {:groupLimit})`;
}
function pendingGroupCountQuery(queue, limit) {
  const params = {};
  return { sql: `${pendingGroupsCte(params, queue, limit + 1)} SELECT COUNT(*) AS n FROM grp WHERE k IS NOT NULL`, params };
}
var MAX_GROUP_WALK = 4096;
function pendingDueByGroupWhere(priority, nowMs, probeKeyPrefix, queue, heldGroups, want) {
  const params = { priority, now: formatPbDate(nowMs), groupWant: want };
  const held = heldGroups.map((group, i) => {
    params[`heldGroup${i}`] = group;
    return `{:heldGroup${i}}`;
  });
  const inGroup = withPrefix(
    `status = 'pending' AND queue = {:groupQueue} AND group_key = grp.k AND priority = {:priority} AND run_at <= {:now} AND ${STARTABLE_SQL}`,
    params,
    probeKeyPrefix,
    "filter"
  );
  const cte = pendingGroupsCte(params, queue, MAX_GROUP_WALK + 1);
  return {
    sql: `id IN (${cte} SELECT r.id FROM grp, probe_jobs r WHERE grp.k IS NOT NULL AND grp.k NOT IN (${held.join(", ")}) AND r.id IN (SELECT id FROM probe_jobs WHERE ${inGroup.sql} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:groupWant}))`,
    params: inGroup.params
  };
}
var NONE_HELD = { queues: [], groups: [] };
function heldBackTerms(held, params) {
  let terms = "";
  if (held.queues.length > 0) {
    const names = storedQueueValues(held.queues).map((queue, i) => {
      params[`heldQueue${i}`] = queue;
      return `{:heldQueue${i}}`;
    });
    terms += ` AND queue NOT IN (${names.join(", ")})`;
  }
  if (held.groups.length > 0) {
    const names = held.groups.map((group, i) => {
      params[`heldGroup${i}`] = group;
      return `{:heldGroup${i}}`;
    });
    terms += ` AND group_key NOT IN (${names.join(", ")})`;
  }
  return terms;
}
function queueTerm(queue, params) {
  if (queue === void 0) return "";
  params["queue"] = queue;
  return "queue = {:queue} AND ";
}
function storedQueueValues(queues) {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}
function levelTerms(use, terms) {
  return use === "range" ? terms.replace(/\b(priority|run_at) /g, "+$1 ") : terms;
}
function familyProbeQuery(probeKeyPrefix) {
  const family = withPrefix("status = 'pending'", {}, probeKeyPrefix);
  return {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM probe_jobs WHERE ${family.sql} LIMIT ${FAMILY_PROBE_LIMIT})`,
    params: family.params
  };
}
var FAMILY_PROBE_LIMIT = 5e3;
var FAMILY_PROBE_SHAPE = { n: 0 };
var PRIORITY_LEVEL_SHAPE = { found: 0, priority: 0 };
function topPriorityQuery(probeKeyPrefix, below, use = "filter", queue) {
  const params = below === void 0 ? {} : { below };
  const pending = `${queueTerm(queue, params)}status = 'pending'`;
  const where = below === void 0 ? withPrefix(pending, params, probeKeyPrefix, use) : withPrefix(`${pending} AND ${levelTerms(use, "priority < {:below}")}`, params, probeKeyPrefix, use);
  return {
    sql: `SELECT MAX(priority) IS NOT NULL AS found, COALESCE(MAX(priority), 0) AS priority FROM probe_jobs WHERE ${where.sql}`,
    params: where.params
  };
}
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix, queues = null, held = NONE_HELD) {
  const params = { now: formatPbDate(nowMs) };
  if (queues === null) return withPrefix(`${EXPIRED_LEASE_SQL}${heldBackTerms(held, params)}`, params, probeKeyPrefix);
  const names = storedQueueValues(queues).map((queue, i) => {
    params[`queue${i}`] = queue;
    return `{:queue${i}}`;
  });
  return withPrefix(`${EXPIRED_LEASE_SQL} AND queue IN (${names.join(", ")})${heldBackTerms(held, params)}`, params, probeKeyPrefix);
}
function compareClaimOrder(a, b) {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.run_at !== b.run_at) return a.run_at < b.run_at ? -1 : 1;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  if (a.enqueue_index !== b.enqueue_index) return a.enqueue_index - b.enqueue_index;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
function firstInClaimOrder(candidates, limit) {
  return candidates.slice().sort(compareClaimOrder).slice(0, limit);
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/batch-plans.ts
var JITTER_STEPS = 1048576;
var HELD = statusListSql(HELD_STATUSES);
var ROW_COLUMNS = [
  "r.id AS r_id",
  ...["status", "claimed_by", "lease_token", "probe_key", "queue", "group_key", "start_by", "claimed_at"].map((c) => `COALESCE(r.${c}, '') AS r_${c}`),
  ...["version", "reclaim_count", "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds"].map((c) => `COALESCE(r.${c}, 0) AS r_${c}`),
  LEASE_AS_JUDGED_SQL.replace(/lease_expires_at/g, "r.lease_expires_at").replace(/ AS r\.lease_expires_at$/, " AS r_lease_text"),
  `${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "r.lease_expires_at")} AS r_live`,
  `(CASE WHEN COALESCE(r.timeout_seconds, 0) > 0 THEN ${pbDateMsSql("COALESCE(r.claimed_at, '')")} + r.timeout_seconds * 1000 END) AS r_deadline_ms`
];
var STALE_TOKEN = "(i_tok IS NOT NULL AND i_tok != r_lease_token)";
var PAST_DEADLINE = "COALESCE({:nowMs} >= r_deadline_ms, 0)";
var ATTEMPTS_LEFT = hasAttemptsLeftSql("r_attempts", "r_max_attempts");
function newValue(rule, current) {
  const cases = rule.map(([kinds, value]) => `WHEN kind IN (${kinds.map((k) => `'${k}'`).join(", ")}) THEN ${value}`);
  return `(CASE ${cases.join(" ")} ELSE ${current} END)`;
}
var WRITTEN_VIEW = `json_object('id', id, 'probe_key', COALESCE(probe_key, ''), 'status', COALESCE(status, ''), 'claimed_by', COALESCE(claimed_by, ''), 'lease_expires_at', ${LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "")}, 'version', COALESCE(version, 0))`;
var quoted = (kinds) => kinds.map((k) => `'${k}'`).join(", ");
var RENEW = {
  // id, worker, token (absent: none sent), progress as JSON text (absent: none), the lease's end (text, and ms).
  items: ["id", "w", "tok", "p", "e", "em"],
  kind: `CASE WHEN r_id IS NULL OR r_status NOT IN ${HELD} THEN 'refused' WHEN r_claimed_by != i_w OR ${STALE_TOKEN} THEN 'refused' WHEN ${PAST_DEADLINE} THEN 'timed_out' WHEN NOT r_live THEN 'refused' ELSE 'renew' END`,
  writes: ["renew"],
  columns: {
    status: [[["renew"], "'running'"]],
    // Never past the attempt's deadline (leaseEnd).
    lease_expires_at: [[["renew"], `(CASE WHEN r_deadline_ms IS NOT NULL AND r_deadline_ms < i_em THEN ${formatPbDateSql("r_deadline_ms")} ELSE i_e END)`]],
    version: [[["renew"], "r_version + 1"]],
    progress: [[["renew"], "COALESCE(i_p, probe_jobs.progress)"]]
  },
  answer: (view) => `CASE kind WHEN 'renew' THEN json_object('jobId', i_id, 'renewed', json('true'), 'job', ${view}) WHEN 'timed_out' THEN json_object('jobId', i_id, 'renewed', json('false'), 'reason', 'timed_out') ELSE json_object('jobId', i_id, 'renewed', json('false')) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'renewed', json('true'), 'job', ${view})`
};
var BACK_TO_PENDING = ["timeout_retry", "retry", "rate_limited"];
var DEAD_LETTER = ["timeout_dead", "dead"];
var RELEASES = ["finish", "requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var NOT_FINISH = ["requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var RELEASE = {
  // id, worker, target, token, result as JSON text, error, the jitter step, rateLimitedFor's due time (absent: none).
  items: ["id", "w", "t", "tok", "res", "err", "j", "ra"],
  kind: `CASE WHEN r_id IS NULL THEN 'refused_not_holder' WHEN r_status NOT IN ${HELD} THEN (CASE WHEN ${statusInSql(COMPLETED_STATUSES, "r_status")} AND r_claimed_by = i_w THEN (CASE WHEN ${STALE_TOKEN} THEN 'refused_stale_token' ELSE 'refused_terminal_same_holder' END) ELSE 'refused_not_holder' END) WHEN r_claimed_by != i_w THEN 'refused_not_holder' WHEN ${STALE_TOKEN} THEN 'refused_stale_token' WHEN i_t = 'pending' THEN (CASE WHEN r_live THEN 'refused_lease_live' WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) ELSE 'requeue' END) WHEN NOT r_live THEN 'refused_not_holder' WHEN i_t = 'retry' AND i_ra IS NOT NULL THEN 'rate_limited' WHEN i_t = 'retry' THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'retry' ELSE 'dead' END) ELSE 'finish' END`,
  writes: RELEASES,
  columns: {
    status: [[["finish"], "i_t"], [BACK_TO_PENDING, "'pending'"], [["requeue"], "'pending'"], [DEAD_LETTER, "'failed'"]],
    claimed_by: [[NOT_FINISH, "''"]],
    lease_token: [[NOT_FINISH, "''"]],
    lease_expires_at: [[BACK_TO_PENDING, "''"]],
    progress: [[BACK_TO_PENDING, "'null'"]],
    run_at: [
      [["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)],
      [["retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", `i_j / ${JITTER_STEPS}.0`)}`)],
      [["rate_limited"], "i_ra"]
    ],
    version: [[RELEASES, "r_version + 1"]],
    finished_at: [[["finish", ...DEAD_LETTER], "{:now}"]],
    consecutive_orphan_count: [[["finish", "retry", "rate_limited"], "0"], [["requeue"], "r_consecutive_orphan_count + 1"]],
    reclaim_count: [[["requeue"], "r_reclaim_count + 1"]],
    requeued_at: [[["requeue"], "{:now}"]],
    dead_lettered_at: [[DEAD_LETTER, "{:now}"]],
    // A release's own error wins (withOutcome), then the rule's.
    last_error: [
      [RELEASES, `(CASE WHEN i_err IS NOT NULL THEN i_err WHEN kind IN ('timeout_retry', 'timeout_dead') THEN ${timedOutErrorSql("r_timeout_seconds")} WHEN kind = 'dead' THEN '${MAX_ATTEMPTS_ERROR}' ELSE probe_jobs.last_error END)`]
    ],
    result: [[RELEASES, "COALESCE(i_res, probe_jobs.result)"]],
    attempts: [[["rate_limited"], "MAX(0, r_attempts - 1)"]],
    // Only where one is set (rateLimitedPatch): a NULL stays NULL.
    start_by: [[["rate_limited"], "(CASE WHEN r_start_by != '' THEN '' ELSE probe_jobs.start_by END)"]]
  },
  answer: (view) => `CASE WHEN kind IN (${quoted(RELEASES)}) THEN json_object('jobId', i_id, 'released', json('true'), 'job', ${view}) ELSE json_object('jobId', i_id, 'released', json('false'), 'reason', kind) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'released', json('true'), 'job', ${view})`
};

// src/lib/claim-next.ts
var CLAIM_NEXT_ROUNDS = 4;
var MAX_PASSES = 64;
var MAX_CANDIDATES = 500;
var MAX_HELD_GROUPS = 12e3;
function claimNext(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  const claimed = [];
  const stealRule = { kind: "count_orphans", cap: orphanCap2 };
  const gate = flowGate(batch, nowMs);
  const held = { queues: [], groups: [] };
  const isHeld = {};
  const holdBack = (s) => {
    const key = `${s.scope}\0${s.name}`;
    if (isHeld[key]) return;
    isHeld[key] = true;
    (s.scope === "queue" ? held.queues : held.groups).push(s.name);
  };
  for (const s of batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE)) holdBack(s);
  const heldFromStart = held.queues.length + held.groups.length;
  let queues = req.queues === null && heldFromStart > 0 ? otherQueues(batch, held.queues) : req.queues;
  if (queues !== null) queues = queues.filter((q) => held.queues.indexOf(q) === -1);
  let rounds = 0;
  for (let pass = 0; rounds < CLAIM_NEXT_ROUNDS && pass < MAX_PASSES && claimed.length < req.limit; pass++) {
    if (queues !== null && queues.length === 0) break;
    const heldDuringCall = held.queues.length + held.groups.length - heldFromStart;
    const want = pass === 0 ? req.limit : Math.min(MAX_CANDIDATES, req.limit - claimed.length + heldDuringCall);
    const except = queues === null ? held : { queues: [], groups: held.groups };
    const candidates = firstInClaimOrder(
      duePendingOf(batch, nowMs, req.probeKeyPrefix, want, queues, except).concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix, queues, except), CLAIM_ORDER, want)),
      want
    );
    gate.load(candidates);
    let gaveUp = false;
    let heldBack = false;
    for (const row of candidates) {
      if (claimed.length >= req.limit) break;
      const heldBy = { scope: null };
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken2, stealRule, (r) => {
        const refusal = gate.refusal(r);
        heldBy.scope = refusal === null ? null : refusal.scope;
        return refusal === null ? null : refusal.reason;
      });
      if (decision.kind === "win") {
        batch.write(row, decision.patch);
        gate.claimed(row);
        claimed.push({ row, patch: decision.patch });
      } else if (decision.kind === "give_up" || decision.kind === "timed_out") {
        batch.write(row, decision.patch);
        gaveUp = true;
      } else if (heldBy.scope !== null) {
        const scope = heldBy.scope;
        holdBack(scope);
        if (held.groups.length > MAX_HELD_GROUPS) break;
        if (scope.scope === "queue") queues = queues === null ? otherQueues(batch, held.queues) : queues.filter((q) => q !== scope.name);
        else if (queues === null) queues = otherQueues(batch, held.queues);
        heldBack = true;
      }
    }
    if (held.groups.length > MAX_HELD_GROUPS) break;
    if (gaveUp) rounds++;
    else if (!heldBack) break;
  }
  gate.flush();
  return claimed;
}
function heldBackQueues(batch, nowMs) {
  const scopes = batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE);
  if (scopes.length >= HELD_BACK_SCOPES_LIMIT) return null;
  return scopes.filter((s) => s.scope === "queue").map((s) => s.name);
}
function claimQueuesBesides(batch, queues, heldQueues) {
  if (heldQueues === null) return null;
  if (queues !== null) return queues.filter((q) => heldQueues.indexOf(q) === -1);
  return heldQueues.length === 0 ? null : otherQueues(batch, heldQueues);
}
function otherQueues(batch, heldQueues) {
  const names = [];
  let after = null;
  for (let i = 0; i <= MAX_CLAIM_QUEUES + heldQueues.length + 1; i++) {
    const next = batch.queryOne(nextQueueQuery(after), NAME_SHAPE);
    if (next === null) return names;
    after = next.name;
    const name = storedQueueName(next.name);
    if (heldQueues.indexOf(name) === -1 && names.indexOf(name) === -1) names.push(name);
    if (names.length > MAX_CLAIM_QUEUES) return null;
  }
  return null;
}
function duePendingOf(batch, nowMs, probeKeyPrefix, want, queues, except) {
  var _a, _b;
  if (queues === null) return duePending(batch, nowMs, probeKeyPrefix, want, void 0, except);
  const rows = [];
  for (const queue of storedQueueValues(queues)) {
    const byGroup = except.groups.length > 0 && ((_b = (_a = batch.queryOne(pendingGroupCountQuery(queue, MAX_GROUP_WALK), COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : MAX_GROUP_WALK + 1) <= MAX_GROUP_WALK;
    const found = byGroup ? duePending(batch, nowMs, probeKeyPrefix, want, queue, except, (priority) => pendingDueByGroupWhere(priority, nowMs, probeKeyPrefix, queue, except.groups, want)) : duePending(batch, nowMs, probeKeyPrefix, want, queue, except);
    for (const row of found) rows.push(row);
  }
  return rows;
}
function duePending(batch, nowMs, probeKeyPrefix, want, queue, except = NONE_HELD, levelWhere) {
  const use = prefixUse(batch, probeKeyPrefix);
  const rows = [];
  let level = batch.queryOne(topPriorityQuery(probeKeyPrefix, void 0, use, queue), PRIORITY_LEVEL_SHAPE);
  while (level !== null && level.found === 1 && rows.length < want) {
    const where = levelWhere !== void 0 ? levelWhere(level.priority) : pendingDueWhere(level.priority, nowMs, probeKeyPrefix, use, queue, except);
    const found = batch.find(where, LEVEL_ORDER, want - rows.length);
    for (const row of found) rows.push(row);
    if (rows.length >= want) break;
    level = batch.queryOne(topPriorityQuery(probeKeyPrefix, level.priority, use, queue), PRIORITY_LEVEL_SHAPE);
  }
  return rows;
}
function prefixUse(batch, probeKeyPrefix) {
  if (probeKeyPrefix === "") return "filter";
  const family = batch.queryOne(familyProbeQuery(probeKeyPrefix), FAMILY_PROBE_SHAPE);
  return family !== null && family.n < FAMILY_PROBE_LIMIT ? "range" : "filter";
}

// src/lib/claim-plan.ts
var FLOW_DEMAND = {
  /** No setting in effect. */
  none: 0,
  /** Only queues paused or parked: the plan claims from the other queues, as claimNext would. */
  heldQueues: 1,
  /** A group paused or parked, a concurrency or a rate limit: claimNext counts them per candidate. */
  counted: 2
};
function flowDemandQuery(nowMs) {
  const held = "(paused = 1 OR (parked_until != '' AND parked_until > {:now}))";
  return {
    sql: `SELECT CASE WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE concurrency > 0 OR rate_limit > 0 OR (scope = 'group' AND ${held})) THEN ${FLOW_DEMAND.counted} WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE ${held}) THEN ${FLOW_DEMAND.heldQueues} ELSE ${FLOW_DEMAND.none} END AS n`,
    params: { now: formatPbDate(nowMs) }
  };
}
var WINS = ["claim", "steal"];
var TIMED_OUT = ["timeout_retry", "timeout_dead"];
var DEAD_LETTER2 = ["timeout_dead", "dead", "orphan_cap"];
var GIVE_UPS = ["timeout_retry", ...DEAD_LETTER2];
var WRITES = [...WINS, ...GIVE_UPS];
var READ = [
  "id",
  "status",
  "claimed_by",
  "lease_token",
  "probe_key",
  "queue",
  "group_key",
  "start_by",
  "claimed_at",
  "version",
  "reclaim_count",
  "consecutive_orphan_count",
  "attempts",
  "max_attempts",
  "timeout_seconds",
  "lease_expires_at",
  "priority",
  "run_at",
  "created",
  "enqueue_index"
];
var CANDIDATE_COLUMNS = [
  ...ROW_COLUMNS,
  "COALESCE(r.priority, 0) AS r_priority",
  "COALESCE(r.run_at, '') AS r_run_at",
  "COALESCE(r.created, '') AS r_created",
  "COALESCE(r.enqueue_index, 0) AS r_enqueue_index"
];
var KIND = "CASE WHEN r_status = 'pending' THEN (CASE WHEN " + ATTEMPTS_LEFT + ` THEN 'claim' ELSE 'dead' END) WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) WHEN NOT ${ATTEMPTS_LEFT} THEN 'dead' WHEN r_consecutive_orphan_count >= {:orphanCap} THEN 'orphan_cap' ELSE 'steal' END`;
var GIVE_UP_ERROR = giveUpErrorSql("r_consecutive_orphan_count");
var COLUMNS = {
  status: [[WINS, "'claimed'"], [["timeout_retry"], "'pending'"], [DEAD_LETTER2, "'failed'"]],
  claimed_by: [[WINS, "{:workerId}"], [["orphan_cap"], "{:sweeper}"], [["timeout_retry", "timeout_dead", "dead"], "''"]],
  // leaseEnd: never past the attempt's deadline, which a claim dates from now.
  lease_expires_at: [
    [WINS, formatPbDateSql("(CASE WHEN r_timeout_seconds > 0 THEN MIN({:leaseEndMs}, {:nowMs} + r_timeout_seconds * 1000) ELSE {:leaseEndMs} END)")],
    [["timeout_retry"], "''"]
  ],
  lease_token: [[WINS, "tok"], [GIVE_UPS, "''"]],
  version: [[WRITES, "r_version + 1"]],
  claimed_at: [[WINS, "{:now}"]],
  attempts: [[WINS, "r_attempts + 1"]],
  reclaim_count: [[["steal"], "r_reclaim_count + 1"]],
  consecutive_orphan_count: [[["steal"], "r_consecutive_orphan_count + 1"]],
  run_at: [[["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)]],
  progress: [[["timeout_retry"], "'null'"]],
  last_error: [
    [TIMED_OUT, timedOutErrorSql("r_timeout_seconds")],
    [["dead"], "{:maxAttemptsError}"],
    [["orphan_cap"], GIVE_UP_ERROR]
  ],
  dead_lettered_at: [[DEAD_LETTER2, "{:now}"]],
  finished_at: [[DEAD_LETTER2, "{:now}"]],
  result: [[["orphan_cap"], `json_object('error', ${GIVE_UP_ERROR}, 'reason', {:orphanReason}, 'lastHolder', r_claimed_by)`]]
};
var ORDER = CLAIM_ORDER.join(", ");
var JUDGED_ORDER = CLAIM_ORDER.map((term) => `r_${term}`).join(", ");
function judgedCandidates(byQueue, expired) {
  const inQueue = (alias) => byQueue ? `queue = ${alias}.q AND ` : "";
  const maxBelow = (alias, below) => `(SELECT MAX(priority) FROM probe_jobs WHERE ${inQueue(alias)}status = 'pending'${below})`;
  const first = byQueue ? `SELECT qs.q, ${maxBelow("qs", "")} FROM (SELECT value AS q FROM json_each({:queues})) AS qs` : `SELECT NULL, ${maxBelow("lv", "")}`;
  const levels = `lv(q, p) AS (${first} UNION ALL SELECT lv.q, ${maxBelow("lv", " AND priority < lv.p")} FROM lv WHERE lv.p IS NOT NULL)`;
  const levelRows = `SELECT id FROM probe_jobs WHERE ${inQueue("lv")}status = 'pending' AND priority = lv.p AND run_at <= {:now} AND ${STARTABLE_SQL} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:want}`;
  const due = `SELECT j.rowid AS rid, ${READ.map((c) => `j.${c}`).join(", ")} FROM lv, probe_jobs AS j WHERE lv.p IS NOT NULL AND j.id IN (${levelRows})`;
  const stale = `SELECT rowid AS rid, ${READ.join(", ")} FROM probe_jobs WHERE ${expired} ORDER BY ${ORDER} LIMIT {:want}`;
  return `WITH RECURSIVE ${levels}, c AS (SELECT * FROM (${due} UNION ALL SELECT * FROM (${stale})) ORDER BY ${ORDER} LIMIT {:want}), d AS (SELECT r.rid AS r_rowid, ${CANDIDATE_COLUMNS.join(", ")} FROM c AS r), k AS (SELECT d.*, (${KIND}) AS kind FROM d), v AS MATERIALIZED (SELECT k.*, (CASE WHEN kind IN (${quoted(WINS)}) THEN json_extract({:tokens}, '$[' || (SUM(kind IN (${quoted(WINS)})) OVER (ORDER BY ${JUDGED_ORDER} ROWS UNBOUNDED PRECEDING) - 1) || ']') END) AS tok FROM k)`;
}
function roundStatement(byQueue, expired) {
  const sets = Object.keys(COLUMNS).map((c) => `${c} = ${newValue(COLUMNS[c], `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedCandidates(byQueue, expired)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v WHERE probe_jobs.rowid IN (SELECT r_rowid FROM v WHERE kind IN (${quoted(WRITES)})) AND probe_jobs.rowid = v.r_rowid RETURNING ${ROW_AS_JSON} AS row, status, ${WRITTEN_VIEW} AS view`;
}
var CLAIM_ROUND_SHAPE = { row: "", status: "", view: "" };
function answerClaims(taken) {
  if ("jobs" in taken) return taken.jobs;
  const rows = JSON.parse(`[${taken.rowTexts.join(",")}]`);
  return rows.sort(compareClaimOrder).map((row) => ({ job: queueJobView(row), leaseToken: row.lease_token }));
}
function claimNextJobs(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  var _a;
  const demand = req.probeKeyPrefix === "" ? (_a = batch.queryOne(flowDemandQuery(nowMs), COUNT_SHAPE)) == null ? void 0 : _a.n : FLOW_DEMAND.counted;
  if (demand === FLOW_DEMAND.none) return claimNextByPlan(batch, req, nowMs, orphanCap2, newLeaseToken2);
  if (demand === FLOW_DEMAND.heldQueues) {
    const queues = claimQueuesBesides(batch, req.queues, heldBackQueues(batch, nowMs));
    if (queues !== null) return claimNextByPlan(batch, __spreadProps(__spreadValues({}, req), { queues }), nowMs, orphanCap2, newLeaseToken2);
  }
  return {
    jobs: claimNext(batch, req, nowMs, orphanCap2, newLeaseToken2).map(({ row, patch }) => {
      var _a2;
      return { job: queueJobView(row, patch), leaseToken: (_a2 = patch.lease_token) != null ? _a2 : "" };
    })
  };
}
function claimRoundStatement(req, want, tokens, nowMs, orphanCap2) {
  const expired = expiredLeaseWhere(nowMs, "", req.queues);
  const params = Object.assign({}, expired.params, {
    now: formatPbDate(nowMs),
    nowMs,
    want,
    tokens: JSON.stringify(tokens),
    workerId: req.workerId,
    leaseEndMs: nowMs + clampLeaseSeconds(req.leaseSeconds) * 1e3,
    orphanCap: orphanCap2,
    sweeper: SWEEPER_HOLDER,
    maxAttemptsError: MAX_ATTEMPTS_ERROR,
    orphanReason: ORPHAN_CAP_REASON
  });
  const byQueue = req.queues !== null;
  if (byQueue) params["queues"] = JSON.stringify(storedQueueValues(req.queues).filter((q, i, all) => all.indexOf(q) === i));
  return { sql: roundStatement(byQueue, expired.sql), params };
}
function claimNextByPlan(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  const claimed = [];
  if (req.queues !== null && req.queues.length === 0) return { rowTexts: claimed };
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && claimed.length < req.limit; round++) {
    const want = req.limit - claimed.length;
    const tokens = [];
    for (let n = 0; n < want; n++) tokens.push(newLeaseToken2());
    const written = batch.queryAll(claimRoundStatement(req, want, tokens, nowMs, orphanCap2), CLAIM_ROUND_SHAPE);
    if (written.length === 0) break;
    batch.noteWritten(JSON.parse(`[${written.map((r) => r.view).join(",")}]`));
    let won = 0;
    for (const r of written) {
      if (!isHeldStatus(r.status)) continue;
      claimed.push(r.row);
      won++;
    }
    if (won === written.length) break;
  }
  return { rowTexts: claimed };
}

// src/lib/validate.ts
var MAX_CLAIM_NEXT_LIMIT = 100;
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
var INVALID = null;
function validateClaimNextRequest(data) {
  const body = asBody(data);
  const { workerId, limit } = body;
  if (!workerId) return fail("workerId is required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  if (limit !== void 0 && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CLAIM_NEXT_LIMIT)) {
    return fail(`limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`);
  }
  const probeKeyPrefix = readPrefix(data);
  if (probeKeyPrefix === INVALID) return fail(PREFIX_ERROR);
  const badPrefix = prefixError(probeKeyPrefix);
  if (badPrefix !== null) return fail(badPrefix);
  const queues = readClaimQueues(body["queue"]);
  if (typeof queues === "string") return fail(queues);
  return {
    ok: true,
    value: { workerId, leaseSeconds: body["leaseSeconds"], limit: limit === void 0 ? 1 : limit, probeKeyPrefix, queues }
  };
}
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";
function readClaimQueues(value) {
  if (value === void 0 || value === null) return null;
  const names = Array.isArray(value) ? value : [value];
  if (names.length < 1 || names.length > MAX_CLAIM_QUEUES) return `queue must be a queue name or an array of 1 to ${MAX_CLAIM_QUEUES} names`;
  for (const name of names) if (!isQueueName(name)) return `queue must be a queue name or an array of them (${QUEUE_NAME_RULE})`;
  return names.filter((name, i) => names.indexOf(name) === i);
}
function prefixError(prefix) {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
}
var PREFIX_ERROR = "probeKeyPrefix must be a string";
function readPrefix(data) {
  const prefix = asBody(data)["probeKeyPrefix"];
  if (prefix === void 0) return "";
  return typeof prefix === "string" ? prefix : INVALID;
}

// src/handlers/claim-next.ts
function handleClaimNext(req) {
  const valid = validateClaimNextRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const scope = claimQueues(req.caller, valid.value.queues);
  if ("refusal" in scope) return json(403, { error: scope.refusal });
  const claim = __spreadProps(__spreadValues({}, valid.value), { queues: scope.queues });
  const cap = orphanCap(getenv);
  const taken = updateJobsBulk("claim-next", (batch, now) => claimNextJobs(batch, claim, now, cap, newLeaseToken));
  const answer = { jobs: taken === null ? [] : answerClaims(taken) };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleClaimNext, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/sweep", (__context) => {
return (globalThis["pbFleet POST /api/fleet/sweep 96467a2aff9b"] || (globalThis["pbFleet POST /api/fleet/sweep 96467a2aff9b"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
var SWEEP_BATCH = 500;
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";

// src/lib/queue.ts
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isDue(row, nowMs) {
  return row.run_at <= formatPbDate(nowMs);
}
function isClaimable(row, nowMs) {
  return row.status === "pending" && isDue(row, nowMs) || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
function requeuePatch(row, nowMs) {
  return {
    status: "pending",
    claimed_by: "",
    lease_token: "",
    // The expired lease stays as the row's "last in flight" marker.
    reclaim_count: row.reclaim_count + 1,
    consecutive_orphan_count: row.consecutive_orphan_count + 1,
    requeued_at: formatPbDate(nowMs),
    version: row.version + 1
  };
}
var ORPHAN_CAP_REASON = "orphan_cap";
var GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
var GIVE_UP_AFTER = " times in a row without a release";
function giveUpPatch(row, nowMs) {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
var NONE_HELD = { queues: [], groups: [] };
function heldBackTerms(held, params) {
  let terms = "";
  if (held.queues.length > 0) {
    const names = storedQueueValues(held.queues).map((queue, i) => {
      params[`heldQueue${i}`] = queue;
      return `{:heldQueue${i}}`;
    });
    terms += ` AND queue NOT IN (${names.join(", ")})`;
  }
  if (held.groups.length > 0) {
    const names = held.groups.map((group, i) => {
      params[`heldGroup${i}`] = group;
      return `{:heldGroup${i}}`;
    });
    terms += ` AND group_key NOT IN (${names.join(", ")})`;
  }
  return terms;
}
function storedQueueValues(queues) {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix, queues = null, held = NONE_HELD) {
  const params = { now: formatPbDate(nowMs) };
  if (queues === null) return withPrefix(`${EXPIRED_LEASE_SQL}${heldBackTerms(held, params)}`, params, probeKeyPrefix);
  const names = storedQueueValues(queues).map((queue, i) => {
    params[`queue${i}`] = queue;
    return `{:queue${i}}`;
  });
  return withPrefix(`${EXPIRED_LEASE_SQL} AND queue IN (${names.join(", ")})${heldBackTerms(held, params)}`, params, probeKeyPrefix);
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/sweep.ts
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
}
function sweepExpired(batch, nowMs, cap, probeKeyPrefix, limit) {
  var _a;
  const answer = { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  for (const row of batch.find(expiredLeaseWhere(nowMs, probeKeyPrefix), SWEEP_ORDER, limit)) {
    const decision = decideSweep(row, nowMs, cap);
    if (decision.kind === "skip") continue;
    batch.write(row, decision.patch);
    if (decision.kind === "requeue") answer.requeued++;
    else if (decision.kind === "timed_out") answer.timedOut++;
    else answer.gaveUp++;
    answer.jobs.push({
      id: row.id,
      outcome: decision.kind === "requeue" ? "requeued" : decision.kind === "timed_out" ? "timed_out" : "gave_up",
      claimedBy: row.claimed_by,
      consecutiveOrphanCount: (_a = decision.patch.consecutive_orphan_count) != null ? _a : row.consecutive_orphan_count
    });
  }
  return answer;
}
var SWEEP_ORDER = ["lease_expires_at ASC"];

// src/lib/validate.ts
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
var INVALID = null;
function validateSweepRequest(data) {
  const prefix = readPrefix(data);
  if (prefix === INVALID) return fail(PREFIX_ERROR);
  const badPrefix = prefixError(prefix);
  return badPrefix !== null ? fail(badPrefix) : { ok: true, value: { probeKeyPrefix: prefix } };
}
function prefixError(prefix) {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
}
var PREFIX_ERROR = "probeKeyPrefix must be a string";
function readPrefix(data) {
  const prefix = asBody(data)["probeKeyPrefix"];
  if (prefix === void 0) return "";
  return typeof prefix === "string" ? prefix : INVALID;
}

// src/handlers/sweep.ts
function sweep(probeKeyPrefix) {
  const cap = orphanCap(getenv);
  return updateJobsBulk("sweep", (batch, now) => sweepExpired(batch, now, cap, probeKeyPrefix, SWEEP_BATCH));
}
function handleSweep(req) {
  var _a;
  const valid = validateSweepRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const empty = { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  return json(200, (_a = sweep(valid.value.probeKeyPrefix)) != null ? _a : empty);
}

// entry.ts
function route(context) {
  return serve(context, handleSweep, "admin");
}
return route;
})()))(__context);
});

routerAdd("GET", "/api/fleet/stats", (__context) => {
return (globalThis["pbFleet GET /api/fleet/stats 56ee4a552840"] || (globalThis["pbFleet GET /api/fleet/stats 56ee4a552840"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var EVERY_MINUTE = "* * * * *";
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = EVERY_MINUTE;
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
function sweepSchedule(getenv2) {
  const raw = getenv2(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" ? DEFAULT_SWEEP_SCHEDULE : raw;
}
var SWEEPER_STATE_KEY = "pbFleetSweeper";
function sweeperNotScheduled(schedule, error) {
  return error === void 0 ? { scheduled: false, schedule } : { scheduled: false, schedule, error };
}
function decodeSweeperState(stored, configured) {
  try {
    const state = typeof stored === "string" ? JSON.parse(stored) : null;
    if (typeof state === "object" && state !== null && typeof state.scheduled === "boolean") {
      return state;
    }
  } catch (e) {
  }
  return sweeperNotScheduled(configured, "the pb-fleet hooks did not register the sweeper: see PocketBase's log");
}
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var QUERY_FAILED = "pb-fleet: query failed";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function storeGet(key) {
  return $app.store().get(key);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}
function readAllOrNull(db, query, shape) {
  try {
    return readAll(db, query, shape);
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}
function readOne(db, query, shape) {
  const row = new DynamicModel(shape);
  try {
    db.newQuery(query.sql).bind(query.params).one(row);
    return row;
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];
function countsSum(condition) {
  return `COALESCE((SELECT SUM(n) FROM ${JOB_COUNTS_TABLE} WHERE ${condition}), 0)`;
}

// src/lib/types.ts
var JOB_STATUSES = ["pending", "claimed", "running", "done", "failed", "cancelled"];
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
function queueInTerm(queue, params) {
  const names = storedQueueValues([queue]).map((value, i) => {
    params[`statsQueue${i}`] = value;
    return `{:statsQueue${i}}`;
  });
  return `queue IN (${names.join(", ")})`;
}
function liveCountsByQueueQuery(limit) {
  return {
    sql: `SELECT CASE WHEN COALESCE(queue, '') = '' THEN {:defaultQueue} ELSE queue END AS queue, status, COUNT(*) AS n FROM probe_jobs WHERE ${statusInSql(LIVE_STATUSES)} GROUP BY 1, 2 ORDER BY 1, 2 LIMIT {:limit}`,
    params: { defaultQueue: DEFAULT_QUEUE, limit }
  };
}
var LIVE_COUNT_SHAPE = { queue: "", status: "", n: 0 };
var MAX_QUEUE_GAUGE_ROWS = 1500;
function storedQueueValues(queues) {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");
function statsQuery(nowMs, orphanCap2) {
  const statusCounts = JOB_STATUSES.map((status) => `${countsSum(`status = '${status}'`)} AS ${status}`).join(",\n  ");
  return {
    sql: `SELECT
  ${statusCounts},
  ${countsSum("1 = 1")} AS total,
  ${countsSum("status = 'pending' AND tried = 1")} AS retrying,
  ${countsSum("dead = 1")} AS dead_lettered,
  live.scheduled AS scheduled,
  live.oldest_pending AS oldest_pending,
  (SELECT COUNT(*) FROM probe_jobs WHERE ${EXPIRED_LEASE_SQL}) AS expired_leases,
  (SELECT COUNT(*) FROM probe_jobs WHERE ${ORPHANED_SQL} AND consecutive_orphan_count >= {:cap}) AS past_orphan_cap,
  ${JOB_COUNTS_READY_SQL} AS counts_ready
FROM (SELECT COALESCE(SUM(run_at > {:now}), 0) AS scheduled,
    COALESCE(MIN(CASE WHEN run_at <= {:now} THEN MAX(created, COALESCE(requeued_at, ''), run_at) END), '') AS oldest_pending
  FROM probe_jobs WHERE status = 'pending') AS live`,
    params: { now: formatPbDate(nowMs), cap: orphanCap2 }
  };
}
var ORPHANED_SQL = "consecutive_orphan_count > 0";
function statsScanQuery(nowMs, orphanCap2, probeKeyPrefix, queue = null) {
  const statuses = JOB_STATUSES.map((status) => `'${status}'`).join(", ");
  const params = { now: formatPbDate(nowMs), cap: orphanCap2 };
  const inQueue = queue === null ? "" : `${queueInTerm(queue, params)} AND `;
  const scope = probeKeyPrefix === "" && queue === null ? { sql: "1 = 1", params } : withPrefix(`${inQueue}status IN (${statuses})`, params, probeKeyPrefix, queue === null ? "range" : "filter");
  const statusCounts = JOB_STATUSES.map((status) => `COALESCE(SUM(status = '${status}'), 0) AS ${status}`).join(",\n  ");
  return {
    sql: `SELECT
  ${statusCounts},
  COUNT(*) AS total,
  COALESCE(SUM(status = 'pending' AND run_at > {:now}), 0) AS scheduled,
  COALESCE(SUM(status = 'pending' AND attempts > 0), 0) AS retrying,
  COALESCE(SUM(COALESCE(dead_lettered_at, '') != ''), 0) AS dead_lettered,
  COALESCE(MIN(CASE WHEN status = 'pending' AND run_at <= {:now}
    THEN MAX(created, COALESCE(requeued_at, ''), run_at) END), '') AS oldest_pending,
  COALESCE(SUM(${EXPIRED_LEASE_SQL}), 0) AS expired_leases,
  COALESCE(SUM(consecutive_orphan_count >= {:cap}), 0) AS past_orphan_cap,
  1 AS counts_ready
FROM probe_jobs
WHERE ${scope.sql}`,
    params: scope.params
  };
}
var STATS_ROW_SHAPE = {
  pending: 0,
  claimed: 0,
  running: 0,
  done: 0,
  failed: 0,
  cancelled: 0,
  total: 0,
  scheduled: 0,
  retrying: 0,
  dead_lettered: 0,
  oldest_pending: "",
  expired_leases: 0,
  past_orphan_cap: 0,
  counts_ready: 0
};

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
function queryOne(query, shape) {
  return readOne($app.dao().db(), query, shape);
}
function queryAll(query, shape) {
  return readAllOrNull($app.dao().db(), query, shape);
}

// src/lib/validate.ts
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";
function prefixError(prefix) {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
}

// src/lib/stats.ts
function buildStats(row, nowMs, orphanCap2, sweeper) {
  const counts = {};
  for (const status of JOB_STATUSES) counts[status] = row[status];
  const oldest = parsePbDate(row.oldest_pending);
  return {
    counts,
    total: row.total,
    scheduled: row.scheduled,
    retrying: row.retrying,
    deadLettered: row.dead_lettered,
    oldestPendingAgeSeconds: oldest === null ? null : Math.max(0, (nowMs - oldest) / 1e3),
    expiredLeases: row.expired_leases,
    pastOrphanCap: row.past_orphan_cap,
    orphanCap: orphanCap2,
    sweeper
  };
}
var STATS_UNAVAILABLE = "stats are unavailable right now: the database read failed (details are in PocketBase's log)";
function parseStatsFormat(raw) {
  if (raw === "" || raw === "json") return "json";
  return raw === "prometheus" ? "prometheus" : null;
}
function formatPrometheus(stats, byQueue = []) {
  const lines = [];
  const gauge = (name, help, samples) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  gauge(
    "pb_fleet_jobs",
    "Jobs in probe_jobs by status.",
    JOB_STATUSES.map((s) => [`{status="${s}"}`, stats.counts[s]])
  );
  if (byQueue.length > 0) {
    gauge(
      "pb_fleet_queue_jobs",
      "Unfinished jobs (pending, claimed, running) by queue and status.",
      byQueue.map((c) => [`{queue="${escapeLabel(c.queue)}",status="${escapeLabel(c.status)}"}`, c.n])
    );
  }
  gauge("pb_fleet_scheduled_jobs", "Pending jobs not yet due.", [["", stats.scheduled]]);
  gauge("pb_fleet_retrying_jobs", "Pending jobs that have been tried before.", [["", stats.retrying]]);
  gauge(
    "pb_fleet_dead_lettered_jobs",
    "Jobs dead-lettered (out of attempts, or given up at the orphan cap).",
    [["", stats.deadLettered]]
  );
  gauge(
    "pb_fleet_oldest_pending_age_seconds",
    "Seconds the longest-waiting due pending job has waited.",
    stats.oldestPendingAgeSeconds === null ? [] : [["", stats.oldestPendingAgeSeconds]]
  );
  gauge(
    "pb_fleet_expired_leases",
    "Claimed or running jobs whose lease has passed, waiting for the sweeper.",
    [["", stats.expiredLeases]]
  );
  gauge(
    "pb_fleet_past_orphan_cap",
    "Jobs whose consecutive orphaned leases reached the cap.",
    [["", stats.pastOrphanCap]]
  );
  gauge(
    "pb_fleet_orphan_cap",
    "Consecutive orphaned leases after which the sweeper fails a job.",
    [["", stats.orphanCap]]
  );
  gauge(
    "pb_fleet_sweeper_scheduled",
    "1 when the server sweeper is scheduled, 0 when it is off or its schedule failed.",
    [[`{schedule="${escapeLabel(stats.sweeper.schedule)}"}`, stats.sweeper.scheduled ? 1 : 0]]
  );
  return lines.join("\n") + "\n";
}
function escapeLabel(value) {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

// src/handlers/stats.ts
function handleStats(req) {
  const format = parseStatsFormat(req.query("format"));
  if (format === null) return json(400, { error: "format must be json or prometheus" });
  const prefix = req.query("probeKeyPrefix");
  const badPrefix = prefixError(prefix);
  if (badPrefix !== null) return json(400, { error: badPrefix });
  const queue = req.query("queue");
  if (queue !== "" && !isQueueName(queue)) return json(400, { error: `queue must be a queue name (${QUEUE_NAME_RULE})` });
  const now = Date.now();
  const cap = orphanCap(getenv);
  let row = prefix === "" && queue === "" ? queryOne(statsQuery(now, cap), STATS_ROW_SHAPE) : null;
  if (row === null || row.counts_ready !== 1) row = queryOne(statsScanQuery(now, cap, prefix, queue === "" ? null : queue), STATS_ROW_SHAPE);
  if (row === null) return json(503, { error: STATS_UNAVAILABLE });
  const sweeper = decodeSweeperState(storeGet(SWEEPER_STATE_KEY), sweepSchedule(getenv));
  const stats = buildStats(row, now, cap, sweeper);
  if (format !== "prometheus") return json(200, stats);
  const byQueue = prefix === "" && queue === "" ? queryAll(liveCountsByQueueQuery(MAX_QUEUE_GAUGE_ROWS), LIVE_COUNT_SHAPE) : [];
  if (byQueue === null) return json(503, { error: STATS_UNAVAILABLE });
  return { status: 200, text: formatPrometheus(stats, byQueue) };
}

// entry.ts
function route(context) {
  return serve(context, handleStats, "admin");
}
return route;
})()))(__context);
});

routerAdd("GET", "/api/fleet/completions", (__context) => {
return (globalThis["pbFleet GET /api/fleet/completions bc685199b541"] || (globalThis["pbFleet GET /api/fleet/completions bc685199b541"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var QUERY_FAILED = "pb-fleet: query failed";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}
function readOne(db, query, shape) {
  const row = new DynamicModel(shape);
  try {
    db.newQuery(query.sql).bind(query.params).one(row);
    return row;
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");
var FINISHED_SQL = "finished_at != ''";

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
function queryOne(query, shape) {
  return readOne($app.dao().db(), query, shape);
}

// src/lib/completions.ts
var DEFAULT_WINDOW_SECONDS = 300;
var DEFAULT_BUCKET_SECONDS = 5;
var MAX_WINDOW_SECONDS = 3600;
var MAX_BUCKET_SECONDS = 600;
var MAX_BUCKETS = 720;
function parseCompletionsParams(rawWindow, rawBucket) {
  const windowSeconds = readWhole(rawWindow, DEFAULT_WINDOW_SECONDS);
  const bucketSeconds = readWhole(rawBucket, DEFAULT_BUCKET_SECONDS);
  if (windowSeconds === null || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
    return { ok: false, error: `windowSeconds must be a whole number from 1 to ${MAX_WINDOW_SECONDS}` };
  }
  if (bucketSeconds === null || bucketSeconds < 1 || bucketSeconds > MAX_BUCKET_SECONDS) {
    return { ok: false, error: `bucketSeconds must be a whole number from 1 to ${MAX_BUCKET_SECONDS}` };
  }
  if (Math.ceil(windowSeconds / bucketSeconds) > MAX_BUCKETS) {
    return { ok: false, error: `windowSeconds / bucketSeconds must be at most ${MAX_BUCKETS} buckets` };
  }
  return { ok: true, windowSeconds, bucketSeconds };
}
function readWhole(raw, fallback) {
  if (raw === "") return fallback;
  if (!/^\d{1,7}$/.test(raw)) return null;
  return Number(raw);
}
function completionsWindow(nowMs, windowSeconds, bucketSeconds) {
  const bucketMs = bucketSeconds * 1e3;
  const count = Math.ceil(windowSeconds / bucketSeconds);
  const current = Math.floor(nowMs / bucketMs);
  const fromMs = (current - count + 1) * bucketMs;
  return { bucketSeconds, count, fromMs, toMs: fromMs + count * bucketMs };
}
function completionsQuery(window, probeKeyPrefix) {
  const params = {
    from: formatPbDate(window.fromMs),
    to: formatPbDate(window.toMs),
    fromSeconds: window.fromMs / 1e3,
    bucketSeconds: window.bucketSeconds
  };
  const where = withPrefix(
    `${statusInSql(COMPLETED_STATUSES)} AND ${FINISHED_SQL} AND finished_at >= {:from} AND finished_at < {:to}`,
    params,
    probeKeyPrefix
  ).sql;
  return {
    sql: `SELECT COALESCE(group_concat(bucket || ':' || done || ':' || failed, ','), '') AS buckets, 1 AS counts_ready FROM (
  SELECT CAST((CAST(strftime('%s', substr(finished_at, 1, 19)) AS INTEGER) - CAST({:fromSeconds} AS INTEGER))
      / CAST({:bucketSeconds} AS INTEGER) AS INTEGER) AS bucket,
    SUM(status = 'done') AS done,
    SUM(status = 'failed') AS failed
  FROM probe_jobs
  WHERE ${where}
  GROUP BY bucket
)`,
    params
  };
}
var COMPLETIONS_ROW_SHAPE = { buckets: "", counts_ready: 0 };
function countedCompletionsQuery(window) {
  return {
    sql: `SELECT COALESCE((SELECT group_concat(bucket || ':' || done || ':' || failed, ',') FROM (
  SELECT (second - CAST({:fromSeconds} AS INTEGER)) / CAST({:bucketSeconds} AS INTEGER) AS bucket,
    SUM(done) AS done, SUM(failed) AS failed
  FROM ${JOB_COMPLETIONS_TABLE}
  WHERE second >= CAST({:fromSeconds} AS INTEGER) AND second < CAST({:toSeconds} AS INTEGER)
  GROUP BY bucket)), '') AS buckets,
  ${JOB_COUNTS_READY_SQL} AS counts_ready`,
    params: { fromSeconds: window.fromMs / 1e3, toSeconds: window.toMs / 1e3, bucketSeconds: window.bucketSeconds }
  };
}
function buildCompletions(row, window, nowMs) {
  const bucketMs = window.bucketSeconds * 1e3;
  const buckets = [];
  for (let i = 0; i < window.count; i++) buckets.push({ start: window.fromMs + i * bucketMs, done: 0, failed: 0 });
  for (const entry of row.buckets === "" ? [] : row.buckets.split(",")) {
    const [index, done, failed] = entry.split(":").map(Number);
    const bucket2 = buckets[index];
    if (!Number.isInteger(index) || bucket2 === void 0) continue;
    bucket2.done += done || 0;
    bucket2.failed += failed || 0;
  }
  return { now: nowMs, bucketSeconds: window.bucketSeconds, from: window.fromMs, to: window.toMs, buckets };
}
var COMPLETIONS_UNAVAILABLE = "completions are unavailable right now: the database read failed (details are in PocketBase's log)";

// src/lib/validate.ts
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function prefixError(prefix) {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
}

// src/handlers/completions.ts
function handleCompletions(req) {
  const params = parseCompletionsParams(req.query("windowSeconds"), req.query("bucketSeconds"));
  if (!params.ok) return json(400, { error: params.error });
  const prefix = req.query("probeKeyPrefix");
  const badPrefix = prefixError(prefix);
  if (badPrefix !== null) return json(400, { error: badPrefix });
  const now = Date.now();
  const window = completionsWindow(now, params.windowSeconds, params.bucketSeconds);
  let row = prefix === "" ? queryOne(countedCompletionsQuery(window), COMPLETIONS_ROW_SHAPE) : null;
  if (row === null || row.counts_ready !== 1) row = queryOne(completionsQuery(window, prefix), COMPLETIONS_ROW_SHAPE);
  if (row === null) return json(503, { error: COMPLETIONS_UNAVAILABLE });
  return json(200, buildCompletions(row, window, Date.now()));
}

// entry.ts
function route(context) {
  return serve(context, handleCompletions, "admin");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/enqueue", (__context) => {
return (globalThis["pbFleet POST /api/fleet/enqueue 72fa29c76381"] || (globalThis["pbFleet POST /api/fleet/enqueue 72fa29c76381"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var MAX_TIMEOUT_SECONDS = 86400;
var MAX_START_WITHIN_SECONDS = 2592e3;
function isGroupName(value) {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (code <= 31 || code >= 127 && code <= 159) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_ENQUEUE_JOBS = 1e3;
var MAX_PAYLOAD_BYTES = 1048576;
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_UNIQUE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_DELAY_SECONDS = 31536e5;
var MIN_PRIORITY = -1e3;
var MAX_PRIORITY = 1e3;
var MAX_MAX_ATTEMPTS = 1e3;
var DEFAULT_MAX_ATTEMPTS = 25;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function jsonLongerThan(value, maxBytes) {
  const text = JSON.stringify(value);
  return text !== void 0 && utf8LongerThan(text, maxBytes);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/schedules.ts
var SCHEDULE_KEY_PREFIX = "pb-fleet-schedule:";

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function mayTakeQueue(caller, queue) {
  if (caller.kind === "admin" || caller.queues.length === 0) return true;
  return caller.queues.indexOf(storedQueueName(queue)) !== -1;
}
function enqueueRefusal(caller, items) {
  if (caller.kind === "admin") return null;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (!mayTakeQueue(caller, item.queue)) return queueRefusal(item.queue);
    if (item.uniqueKey.slice(0, SCHEDULE_KEY_PREFIX.length) === SCHEDULE_KEY_PREFIX) {
      return `jobs[${index}]: a uniqueKey beginning "${SCHEDULE_KEY_PREFIX}" is the server's own (its schedules'): pick another`;
    }
  }
  return null;
}
function isRestricted(caller) {
  return caller.kind === "worker" && caller.queues.length > 0;
}
function queueRefusal(queue) {
  return `queue ${queue} is not among this worker identity's queues (nothing was written)`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function liveUniqueKeyQuery(uniqueKey) {
  return {
    sql: `SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`,
    params: { uniqueKey }
  };
}
var LIVE_KEY_SHAPE = { id: "", queue: "" };
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/enqueue.ts
function enqueueJobs(batch, items) {
  var _a, _b;
  const idByUniqueKey = {};
  const answer = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const key = item.uniqueKey;
    if (key !== "") {
      const known = (_b = idByUniqueKey[key]) != null ? _b : (_a = batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE)) == null ? void 0 : _a.id;
      if (known !== void 0) {
        idByUniqueKey[key] = known;
        answer.push({ id: known, probeKey: item.probeKey, created: false });
        continue;
      }
    }
    const id = batch.insert({
      probe_key: item.probeKey,
      queue: item.queue,
      status: "pending",
      payload: item.payload,
      run_at: item.runAt,
      priority: item.priority,
      max_attempts: item.maxAttempts,
      unique_key: key,
      enqueue_index: index,
      group_key: item.groupKey,
      timeout_seconds: item.timeoutSeconds,
      start_by: item.startBy
    });
    if (key !== "") idByUniqueKey[key] = id;
    answer.push({ id, probeKey: item.probeKey, created: true });
  }
  return answer;
}
function uniqueKeyAcrossQueues(batch, items, mayTake) {
  for (let index = 0; index < items.length; index++) {
    const key = items[index].uniqueKey;
    if (key === "") continue;
    const holder = batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE);
    if (holder !== null && !mayTake(storedQueueName(holder.queue))) {
      return `jobs[${index}]: its uniqueKey is held by a live job of a queue this worker identity does not take (nothing was written)`;
    }
  }
  return null;
}

// src/lib/validate.ts
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function absentIfNull(value) {
  return value === null ? void 0 : value;
}
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";
function validateEnqueueRequest(data, nowMs) {
  const jobs = asBody(data)["jobs"];
  if (!Array.isArray(jobs) || jobs.length < 1 || jobs.length > MAX_ENQUEUE_JOBS) {
    return fail(`jobs must be an array of 1 to ${MAX_ENQUEUE_JOBS} jobs`);
  }
  const items = [];
  for (let i = 0; i < jobs.length; i++) {
    const item = validateEnqueueItem(jobs[i], nowMs);
    if (typeof item === "string") return fail(`jobs[${i}]: ${item}`);
    items.push(item);
  }
  return { ok: true, value: items };
}
function validateEnqueueItem(data, nowMs) {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "must be an object";
  const item = data;
  const { probeKey } = item;
  if (typeof probeKey !== "string" || probeKey === "") return "probeKey must be a non-empty string";
  const badProbeKey = tooLongError("probeKey", probeKey, MAX_PROBE_KEY_BYTES);
  if (badProbeKey !== null) return badProbeKey;
  const payload = absentIfNull(item["payload"]);
  if (payload !== void 0 && jsonLongerThan(payload, MAX_PAYLOAD_BYTES)) {
    return `payload must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON`;
  }
  const runAt = readRunAt(absentIfNull(item["runAt"]), absentIfNull(item["delaySeconds"]), nowMs);
  if (runAt.error !== void 0) return runAt.error;
  const priority = absentIfNull(item["priority"]);
  if (priority !== void 0 && !isIntegerIn(priority, MIN_PRIORITY, MAX_PRIORITY)) {
    return `priority must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  const maxAttempts = absentIfNull(item["maxAttempts"]);
  if (maxAttempts !== void 0 && !isIntegerIn(maxAttempts, 0, MAX_MAX_ATTEMPTS)) {
    return `maxAttempts must be an integer from 0 to ${MAX_MAX_ATTEMPTS} (0: no cap)`;
  }
  const uniqueKey = absentIfNull(item["uniqueKey"]);
  if (uniqueKey !== void 0 && typeof uniqueKey !== "string") return "uniqueKey must be a string";
  const badUniqueKey = uniqueKey === void 0 ? null : tooLongError("uniqueKey", uniqueKey, MAX_UNIQUE_KEY_BYTES);
  if (badUniqueKey !== null) return badUniqueKey;
  const queue = absentIfNull(item["queue"]);
  if (queue !== void 0 && !isQueueName(queue)) return `queue must be a queue name (${QUEUE_NAME_RULE})`;
  const group = absentIfNull(item["group"]);
  if (group !== void 0 && group !== "" && !isGroupName(group)) return `group must be a group name (${GROUP_NAME_RULE}), or "" for none`;
  const timeoutSeconds = absentIfNull(item["timeoutSeconds"]);
  if (timeoutSeconds !== void 0 && !isIntegerIn(timeoutSeconds, 1, MAX_TIMEOUT_SECONDS)) {
    return `timeoutSeconds must be an integer from 1 to ${MAX_TIMEOUT_SECONDS}`;
  }
  const startWithin = absentIfNull(item["startWithinSeconds"]);
  if (startWithin !== void 0 && !isIntegerIn(startWithin, 1, MAX_START_WITHIN_SECONDS)) {
    return `startWithinSeconds must be an integer from 1 to ${MAX_START_WITHIN_SECONDS}`;
  }
  const runAtMs = parsePbDate(runAt.value);
  return {
    probeKey,
    queue: queue === void 0 ? DEFAULT_QUEUE : queue,
    groupKey: typeof group === "string" ? group : "",
    timeoutSeconds: timeoutSeconds === void 0 ? 0 : timeoutSeconds,
    startBy: startWithin === void 0 ? "" : formatPbDate(runAtMs + startWithin * 1e3),
    payload: payload === void 0 ? null : payload,
    runAt: runAt.value,
    priority: priority === void 0 ? 0 : priority,
    maxAttempts: maxAttempts === void 0 ? DEFAULT_MAX_ATTEMPTS : maxAttempts,
    uniqueKey: uniqueKey === void 0 ? "" : uniqueKey
  };
}
function isIntegerIn(value, min, max) {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}
function readRunAt(runAt, delaySeconds, nowMs) {
  if (runAt !== void 0 && delaySeconds !== void 0) return { value: "", error: "give runAt or delaySeconds, not both" };
  if (delaySeconds !== void 0) {
    if (typeof delaySeconds !== "number" || !(delaySeconds >= 0) || delaySeconds > MAX_DELAY_SECONDS) {
      return { value: "", error: `delaySeconds must be a number from 0 to ${MAX_DELAY_SECONDS}` };
    }
    return { value: formatPbDate(nowMs + Math.round(delaySeconds * 1e3)) };
  }
  if (runAt === void 0) return { value: formatPbDate(nowMs) };
  const ms = typeof runAt === "string" ? parseZonedInstant(runAt) : null;
  if (ms === null) {
    return {
      value: "",
      error: "runAt must be an ISO-8601 time with a zone (like 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00) or a PocketBase date (2026-12-01 09:30:00.000Z)"
    };
  }
  return { value: formatPbDate(ms) };
}
var ZONED_ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;
function parseZonedInstant(text) {
  const m = ZONED_ISO.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const ms = frac === void 0 ? "000" : (frac + "00").slice(0, 3);
  const local = parsePbDate(`${y}-${mo}-${d} ${h}:${mi}:${sec === void 0 ? "00" : sec}.${ms}Z`);
  if (local === null || zone === void 0) return null;
  if (zone === "Z") return local;
  const sign = zone[0] === "-" ? -1 : 1;
  const offH = Number(zone.slice(1, 3));
  const offM = Number(zone.slice(4, 6));
  if (offH > 23 || offM > 59) return null;
  const instant = local - sign * (offH * 60 + offM) * 6e4;
  return /^\d{4}-/.test(formatPbDate(instant)) ? instant : null;
}

// src/handlers/enqueue.ts
function handleEnqueue(req) {
  const valid = validateEnqueueRequest(req.body(), Date.now());
  if (!valid.ok) return json(400, { error: valid.error });
  const caller = req.caller;
  const refused = enqueueRefusal(caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJobs((batch) => {
    const hidden = isRestricted(caller) ? uniqueKeyAcrossQueues(batch, valid.value, (queue) => mayTakeQueue(caller, queue)) : null;
    return hidden !== null ? { refused: hidden } : { jobs: enqueueJobs(batch, valid.value) };
  });
  if (outcome === null) return json(503, { error: TRANSACTION_FAILED });
  if ("refused" in outcome) return json(403, { error: outcome.refused });
  const answer = { jobs: outcome.jobs };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleEnqueue, "enqueue");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/cancel", (__context) => {
return (globalThis["pbFleet POST /api/fleet/cancel 5a244ac2bef7"] || (globalThis["pbFleet POST /api/fleet/cancel 5a244ac2bef7"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_JOB_ID_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function decideCancel(row, nowMs) {
  if (row.status !== "pending" && !isHeldStatus(row.status)) return null;
  return {
    status: "cancelled",
    finished_at: formatPbDate(nowMs),
    // claimed_by stays on record (who was running it); decideRelease treats a cancelled row as held by no one.
    lease_token: "",
    version: row.version + 1
  };
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}
function queueJobView(row, patch) {
  var _a, _b, _c, _d, _e, _f, _g, _h;
  const p = patch != null ? patch : {};
  const view = jobView(row, patch);
  view.payload = parseJsonField(row.payload);
  view.priority = row.priority;
  view.run_at = (_a = p.run_at) != null ? _a : row.run_at;
  view.attempts = (_b = p.attempts) != null ? _b : row.attempts;
  view.max_attempts = row.max_attempts;
  view.last_error = (_c = p.last_error) != null ? _c : row.last_error;
  view.dead_lettered_at = (_d = p.dead_lettered_at) != null ? _d : row.dead_lettered_at;
  view.unique_key = row.unique_key;
  view.queue = storedQueueName(row.queue);
  view.progress = p.progress !== void 0 ? p.progress : parseJsonField(row.progress);
  view.group_key = (_e = row.group_key) != null ? _e : "";
  view.timeout_seconds = (_f = row.timeout_seconds) != null ? _f : 0;
  const deadline = isHeldStatus((_g = p.status) != null ? _g : row.status) ? deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: (_h = p.claimed_at) != null ? _h : row.claimed_at }) : null;
  view.deadline = deadline === null ? null : formatPbDate(deadline);
  return view;
}

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/operator-actions.ts
function cancelJob(batch, jobId, nowMs) {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  const patch = row === void 0 ? null : decideCancel(row, nowMs);
  if (row === void 0 || patch === null) return { cancelled: false };
  batch.write(row, patch);
  return { cancelled: true, job: queueJobView(row, patch) };
}

// src/lib/validate.ts
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function validateJobIdRequest(data) {
  const { jobId } = asBody(data);
  if (!jobId) return fail("jobId is required");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  return badJobId !== null ? fail(badJobId) : { ok: true, value: { jobId } };
}

// src/handlers/cancel.ts
function handleCancel(req) {
  const valid = validateJobIdRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const answer = updateJobs((batch, now) => cancelJob(batch, valid.value.jobId, now));
  return answer === null ? json(503, { error: TRANSACTION_FAILED }) : json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleCancel, "admin");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/retry", (__context) => {
return (globalThis["pbFleet POST /api/fleet/retry abbcfe124966"] || (globalThis["pbFleet POST /api/fleet/retry abbcfe124966"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var RETRYABLE_STATUSES = ["failed", "cancelled"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_JOB_ID_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isRetryable(status) {
  return inStatusClass(RETRYABLE_STATUSES, status);
}
function retryJobPatch(row, nowMs) {
  if (!isRetryable(row.status)) return null;
  return {
    status: "pending",
    run_at: formatPbDate(nowMs),
    attempts: 0,
    finished_at: "",
    dead_lettered_at: "",
    claimed_by: "",
    lease_token: "",
    consecutive_orphan_count: 0,
    progress: null,
    // start_by guards a first start only; a retried job starts afresh.
    start_by: "",
    version: row.version + 1
  };
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}
function queueJobView(row, patch) {
  var _a, _b, _c, _d, _e, _f, _g, _h;
  const p = patch != null ? patch : {};
  const view = jobView(row, patch);
  view.payload = parseJsonField(row.payload);
  view.priority = row.priority;
  view.run_at = (_a = p.run_at) != null ? _a : row.run_at;
  view.attempts = (_b = p.attempts) != null ? _b : row.attempts;
  view.max_attempts = row.max_attempts;
  view.last_error = (_c = p.last_error) != null ? _c : row.last_error;
  view.dead_lettered_at = (_d = p.dead_lettered_at) != null ? _d : row.dead_lettered_at;
  view.unique_key = row.unique_key;
  view.queue = storedQueueName(row.queue);
  view.progress = p.progress !== void 0 ? p.progress : parseJsonField(row.progress);
  view.group_key = (_e = row.group_key) != null ? _e : "";
  view.timeout_seconds = (_f = row.timeout_seconds) != null ? _f : 0;
  const deadline = isHeldStatus((_g = p.status) != null ? _g : row.status) ? deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: (_h = p.claimed_at) != null ? _h : row.claimed_at }) : null;
  view.deadline = deadline === null ? null : formatPbDate(deadline);
  return view;
}

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}
function liveUniqueKeyQuery(uniqueKey) {
  return {
    sql: `SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`,
    params: { uniqueKey }
  };
}
var ID_SHAPE = { id: "" };
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/operator-actions.ts
function retryJob(batch, jobId, nowMs) {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  const patch = row === void 0 ? null : retryJobPatch(row, nowMs);
  if (row === void 0 || patch === null) return { retried: false };
  if (row.unique_key !== "") {
    const holder = batch.queryOne(liveUniqueKeyQuery(row.unique_key), ID_SHAPE);
    if (holder !== null && holder.id !== row.id) return { retried: false, reason: "unique_key_taken" };
  }
  batch.write(row, patch);
  return { retried: true, job: queueJobView(row, patch) };
}

// src/lib/validate.ts
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function validateJobIdRequest(data) {
  const { jobId } = asBody(data);
  if (!jobId) return fail("jobId is required");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  return badJobId !== null ? fail(badJobId) : { ok: true, value: { jobId } };
}

// src/handlers/retry.ts
function handleRetry(req) {
  const valid = validateJobIdRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const answer = updateJobs((batch, now) => retryJob(batch, valid.value.jobId, now));
  return answer === null ? json(503, { error: TRANSACTION_FAILED }) : json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleRetry, "admin");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/maintenance", (__context) => {
return (globalThis["pbFleet POST /api/fleet/maintenance 5cf77ff7e0a1"] || (globalThis["pbFleet POST /api/fleet/maintenance 5cf77ff7e0a1"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;
var JOB_EVENTS_RETENTION_BATCH = 500;
function deleteOldEventsStatement(cutoff, limit) {
  return {
    sql: `DELETE FROM ${JOB_EVENTS_COLLECTION} WHERE id IN (SELECT id FROM ${JOB_EVENTS_COLLECTION} WHERE created < {:cutoff} ORDER BY created LIMIT {:limit})`,
    params: { cutoff, limit }
  };
}

// src/lib/config.ts
var KEEP_DONE_ENV = "PB_FLEET_KEEP_DONE";
var DEFAULT_KEEP_DONE = "7d";
var KEEP_FAILED_ENV = "PB_FLEET_KEEP_FAILED";
var DEFAULT_KEEP_FAILED = "30d";
var KEEP_EVENTS_ENV = "PB_FLEET_KEEP_EVENTS";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
function deleteExpiredClaimsStatement(nowMs, limit) {
  return {
    sql: `DELETE FROM ${FLOW_CLAIMS_TABLE} WHERE rowid IN (SELECT rowid FROM ${FLOW_CLAIMS_TABLE} WHERE expires <= {:now} LIMIT {:limit})`,
    params: { now: nowMs, limit }
  };
}
var CLAIMS_RETENTION_BATCH = 2e4;
function deletePassedParksStatement(nowMs, limit) {
  return {
    sql: "DELETE FROM probe_flow WHERE id IN (SELECT id FROM probe_flow WHERE scope = 'group' AND COALESCE(parked_until, '') <= {:now} AND COALESCE(paused, 0) = 0 AND COALESCE(concurrency, 0) = 0 AND COALESCE(rate_limit, 0) = 0 LIMIT {:limit})",
    params: { now: formatPbDate(nowMs), limit }
  };
}
var PARKS_RETENTION_BATCH = 5e3;
function startByPassed(row, nowMs) {
  var _a;
  const startBy = (_a = row.start_by) != null ? _a : "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}
function startByPassedWhere(nowMs) {
  return { sql: "status = 'pending' AND start_by != '' AND start_by <= {:now} AND attempts = 0", params: { now: formatPbDate(nowMs) } };
}
var START_BY_ORDER = ["start_by ASC"];
var START_BY_BATCH = 500;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
function isGroupName(value) {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (code <= 31 || code >= 127 && code <= 159) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function notStartedByError(startBy) {
  return `not started by ${startBy}`;
}

// src/lib/queue.ts
var MAX_PAYLOAD_BYTES = 1048576;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MIN_PRIORITY = -1e3;
var MAX_PRIORITY = 1e3;
var MAX_MAX_ATTEMPTS = 1e3;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
function jsonByteLength(value) {
  const text = JSON.stringify(value);
  return text === void 0 ? 0 : utf8ByteLength(text);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isTerminalStatus(status) {
  return inStatusClass(TERMINAL_STATUSES, status);
}
function notStartedPatch(row, nowMs) {
  var _a;
  return {
    status: "failed",
    finished_at: formatPbDate(nowMs),
    last_error: notStartedByError((_a = row.start_by) != null ? _a : ""),
    version: row.version + 1
  };
}

// src/lib/cron.ts
var MACROS = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
};
var FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 }
];
function atoi(text) {
  return /^[+-]?\d+$/.test(text) ? Number(text) : null;
}
function parseCron(expression) {
  const expanded = Object.prototype.hasOwnProperty.call(MACROS, expression) ? MACROS[expression] : expression;
  const segments = expanded.split(" ");
  if (segments.length !== FIELDS.length) {
    return { ok: false, error: "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces" };
  }
  const sets = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    const values = /* @__PURE__ */ new Set();
    for (const part of segments[i].split(",")) {
      const error = addCronPart(values, part, field.min, field.max);
      if (error !== null) return { ok: false, error: `${field.name} field ${JSON.stringify(segments[i])}: ${error}` };
    }
    sets.push(values);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets;
  return { ok: true, schedule: { minutes, hours, daysOfMonth, months, daysOfWeek } };
}
function addCronPart(values, part, min, max) {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1]);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  let low = min;
  let high = max;
  const range = stepParts[0];
  if (range !== "*") {
    const bounds = range.split("-");
    if (bounds.length > 2) return "a range is written a-b";
    const first = atoi(bounds[0]);
    if (first === null || first < min || first > max) return `values must be numbers from ${min} to ${max}`;
    low = first;
    high = first;
    if (bounds.length === 1) {
      if (step !== 1) return "a step needs * or a range before it";
    } else {
      const last = atoi(bounds[1]);
      if (last === null || last < first || last > max) return `a range must end between its start and ${max}`;
      high = last;
    }
  }
  for (let v = low; v <= high; v += step) values.add(v);
  return null;
}
function cronMatchesMinute(schedule, epochMs) {
  const t = new Date(epochMs);
  return schedule.minutes.has(t.getUTCMinutes()) && schedule.hours.has(t.getUTCHours()) && schedule.daysOfMonth.has(t.getUTCDate()) && schedule.daysOfWeek.has(t.getUTCDay()) && schedule.months.has(t.getUTCMonth() + 1);
}

// src/lib/schedules.ts
var SCHEDULES_PER_TICK = 100;
function enabledSchedulesQuery(minuteMs, limit = SCHEDULES_PER_TICK, afterName = "") {
  return {
    // COALESCE: a hand-made row's empty json field is NULL, which the text shape cannot read.
    sql: "SELECT id, name, probe_key, cron, COALESCE(payload, '') AS payload, priority, max_attempts, enabled, COALESCE(last_enqueued_for, '') AS last_enqueued_for, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key FROM probe_schedules WHERE enabled = TRUE AND name > {:after} AND COALESCE(last_enqueued_for, '') < {:minute} ORDER BY name LIMIT {:limit}",
    params: { after: afterName, limit, minute: formatPbDate(minuteStart(minuteMs)) }
  };
}
var SCHEDULE_COLUMNS_SHAPE = {
  id: "",
  name: "",
  probe_key: "",
  cron: "",
  payload: "",
  priority: 0,
  max_attempts: 0,
  enabled: false,
  last_enqueued_for: "",
  queue: "",
  group_key: ""
};
var SCHEDULE_PAGES_PER_TICK = 10;
function markScheduleStatement(id, patch) {
  return {
    sql: "UPDATE probe_schedules SET last_enqueued_for = {:minute} WHERE id = {:id}",
    params: { id, minute: patch.last_enqueued_for }
  };
}
var MINUTE_MS = 6e4;
function minuteStart(epochMs) {
  return Math.floor(epochMs / MINUTE_MS) * MINUTE_MS;
}
function scheduleUniqueKey(name, minuteMs) {
  return `${SCHEDULE_KEY_PREFIX}${name}:${new Date(minuteStart(minuteMs)).toISOString().slice(0, 16)}Z`;
}
var SCHEDULE_KEY_PREFIX = "pb-fleet-schedule:";
function decideScheduleTick(row, nowMs) {
  var _a;
  if (row.enabled !== true) return { kind: "skip", reason: "disabled" };
  const parsed = parseCron(row.cron);
  if (!parsed.ok) return invalid(row, `cron ${JSON.stringify(row.cron)} is not a valid cron expression: ${parsed.error}`);
  const minute = minuteStart(nowMs);
  if (!cronMatchesMinute(parsed.schedule, minute)) return { kind: "skip", reason: "not_due" };
  const last = row.last_enqueued_for === "" ? null : parsePbDate(row.last_enqueued_for);
  if (last !== null && last >= minute) return { kind: "skip", reason: "already_enqueued" };
  const payload = (_a = row.payload) != null ? _a : null;
  const error = scheduleFieldError(row, payload);
  if (error !== null) return invalid(row, error);
  return {
    kind: "enqueue",
    item: {
      probeKey: row.probe_key,
      queue: row.queue === "" ? DEFAULT_QUEUE : row.queue,
      groupKey: row.group_key,
      timeoutSeconds: 0,
      startBy: "",
      payload,
      priority: row.priority,
      maxAttempts: row.max_attempts,
      uniqueKey: scheduleUniqueKey(row.name, minute),
      runAt: formatPbDate(minute)
    },
    patch: { last_enqueued_for: formatPbDate(minute) }
  };
}
function invalid(row, error) {
  return {
    kind: "skip",
    reason: "invalid",
    error: `probe_schedules ${JSON.stringify(row.name)} (id ${row.id}): ${error}; nothing enqueued`
  };
}
function scheduleFieldError(row, payload) {
  if (typeof row.name !== "string" || row.name === "") return "name is empty";
  if (typeof row.probe_key !== "string" || row.probe_key === "") return "probe_key is empty";
  if (!Number.isInteger(row.priority) || row.priority < MIN_PRIORITY || row.priority > MAX_PRIORITY) {
    return `priority ${row.priority} is not an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  if (!Number.isInteger(row.max_attempts) || row.max_attempts < 0 || row.max_attempts > MAX_MAX_ATTEMPTS) {
    return `max_attempts ${row.max_attempts} is not an integer from 0 (no cap) to ${MAX_MAX_ATTEMPTS}`;
  }
  if (row.queue !== "" && !isQueueName(row.queue)) return `queue ${JSON.stringify(row.queue)} is not a queue name`;
  if (row.group_key !== "" && !isGroupName(row.group_key)) return `group_key is not a group name (${GROUP_NAME_RULE})`;
  const bytes = jsonByteLength(payload);
  if (bytes > MAX_PAYLOAD_BYTES) return `payload is ${bytes} bytes of JSON, more than ${MAX_PAYLOAD_BYTES}`;
  return null;
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
function pruneCompletionsStatement(nowMs) {
  return {
    sql: `DELETE FROM ${JOB_COMPLETIONS_TABLE} WHERE second < {:before}`,
    params: { before: Math.floor(nowMs / 1e3) - JOB_COMPLETIONS_KEEP_SECONDS }
  };
}
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_READY_SHAPE = { ready: 0 };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var UNREADABLE_LEASE_INDEX_PRESENT = {
  sql: "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name = {:name}",
  params: { name: UNREADABLE_LEASE_INDEX_NAME }
};
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function liveUniqueKeyQuery(uniqueKey) {
  return {
    sql: `SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`,
    params: { uniqueKey }
  };
}
var LIVE_KEY_SHAPE = { id: "", queue: "" };
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");
var FINISHED_SQL = "finished_at != ''";

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/enqueue.ts
function enqueueJobs(batch, items) {
  var _a, _b;
  const idByUniqueKey = {};
  const answer = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const key = item.uniqueKey;
    if (key !== "") {
      const known = (_b = idByUniqueKey[key]) != null ? _b : (_a = batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE)) == null ? void 0 : _a.id;
      if (known !== void 0) {
        idByUniqueKey[key] = known;
        answer.push({ id: known, probeKey: item.probeKey, created: false });
        continue;
      }
    }
    const id = batch.insert({
      probe_key: item.probeKey,
      queue: item.queue,
      status: "pending",
      payload: item.payload,
      run_at: item.runAt,
      priority: item.priority,
      max_attempts: item.maxAttempts,
      unique_key: key,
      enqueue_index: index,
      group_key: item.groupKey,
      timeout_seconds: item.timeoutSeconds,
      start_by: item.startBy
    });
    if (key !== "") idByUniqueKey[key] = id;
    answer.push({ id, probeKey: item.probeKey, created: true });
  }
  return answer;
}

// src/lib/retention.ts
var RETENTION_BATCH = 200;
var RETENTION_BUDGET_MS = 15e3;
var RETENTION_CLASSES = COMPLETED_STATUSES;
var CLASS_STATUSES = {
  done: ["done", "cancelled"],
  failed: ["failed"]
};
var CLASS_SETTINGS = {
  done: { env: KEEP_DONE_ENV, fallback: DEFAULT_KEEP_DONE, rows: "done or cancelled" },
  failed: { env: KEEP_FAILED_ENV, fallback: DEFAULT_KEEP_FAILED, rows: "failed" }
};
var UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
function parseKeepDuration(text) {
  if (text === "0") return 0;
  const m = /^(\d+)([smhd])$/.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]];
  return Number.isSafeInteger(ms) ? ms : null;
}
function keepSetting(getenv2, retentionClass) {
  const setting = CLASS_SETTINGS[retentionClass];
  const raw = getenv2(setting.env).trim();
  const ms = parseKeepDuration(raw === "" ? setting.fallback : raw);
  if (ms === null) {
    return {
      retentionClass,
      keepMs: null,
      error: `${setting.env}=${JSON.stringify(raw)} is not a duration such as ${setting.fallback}, 12h, 30m, 90s or 0 (keep forever), so no ${setting.rows} rows are deleted`
    };
  }
  return { retentionClass, keepMs: ms === 0 ? null : ms };
}
function eventsKeep(getenv2) {
  const raw = getenv2(KEEP_EVENTS_ENV).trim();
  if (raw === "") return { keepMs: JOB_EVENTS_KEEP_MS };
  const ms = parseKeepDuration(raw);
  if (ms === null) {
    return {
      keepMs: JOB_EVENTS_KEEP_MS,
      error: `${KEEP_EVENTS_ENV}=${JSON.stringify(raw)} is not a duration such as 15m, 1h or 0 (keep forever), so probe_job_events are kept ${JOB_EVENTS_KEEP_MS / 6e4}m`
    };
  }
  return { keepMs: ms === 0 ? null : ms };
}
function retentionCutoff(nowMs, keepMs) {
  if (keepMs === null || !(keepMs > 0)) return null;
  const cutoffMs = nowMs - keepMs;
  return Number.isFinite(cutoffMs) && cutoffMs >= 0 ? formatPbDate(cutoffMs) : null;
}
function statusesOf(retentionClass) {
  const statuses = Object.prototype.hasOwnProperty.call(CLASS_STATUSES, retentionClass) ? CLASS_STATUSES[retentionClass] : void 0;
  if (statuses === void 0 || statuses.length === 0 || !statuses.every(isTerminalStatus)) {
    throw new Error(`not a retention class: ${JSON.stringify(retentionClass)}`);
  }
  return statuses;
}
function expiredIdsQuery(retentionClass, cutoff, limit) {
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`not a batch size: ${limit}`);
  const statuses = statusesOf(retentionClass).map((status) => `'${status}'`).join(", ");
  return {
    sql: `SELECT id FROM probe_jobs WHERE status IN (${statuses}) AND ${FINISHED_SQL} AND finished_at < {:cutoff} LIMIT {:limit}`,
    params: { cutoff, limit }
  };
}
function deleteExpiredQuery(retentionClass, cutoff, limit) {
  const ids = expiredIdsQuery(retentionClass, cutoff, limit);
  return { sql: `DELETE FROM probe_jobs WHERE id IN (${ids.sql})`, params: ids.params };
}

// src/lib/maintenance.ts
function enqueueDueSchedules(batch, nowMs) {
  const tick2 = { enqueued: [], errors: [] };
  let after = "";
  for (let page = 0; page < SCHEDULE_PAGES_PER_TICK; page++) {
    const rows = batch.queryAll(enabledSchedulesQuery(nowMs, SCHEDULES_PER_TICK, after), SCHEDULE_COLUMNS_SHAPE);
    for (const columns of rows) {
      const row = Object.assign({}, columns, { payload: parseJsonField(columns.payload) });
      const decision = decideScheduleTick(row, nowMs);
      if (decision.kind === "skip") {
        if (decision.error !== void 0) tick2.errors.push(decision.error);
        continue;
      }
      const job = enqueueJobs(batch, [decision.item])[0];
      batch.execute(markScheduleStatement(row.id, decision.patch));
      if (job !== void 0) tick2.enqueued.push({ schedule: row.name, jobId: job.id, created: job.created });
    }
    if (rows.length < SCHEDULES_PER_TICK) return tick2;
    after = rows[rows.length - 1].name;
  }
  tick2.errors.push(`more than ${SCHEDULES_PER_TICK * SCHEDULE_PAGES_PER_TICK} enabled schedules are waiting this minute: those after ${JSON.stringify(after)} by name wait for a later tick`);
  return tick2;
}
var TICK_BATCH = { rows: RETENTION_BATCH, events: JOB_EVENTS_RETENTION_BATCH };
function deleteExpiredBatch(batch, nowMs, getenv2, limits = TICK_BATCH) {
  const tick2 = { deleted: { done: 0, failed: 0 }, events: 0, errors: [] };
  for (const retentionClass of RETENTION_CLASSES) {
    const setting = keepSetting(getenv2, retentionClass);
    if (setting.error !== void 0) tick2.errors.push(setting.error);
    const cutoff = retentionCutoff(nowMs, setting.keepMs);
    if (cutoff === null) continue;
    tick2.deleted[retentionClass] = batch.execute(deleteExpiredQuery(retentionClass, cutoff, limits.rows));
  }
  const events = eventsKeep(getenv2);
  if (events.error !== void 0) tick2.errors.push(events.error);
  const eventsCutoff = retentionCutoff(nowMs, events.keepMs);
  if (eventsCutoff !== null) tick2.events = batch.execute(deleteOldEventsStatement(eventsCutoff, limits.events));
  return tick2;
}
function batchWasFull(tick2) {
  return tick2.deleted.done >= RETENTION_BATCH || tick2.deleted.failed >= RETENTION_BATCH || tick2.events >= JOB_EVENTS_RETENTION_BATCH;
}
function drainRetention(runBatch, clock, budgetMs = RETENTION_BUDGET_MS) {
  const drain = { deleted: { done: 0, failed: 0 }, events: 0, errors: [], batches: 0, drained: false, rolledBack: false };
  const started = clock();
  do {
    const tick2 = runBatch();
    if (tick2 === null) {
      drain.rolledBack = true;
      return drain;
    }
    if (drain.batches === 0) drain.errors = tick2.errors;
    drain.batches++;
    drain.deleted.done += tick2.deleted.done;
    drain.deleted.failed += tick2.deleted.failed;
    drain.events += tick2.events;
    if (!batchWasFull(tick2)) {
      drain.drained = true;
      return drain;
    }
  } while (clock() - started < budgetMs);
  return drain;
}
function ensureJobCounts(batch, nowMs) {
  const found = batch.queryOne(JOB_COUNTS_READY_QUERY, JOB_COUNTS_READY_SHAPE);
  const repair = found === null || found.ready !== 1;
  if (repair) for (const statement of JOB_COUNTS_REPAIR) batch.execute({ sql: statement, params: {} });
  batch.execute(pruneCompletionsStatement(nowMs));
  return repair;
}
function ensureLeaseIndex(batch) {
  var _a;
  if (((_a = batch.queryOne(UNREADABLE_LEASE_INDEX_PRESENT, { n: 0 })) == null ? void 0 : _a.n) === 1) return false;
  batch.execute({ sql: UNREADABLE_LEASE_INDEX_SETUP, params: {} });
  return true;
}
function flowUpkeepBatch(batch, nowMs) {
  let notStarted = 0;
  for (const row of batch.find(startByPassedWhere(nowMs), START_BY_ORDER, START_BY_BATCH)) {
    if (!startByPassed(row, nowMs)) continue;
    batch.write(row, notStartedPatch(row, nowMs));
    notStarted++;
  }
  return {
    notStarted,
    claims: batch.execute(deleteExpiredClaimsStatement(nowMs, CLAIMS_RETENTION_BATCH)),
    parks: batch.execute(deletePassedParksStatement(nowMs, PARKS_RETENTION_BATCH))
  };
}
function flowUpkeepWasFull(upkeep) {
  return upkeep.notStarted >= START_BY_BATCH || upkeep.claims >= CLAIMS_RETENTION_BATCH || upkeep.parks >= PARKS_RETENTION_BATCH;
}
var FLOW_UPKEEP_BATCHES = 50;
function drainFlowUpkeep(runBatch) {
  const total = { notStarted: 0, claims: 0, parks: 0 };
  for (let i = 0; i < FLOW_UPKEEP_BATCHES; i++) {
    const done = runBatch();
    if (done === null) return null;
    total.notStarted += done.notStarted;
    total.claims += done.claims;
    total.parks += done.parks;
    if (!flowUpkeepWasFull(done)) break;
  }
  return total;
}

// src/handlers/maintenance.ts
function flowUpkeep() {
  return drainFlowUpkeep(() => updateJobsBulk("maintenance", (batch, now) => flowUpkeepBatch(batch, now)));
}
function tick() {
  var _a;
  const countsRepaired = updateJobs((batch, now) => ensureJobCounts(batch, now));
  if (countsRepaired === true) logError("pb-fleet maintenance", "the job counts' triggers were missing: rebuilt them and recounted");
  const leaseIndexRepaired = updateJobs((batch) => ensureLeaseIndex(batch));
  if (leaseIndexRepaired === true) logError("pb-fleet maintenance", "the expired-lease index was missing: made it again");
  const schedules = updateJobs((batch, now) => enqueueDueSchedules(batch, now));
  const retention = drainRetention(() => updateJobs((batch, now) => deleteExpiredBatch(batch, now, getenv)), Date.now);
  const flow = flowUpkeep();
  for (const error of ((_a = schedules == null ? void 0 : schedules.errors) != null ? _a : []).concat(retention.errors)) logError("pb-fleet maintenance", error);
  return { countsRepaired, leaseIndexRepaired, schedules, retention, flow };
}
function handleMaintenance(_req) {
  const done = tick();
  if (done.countsRepaired === null || done.leaseIndexRepaired === null || done.schedules === null || done.retention.rolledBack || done.flow === null) {
    return json(503, Object.assign({ error: TRANSACTION_FAILED }, done));
  }
  return json(200, done);
}

// entry.ts
function route(context) {
  return serve(context, handleMaintenance, "admin");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/heartbeat", (__context) => {
return (globalThis["pbFleet POST /api/fleet/heartbeat 1ef8ed22e75e"] || (globalThis["pbFleet POST /api/fleet/heartbeat 1ef8ed22e75e"] = (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function clampLeaseSeconds(raw) {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;
function pbDateMsSql(column) {
  return `(CASE WHEN ${column} GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(${column}, 1, 19), '+0 seconds') = substr(${column}, 1, 19) THEN CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER) * 1000 + CAST(substr(${column}, 21, 3) AS INTEGER) END)`;
}
function formatPbDateSql(ms) {
  return `(strftime('%Y-%m-%d %H:%M:%f', CAST(${ms} AS INTEGER) / 1000.0, 'unixepoch') || 'Z')`;
}

// src/lib/queue-names.ts
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";
function timedOutErrorSql(timeoutSeconds) {
  return `('${TIMED_OUT_BEFORE}' || (${timeoutSeconds}) || '${TIMED_OUT_AFTER}')`;
}

// src/lib/queue.ts
var MAX_BATCH_ITEMS = 100;
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_LEASE_TOKEN_BYTES = 255;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_PROGRESS_BYTES = 4096;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffSql(attempts, jitter) {
  const exponent = `MAX(0, MIN((${attempts}) - 1, ${BACKOFF_MAX_EXPONENT}))`;
  const delay = `${BACKOFF_BASE_MS} * (1 << ${exponent}) * (1 + ${BACKOFF_JITTER} * MIN(MAX(${jitter}, 0), 1))`;
  return `MAX(${BACKOFF_BASE_MS}, MIN(${BACKOFF_CAP_MS}, ${delay}))`;
}
function hasAttemptsLeftSql(attempts, maxAttempts) {
  return `((${maxAttempts}) <= 0 OR (${attempts}) < (${maxAttempts}))`;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function jsonLongerThan(value, maxBytes) {
  const text = JSON.stringify(value);
  return text !== void 0 && utf8LongerThan(text, maxBytes);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
function batchWorkerIdRefusal(caller, items) {
  const first = items[0];
  return first === void 0 ? null : workerIdRefusal(caller, first.workerId);
}
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/batch-plans.ts
var JITTER_STEPS = 1048576;
var JUDGED_SHAPE = { answers: "" };
var WRITTEN_SHAPE = { id: "", answer: "", queue: "", group_key: "" };
var HELD = statusListSql(HELD_STATUSES);
var ROW_COLUMNS = [
  "r.id AS r_id",
  ...["status", "claimed_by", "lease_token", "probe_key", "queue", "group_key", "start_by", "claimed_at"].map((c) => `COALESCE(r.${c}, '') AS r_${c}`),
  ...["version", "reclaim_count", "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds"].map((c) => `COALESCE(r.${c}, 0) AS r_${c}`),
  LEASE_AS_JUDGED_SQL.replace(/lease_expires_at/g, "r.lease_expires_at").replace(/ AS r\.lease_expires_at$/, " AS r_lease_text"),
  `${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "r.lease_expires_at")} AS r_live`,
  `(CASE WHEN COALESCE(r.timeout_seconds, 0) > 0 THEN ${pbDateMsSql("COALESCE(r.claimed_at, '')")} + r.timeout_seconds * 1000 END) AS r_deadline_ms`
];
function judgedItems(itemFields, kind) {
  const fields = itemFields.map((f) => `json_extract(q.value, '$.${f}') AS i_${f}`).join(", ");
  return `WITH i AS (SELECT q.key AS k, ${fields} FROM json_each({:items}) AS q), d AS (SELECT i.*, ${ROW_COLUMNS.join(", ")} FROM i LEFT JOIN probe_jobs AS r ON r.id = i.i_id), v AS MATERIALIZED (SELECT d.*, (${kind}) AS kind FROM d)`;
}
var STALE_TOKEN = "(i_tok IS NOT NULL AND i_tok != r_lease_token)";
var PAST_DEADLINE = "COALESCE({:nowMs} >= r_deadline_ms, 0)";
var ATTEMPTS_LEFT = hasAttemptsLeftSql("r_attempts", "r_max_attempts");
function newValue(rule, current) {
  const cases = rule.map(([kinds, value]) => `WHEN kind IN (${kinds.map((k) => `'${k}'`).join(", ")}) THEN ${value}`);
  return `(CASE ${cases.join(" ")} ELSE ${current} END)`;
}
var VIEW_COLUMNS = ["status", "claimed_by", "lease_expires_at", "version"];
function rowValue(column) {
  return column === "lease_expires_at" ? "r_lease_text" : `r_${column}`;
}
function viewOf(plan) {
  const members = VIEW_COLUMNS.map((c) => {
    const rule = plan.columns[c];
    return `'${c}', ${rule === void 0 ? rowValue(c) : newValue(rule, rowValue(c))}`;
  });
  return `json_object('id', r_id, 'probe_key', r_probe_key, ${members.join(", ")})`;
}
var WRITTEN_VIEW = `json_object('id', id, 'probe_key', COALESCE(probe_key, ''), 'status', COALESCE(status, ''), 'claimed_by', COALESCE(claimed_by, ''), 'lease_expires_at', ${LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "")}, 'version', COALESCE(version, 0))`;
function judgeQuery(plan) {
  const answer = plan.answer(viewOf(plan));
  return `${judgedItems(plan.items, plan.kind)} SELECT COALESCE(json_group_array(json(${answer}) ORDER BY k), '[]') AS answers FROM v`;
}
function writeStatement(plan) {
  const sets = Object.keys(plan.columns).map((c) => `${c} = ${newValue(plan.columns[c], `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedItems(plan.items, plan.kind)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v WHERE probe_jobs.id = v.r_id AND v.kind IN (${quoted(plan.writes)}) RETURNING id, ${plan.writtenAnswer(WRITTEN_VIEW)} AS answer, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key`;
}
var quoted = (kinds) => kinds.map((k) => `'${k}'`).join(", ");
var RENEW = {
  // id, worker, token (absent: none sent), progress as JSON text (absent: none), the lease's end (text, and ms).
  items: ["id", "w", "tok", "p", "e", "em"],
  kind: `CASE WHEN r_id IS NULL OR r_status NOT IN ${HELD} THEN 'refused' WHEN r_claimed_by != i_w OR ${STALE_TOKEN} THEN 'refused' WHEN ${PAST_DEADLINE} THEN 'timed_out' WHEN NOT r_live THEN 'refused' ELSE 'renew' END`,
  writes: ["renew"],
  columns: {
    status: [[["renew"], "'running'"]],
    // Never past the attempt's deadline (leaseEnd).
    lease_expires_at: [[["renew"], `(CASE WHEN r_deadline_ms IS NOT NULL AND r_deadline_ms < i_em THEN ${formatPbDateSql("r_deadline_ms")} ELSE i_e END)`]],
    version: [[["renew"], "r_version + 1"]],
    progress: [[["renew"], "COALESCE(i_p, probe_jobs.progress)"]]
  },
  answer: (view) => `CASE kind WHEN 'renew' THEN json_object('jobId', i_id, 'renewed', json('true'), 'job', ${view}) WHEN 'timed_out' THEN json_object('jobId', i_id, 'renewed', json('false'), 'reason', 'timed_out') ELSE json_object('jobId', i_id, 'renewed', json('false')) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'renewed', json('true'), 'job', ${view})`
};
function heartbeatJudgeQuery(items, nowMs) {
  return { sql: judgeQuery(RENEW), params: planParams(items, nowMs) };
}
function heartbeatWriteStatement(items, nowMs) {
  return { sql: writeStatement(RENEW), params: planParams(items, nowMs) };
}
function planParams(items, nowMs) {
  return { items, now: formatPbDate(nowMs), nowMs };
}
function heartbeatItems(renewals, nowMs) {
  return renewals.map((r) => {
    const endMs = Math.trunc(nowMs + clampLeaseSeconds(r.leaseSeconds) * 1e3);
    const item = { id: r.jobId, w: r.workerId, e: formatPbDate(endMs), em: endMs };
    if (r.leaseToken !== void 0) item["tok"] = r.leaseToken;
    if (r.progress !== void 0) item["p"] = JSON.stringify(r.progress);
    return item;
  });
}
function heartbeatByPlan(batch, renewals, nowMs) {
  return inRounds(renewals, (round) => {
    return runPlan(
      batch,
      heartbeatItems(round, nowMs),
      (items) => heartbeatWriteStatement(items, nowMs),
      (items) => heartbeatJudgeQuery(items, nowMs)
    ).answers;
  });
}
var BACK_TO_PENDING = ["timeout_retry", "retry", "rate_limited"];
var DEAD_LETTER = ["timeout_dead", "dead"];
var RELEASES = ["finish", "requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var NOT_FINISH = ["requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var RELEASE = {
  // id, worker, target, token, result as JSON text, error, the jitter step, rateLimitedFor's due time (absent: none).
  items: ["id", "w", "t", "tok", "res", "err", "j", "ra"],
  kind: `CASE WHEN r_id IS NULL THEN 'refused_not_holder' WHEN r_status NOT IN ${HELD} THEN (CASE WHEN ${statusInSql(COMPLETED_STATUSES, "r_status")} AND r_claimed_by = i_w THEN (CASE WHEN ${STALE_TOKEN} THEN 'refused_stale_token' ELSE 'refused_terminal_same_holder' END) ELSE 'refused_not_holder' END) WHEN r_claimed_by != i_w THEN 'refused_not_holder' WHEN ${STALE_TOKEN} THEN 'refused_stale_token' WHEN i_t = 'pending' THEN (CASE WHEN r_live THEN 'refused_lease_live' WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) ELSE 'requeue' END) WHEN NOT r_live THEN 'refused_not_holder' WHEN i_t = 'retry' AND i_ra IS NOT NULL THEN 'rate_limited' WHEN i_t = 'retry' THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'retry' ELSE 'dead' END) ELSE 'finish' END`,
  writes: RELEASES,
  columns: {
    status: [[["finish"], "i_t"], [BACK_TO_PENDING, "'pending'"], [["requeue"], "'pending'"], [DEAD_LETTER, "'failed'"]],
    claimed_by: [[NOT_FINISH, "''"]],
    lease_token: [[NOT_FINISH, "''"]],
    lease_expires_at: [[BACK_TO_PENDING, "''"]],
    progress: [[BACK_TO_PENDING, "'null'"]],
    run_at: [
      [["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)],
      [["retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", `i_j / ${JITTER_STEPS}.0`)}`)],
      [["rate_limited"], "i_ra"]
    ],
    version: [[RELEASES, "r_version + 1"]],
    finished_at: [[["finish", ...DEAD_LETTER], "{:now}"]],
    consecutive_orphan_count: [[["finish", "retry", "rate_limited"], "0"], [["requeue"], "r_consecutive_orphan_count + 1"]],
    reclaim_count: [[["requeue"], "r_reclaim_count + 1"]],
    requeued_at: [[["requeue"], "{:now}"]],
    dead_lettered_at: [[DEAD_LETTER, "{:now}"]],
    // A release's own error wins (withOutcome), then the rule's.
    last_error: [
      [RELEASES, `(CASE WHEN i_err IS NOT NULL THEN i_err WHEN kind IN ('timeout_retry', 'timeout_dead') THEN ${timedOutErrorSql("r_timeout_seconds")} WHEN kind = 'dead' THEN '${MAX_ATTEMPTS_ERROR}' ELSE probe_jobs.last_error END)`]
    ],
    result: [[RELEASES, "COALESCE(i_res, probe_jobs.result)"]],
    attempts: [[["rate_limited"], "MAX(0, r_attempts - 1)"]],
    // Only where one is set (rateLimitedPatch): a NULL stays NULL.
    start_by: [[["rate_limited"], "(CASE WHEN r_start_by != '' THEN '' ELSE probe_jobs.start_by END)"]]
  },
  answer: (view) => `CASE WHEN kind IN (${quoted(RELEASES)}) THEN json_object('jobId', i_id, 'released', json('true'), 'job', ${view}) ELSE json_object('jobId', i_id, 'released', json('false'), 'reason', kind) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'released', json('true'), 'job', ${view})`
};
function runPlan(batch, items, write, judge) {
  const byId = /* @__PURE__ */ new Map();
  for (const row of batch.queryAll(write(JSON.stringify(items)), WRITTEN_SHAPE)) byId.set(row.id, row);
  const written = items.map((item) => byId.get(item.id));
  const writtenAnswers = JSON.parse(`[${written.filter((row) => row !== void 0).map((row) => row.answer).join(",")}]`);
  const rest = items.filter((_, n) => written[n] === void 0);
  let judged = [];
  if (rest.length > 0) {
    const found = batch.queryOne(judge(JSON.stringify(rest)), JUDGED_SHAPE);
    if (found === null) throw new Error("pb-fleet: the judging query answered nothing");
    judged = JSON.parse(found.answers);
  }
  let w = 0;
  let r = 0;
  const answers = written.map((row) => row !== void 0 ? writtenAnswers[w++] : judged[r++]);
  if (writtenAnswers.length > 0) batch.noteWritten(writtenAnswers.map((answer) => answer.job));
  return { answers, written };
}
function inRounds(items, run) {
  const seen = /* @__PURE__ */ new Map();
  const rounds = [];
  items.forEach((item, n) => {
    var _a, _b;
    const r = (_a = seen.get(item.jobId)) != null ? _a : 0;
    seen.set(item.jobId, r + 1);
    const round = (_b = rounds[r]) != null ? _b : rounds[r] = { items: [], at: [] };
    round.items.push(item);
    round.at.push(n);
  });
  const answers = new Array(items.length);
  for (const round of rounds) {
    const got = run(round.items);
    round.at.forEach((n, k) => {
      answers[n] = got[k];
    });
  }
  return answers;
}

// src/lib/validate.ts
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateRenewRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const lease = readLeaseToken(data);
  if (lease.error !== void 0) return fail(lease.error);
  const leaseToken = lease.token;
  const progress = absentIfNull(asBody(data)["progress"]);
  if (progress !== void 0 && jsonLongerThan(progress, MAX_PROGRESS_BYTES)) {
    return fail(`progress must be at most ${MAX_PROGRESS_BYTES} bytes as JSON`);
  }
  const { jobId, workerId, leaseSeconds } = ids.value;
  return { ok: true, value: { jobId, workerId, leaseSeconds, leaseToken, progress } };
}
function absentIfNull(value) {
  return value === null ? void 0 : value;
}
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return { token: void 0 };
  if (typeof token !== "string" || token === "") return { error: LEASE_TOKEN_ERROR };
  const tooLong = tooLongError("leaseToken", token, MAX_LEASE_TOKEN_BYTES);
  return tooLong === null ? { token } : { error: tooLong };
}
function validateHeartbeatRequest(data) {
  const body = asBody(data);
  const items = batchItems(body, "leases");
  if (typeof items === "string") return fail(items);
  const renewals = [];
  for (let i = 0; i < items.length; i++) {
    const item = asBody(items[i]);
    const valid = validateRenewRequest({
      jobId: item["jobId"],
      workerId: body["workerId"],
      leaseSeconds: body["leaseSeconds"],
      leaseToken: item["leaseToken"],
      progress: item["progress"]
    });
    if (!valid.ok) return fail(`leases[${i}]: ${valid.error}`);
    renewals.push(valid.value);
  }
  return { ok: true, value: renewals };
}
function batchItems(body, field) {
  const { workerId } = body;
  if (!workerId) return "workerId is required";
  if (typeof workerId !== "string") return "workerId must be a string";
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return badWorkerId;
  const items = body[field];
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_ITEMS) {
    return `${field} must be an array of 1 to ${MAX_BATCH_ITEMS} items`;
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "object" || item === null || Array.isArray(item)) return `${field}[${i}] must be an object`;
  }
  return items;
}

// src/handlers/heartbeat.ts
function handleHeartbeat(req) {
  const valid = validateHeartbeatRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = batchWorkerIdRefusal(req.caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  const results = updateJobsBulk("heartbeat", (batch, now) => heartbeatByPlan(batch, valid.value, now));
  if (results === null) return json(503, { error: TRANSACTION_FAILED });
  const answer = { results };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleHeartbeat, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/complete", (__context) => {
return (globalThis["pbFleet POST /api/fleet/complete ac0a3404157c"] || (globalThis["pbFleet POST /api/fleet/complete ac0a3404157c"] = (() => {
var __defProp = Object.defineProperty;
var __defProps = Object.defineProperties;
var __getOwnPropDescs = Object.getOwnPropertyDescriptors;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};
var __spreadProps = (a, b) => __defProps(a, __getOwnPropDescs(b));

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;
var JOB_EVENTS_RETENTION_BATCH = 500;
function deleteOldEventsStatement(cutoff, limit) {
  return {
    sql: `DELETE FROM ${JOB_EVENTS_COLLECTION} WHERE id IN (SELECT id FROM ${JOB_EVENTS_COLLECTION} WHERE created < {:cutoff} ORDER BY created LIMIT {:limit})`,
    params: { cutoff, limit }
  };
}

// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}
var KEEP_DONE_ENV = "PB_FLEET_KEEP_DONE";
var DEFAULT_KEEP_DONE = "7d";
var KEEP_FAILED_ENV = "PB_FLEET_KEEP_FAILED";
var DEFAULT_KEEP_FAILED = "30d";
var KEEP_EVENTS_ENV = "PB_FLEET_KEEP_EVENTS";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function clampLeaseSeconds(raw) {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;
function pbDateMsSql(column) {
  return `(CASE WHEN ${column} GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(${column}, 1, 19), '+0 seconds') = substr(${column}, 1, 19) THEN CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER) * 1000 + CAST(substr(${column}, 21, 3) AS INTEGER) END)`;
}
function formatPbDateSql(ms) {
  return `(strftime('%Y-%m-%d %H:%M:%f', CAST(${ms} AS INTEGER) / 1000.0, 'unixepoch') || 'Z')`;
}

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_COLLECTION = "probe_flow";
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
var FLOW_ROW_SHAPE = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
var FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";
function flowRowsQuery(scopes) {
  const params = {};
  const terms = scopes.map((s, i) => {
    params[`s${i}`] = s.scope;
    params[`n${i}`] = s.name;
    return `(scope = {:s${i}} AND name = {:n${i}})`;
  });
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow WHERE ${terms.join(" OR ")}`, params };
}
function heldBackScopesQuery(nowMs, limit) {
  const held = (match) => `(SELECT COUNT(*) FROM probe_jobs j WHERE ${match} AND ${statusInSql(HELD_STATUSES, "j.status")} AND ${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "j.lease_expires_at")})`;
  const groupHeld = held("j.group_key != '' AND j.group_key = f.name");
  const queueHeld = held("j.queue IN (f.name, CASE WHEN f.name = {:defaultQueue} THEN '' ELSE f.name END)");
  const inWindow = `(SELECT COUNT(*) FROM ${FLOW_CLAIMS_TABLE} c WHERE c.scope = f.scope AND c.name = f.name AND c.at > {:nowMs} - f.rate_period * 1000)`;
  const part = (where) => `SELECT scope, name FROM (SELECT f.scope, f.name FROM probe_flow f WHERE ${where} LIMIT {:limit})`;
  return {
    sql: [
      part("f.paused = 1"),
      part("f.parked_until != '' AND f.parked_until > {:now}"),
      part(`f.scope = 'group' AND f.concurrency > 0 AND ${groupHeld} >= f.concurrency`),
      part(`f.scope = 'queue' AND f.concurrency > 0 AND ${queueHeld} >= f.concurrency`),
      part(`f.rate_limit > 0 AND ${inWindow} >= f.rate_limit`)
    ].join(" UNION "),
    params: { now: formatPbDate(nowMs), nowMs, limit, defaultQueue: DEFAULT_QUEUE }
  };
}
var SCOPE_SHAPE = { scope: "", name: "" };
var HELD_BACK_SCOPES_LIMIT = 5e3;
function scopeTerm(s, params) {
  params["scopeName"] = s.name;
  if (s.scope === "group") return "group_key != '' AND group_key = {:scopeName}";
  return s.name === DEFAULT_QUEUE ? "queue IN ({:scopeName}, '')" : "queue = {:scopeName}";
}
function heldCountQuery(s, nowMs) {
  const params = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND ${statusInSql(HELD_STATUSES)} AND ${LIVE_LEASE_SQL}`,
    params
  };
}
var COUNT_SHAPE = { n: 0 };
var STARTABLE_SQL = "(COALESCE(start_by, '') = '' OR attempts > 0 OR start_by > {:now})";
function windowCountQuery(s, nowMs, periodSeconds) {
  return {
    sql: `SELECT COUNT(*) AS n FROM ${FLOW_CLAIMS_TABLE} WHERE scope = {:scope} AND name = {:name} AND at > {:since}`,
    params: { scope: s.scope, name: s.name, since: nowMs - periodSeconds * 1e3 }
  };
}
function recordWindowClaimsStatement(claims, nowMs) {
  return {
    sql: `INSERT INTO ${FLOW_CLAIMS_TABLE} (scope, name, at, expires) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), {:at}, {:at} + json_extract(value, '$[2]') * 1000 FROM json_each({:claims})`,
    params: { at: nowMs, claims: JSON.stringify(claims.map((c) => [c.scope.scope, c.scope.name, c.periodSeconds])) }
  };
}
function isParked(row, nowMs) {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}
function flowGate(batch, nowMs) {
  const states = {};
  const loadedIds = {};
  let withSettings = 0;
  const logged = [];
  const count = (query) => {
    var _a, _b;
    return (_b = (_a = batch.queryOne(query, COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : 0;
  };
  const stateOf = (s) => {
    const st = states[keyOf(s)];
    if (st === void 0) throw new Error(`pb-fleet: flow scope ${s.scope} ${s.name} was not loaded`);
    return st;
  };
  const load = (rows) => {
    var _a;
    const missing = [];
    const seen = {};
    for (const row of rows) {
      if (loadedIds[row.id]) continue;
      loadedIds[row.id] = true;
      for (const s of scopesOf(row)) {
        const key = keyOf(s);
        if (states[key] !== void 0 || seen[key]) continue;
        seen[key] = true;
        missing.push(s);
      }
    }
    if (missing.length === 0) return;
    const found = {};
    for (const row of batch.queryAll(flowRowsQuery(missing), FLOW_ROW_SHAPE)) found[keyOf({ scope: row.scope, name: row.name })] = row;
    for (const s of missing) {
      const row = (_a = found[keyOf(s)]) != null ? _a : null;
      const state = { row, held: 0, claims: 0 };
      if (row !== null) withSettings++;
      if (row !== null && row.concurrency > 0) state.held = count(heldCountQuery(s, nowMs));
      if (row !== null && row.rate_limit > 0) state.claims = count(windowCountQuery(s, nowMs, row.rate_period));
      states[keyOf(s)] = state;
    }
  };
  return {
    load,
    refusal(row) {
      load([row]);
      if (withSettings === 0) return null;
      const scopes = scopesOf(row);
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && (st.row.paused === 1 || isParked(st.row, nowMs))) return { reason: "paused", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.concurrency > 0 && st.held >= st.row.concurrency) return { reason: "concurrency_limit", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.rate_limit > 0 && st.claims >= st.row.rate_limit) return { reason: "rate_limit", scope: s };
      }
      return null;
    },
    claimed(row) {
      if (withSettings === 0) return;
      for (const s of scopesOf(row)) {
        const st = stateOf(s);
        if (st.row === null) continue;
        if (st.row.concurrency > 0) st.held++;
        if (st.row.rate_limit > 0) {
          st.claims++;
          logged.push({ scope: s, periodSeconds: st.row.rate_period });
        }
      }
    },
    flush() {
      if (logged.length === 0) return;
      batch.execute(recordWindowClaimsStatement(logged, nowMs));
      logged.length = 0;
    }
  };
}
function scopesOf(row) {
  var _a;
  const queue = { scope: "queue", name: storedQueueName(row.queue) };
  const group = (_a = row.group_key) != null ? _a : "";
  return group === "" ? [queue] : [queue, { scope: "group", name: group }];
}
function keyOf(s) {
  return `${s.scope}\0${s.name}`;
}
function parkScopeOf(row) {
  var _a;
  const group = (_a = row.group_key) != null ? _a : "";
  return group === "" ? { scope: "queue", name: storedQueueName(row.queue) } : { scope: "group", name: group };
}
var NEW_ID_SQL = "substr(lower(hex(randomblob(8))), 1, 15)";
function parkStatement(s, untilMs, nowMs) {
  const until = formatPbDate(untilMs);
  return {
    sql: `INSERT INTO probe_flow (id, scope, name, parked_until, created, updated) VALUES (${NEW_ID_SQL}, {:scope}, {:name}, {:until}, {:stamp}, {:stamp}) ON CONFLICT (scope, name) DO UPDATE SET parked_until = MAX(COALESCE(parked_until, ''), excluded.parked_until), updated = excluded.updated`,
    params: { scope: s.scope, name: s.name, until, stamp: formatPbDate(nowMs) }
  };
}
function parkFor(batch, row, seconds, nowMs) {
  batch.execute(parkStatement(parkScopeOf(row), rateLimitedUntilMs(nowMs, seconds), nowMs));
}
function rateLimitedUntilMs(nowMs, seconds) {
  return nowMs + Math.round(seconds * 1e3);
}
function nextQueueQuery(after) {
  return after === null ? { sql: "SELECT queue AS name FROM probe_jobs ORDER BY queue LIMIT 1", params: {} } : { sql: "SELECT queue AS name FROM probe_jobs WHERE queue > {:after} ORDER BY queue LIMIT 1", params: { after } };
}
var NAME_SHAPE = { name: "" };
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}
function startByPassed(row, nowMs) {
  var _a;
  const startBy = (_a = row.start_by) != null ? _a : "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var MAX_RATE_LIMITED_FOR_SECONDS = 86400;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";
function timedOutErrorSql(timeoutSeconds) {
  return `('${TIMED_OUT_BEFORE}' || (${timeoutSeconds}) || '${TIMED_OUT_AFTER}')`;
}

// src/lib/queue.ts
var MAX_BATCH_ITEMS = 100;
var MAX_RESULT_BYTES = 1048576;
var MAX_ERROR_BYTES = 65536;
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_LEASE_TOKEN_BYTES = 255;
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function retryBackoffSql(attempts, jitter) {
  const exponent = `MAX(0, MIN((${attempts}) - 1, ${BACKOFF_MAX_EXPONENT}))`;
  const delay = `${BACKOFF_BASE_MS} * (1 << ${exponent}) * (1 + ${BACKOFF_JITTER} * MIN(MAX(${jitter}, 0), 1))`;
  return `MAX(${BACKOFF_BASE_MS}, MIN(${BACKOFF_CAP_MS}, ${delay}))`;
}
function hasAttemptsLeftSql(attempts, maxAttempts) {
  return `((${maxAttempts}) <= 0 OR (${attempts}) < (${maxAttempts}))`;
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}
function utf8LongerThan(text, maxBytes) {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}
function jsonLongerThan(value, maxBytes) {
  const text = JSON.stringify(value);
  return text !== void 0 && utf8LongerThan(text, maxBytes);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isTerminalStatus(status) {
  return inStatusClass(TERMINAL_STATUSES, status);
}
function isDue(row, nowMs) {
  return row.run_at <= formatPbDate(nowMs);
}
function isClaimable(row, nowMs) {
  return row.status === "pending" && isDue(row, nowMs) || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
var REFERENCE_STEAL = { kind: "reference" };
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2, stealRule = REFERENCE_STEAL, flow) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  if (steal && isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  if (startByPassed(row, nowMs)) return { kind: "refused", reason: "start_by_passed" };
  const held = flow === void 0 ? null : flow(row);
  if (held !== null) return { kind: "refused", reason: held };
  const claimedAt = formatPbDate(nowMs);
  const patch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds, deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: claimedAt })),
    lease_token: newLeaseToken2(),
    // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim, and a timeout's deadline from it.
    claimed_at: claimedAt,
    attempts: row.attempts + 1
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
var ORPHAN_CAP_REASON = "orphan_cap";
var GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
var GIVE_UP_AFTER = " times in a row without a release";
function giveUpErrorSql(orphanCount) {
  return `('${GIVE_UP_BEFORE}' || ((${orphanCount}) + 1) || '${GIVE_UP_AFTER}')`;
}
function giveUpPatch(row, nowMs) {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds, deadline) {
  const end = nowMs + clampLeaseSeconds(leaseSeconds) * 1e3;
  return formatPbDate(deadline === null ? end : Math.min(end, deadline));
}

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function workerIdRefusal(caller, workerId) {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}
function batchWorkerIdRefusal(caller, items) {
  const first = items[0];
  return first === void 0 ? null : workerIdRefusal(caller, first.workerId);
}
function isOwnWorkerId(identityId, workerId) {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}
function mayTakeQueue(caller, queue) {
  if (caller.kind === "admin" || caller.queues.length === 0) return true;
  return caller.queues.indexOf(storedQueueName(queue)) !== -1;
}
function claimQueues(caller, asked) {
  if (caller.kind === "admin" || caller.queues.length === 0) return { queues: asked };
  if (asked === null) return { queues: caller.queues };
  for (const queue of asked) if (!mayTakeQueue(caller, queue)) return { refusal: queueRefusal(queue) };
  return { queues: asked };
}
function queueRefusal(queue) {
  return `queue ${queue} is not among this worker identity's queues (nothing was written)`;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}
function queueJobView(row, patch) {
  var _a, _b, _c, _d, _e, _f, _g, _h;
  const p = patch != null ? patch : {};
  const view = jobView(row, patch);
  view.payload = parseJsonField(row.payload);
  view.priority = row.priority;
  view.run_at = (_a = p.run_at) != null ? _a : row.run_at;
  view.attempts = (_b = p.attempts) != null ? _b : row.attempts;
  view.max_attempts = row.max_attempts;
  view.last_error = (_c = p.last_error) != null ? _c : row.last_error;
  view.dead_lettered_at = (_d = p.dead_lettered_at) != null ? _d : row.dead_lettered_at;
  view.unique_key = row.unique_key;
  view.queue = storedQueueName(row.queue);
  view.progress = p.progress !== void 0 ? p.progress : parseJsonField(row.progress);
  view.group_key = (_e = row.group_key) != null ? _e : "";
  view.timeout_seconds = (_f = row.timeout_seconds) != null ? _f : 0;
  const deadline = isHeldStatus((_g = p.status) != null ? _g : row.status) ? deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: (_h = p.claimed_at) != null ? _h : row.claimed_at }) : null;
  view.deadline = deadline === null ? null : formatPbDate(deadline);
  return view;
}

// src/adapter/runtime.ts
function newLeaseToken() {
  return $security.randomString(24);
}
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var RELEASE_TARGETS = ["done", "failed", "pending", "retry"];
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
function pendingDueWhere(priority, nowMs, probeKeyPrefix, use = "filter", queue, held = NONE_HELD) {
  const params = { priority, now: formatPbDate(nowMs) };
  return withPrefix(
    `${queueTerm(queue, params)}status = 'pending' AND ${levelTerms(use, "priority = {:priority} AND run_at <= {:now}")} AND ${STARTABLE_SQL}${heldBackTerms(held, params)}`,
    params,
    probeKeyPrefix,
    use
  );
}
function pendingGroupsCte(params, queue, groupLimit) {
  params["groupQueue"] = queue;
  params["groupLimit"] = groupLimit;
  const next = "SELECT group_key FROM probe_jobs WHERE status = 'pending' AND queue = {:groupQueue}";
  return `WITH RECURSIVE grp(k) AS (SELECT (${next} ORDER BY group_key LIMIT 1) UNION ALL SELECT (${next} AND group_key > grp.k ORDER BY group_key LIMIT 1) FROM grp WHERE grp.k IS NOT NULL LIMIT {:groupLimit})`;
}
function pendingGroupCountQuery(queue, limit) {
  const params = {};
  return { sql: `${pendingGroupsCte(params, queue, limit + 1)} SELECT COUNT(*) AS n FROM grp WHERE k IS NOT NULL`, params };
}
var MAX_GROUP_WALK = 4096;
function pendingDueByGroupWhere(priority, nowMs, probeKeyPrefix, queue, heldGroups, want) {
  const params = { priority, now: formatPbDate(nowMs), groupWant: want };
  const held = heldGroups.map((group, i) => {
    params[`heldGroup${i}`] = group;
    return `{:heldGroup${i}}`;
  });
  const inGroup = withPrefix(
    `status = 'pending' AND queue = {:groupQueue} AND group_key = grp.k AND priority = {:priority} AND run_at <= {:now} AND ${STARTABLE_SQL}`,
    params,
    probeKeyPrefix,
    "filter"
  );
  const cte = pendingGroupsCte(params, queue, MAX_GROUP_WALK + 1);
  return {
    sql: `id IN (${cte} SELECT r.id FROM grp, probe_jobs r WHERE grp.k IS NOT NULL AND grp.k NOT IN (${held.join(", ")}) AND r.id IN (SELECT id FROM probe_jobs WHERE ${inGroup.sql} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:groupWant}))`,
    params: inGroup.params
  };
}
var NONE_HELD = { queues: [], groups: [] };
function heldBackTerms(held, params) {
  let terms = "";
  if (held.queues.length > 0) {
    const names = storedQueueValues(held.queues).map((queue, i) => {
      params[`heldQueue${i}`] = queue;
      return `{:heldQueue${i}}`;
    });
    terms += ` AND queue NOT IN (${names.join(", ")})`;
  }
  if (held.groups.length > 0) {
    const names = held.groups.map((group, i) => {
      params[`heldGroup${i}`] = group;
      return `{:heldGroup${i}}`;
    });
    terms += ` AND group_key NOT IN (${names.join(", ")})`;
  }
  return terms;
}
function queueTerm(queue, params) {
  if (queue === void 0) return "";
  params["queue"] = queue;
  return "queue = {:queue} AND ";
}
function storedQueueValues(queues) {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}
function levelTerms(use, terms) {
  return use === "range" ? terms.replace(/\b(priority|run_at) /g, "+$1 ") : terms;
}
function familyProbeQuery(probeKeyPrefix) {
  const family = withPrefix("status = 'pending'", {}, probeKeyPrefix);
  return {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM probe_jobs WHERE ${family.sql} LIMIT ${FAMILY_PROBE_LIMIT})`,
    params: family.params
  };
}
var FAMILY_PROBE_LIMIT = 5e3;
var FAMILY_PROBE_SHAPE = { n: 0 };
var PRIORITY_LEVEL_SHAPE = { found: 0, priority: 0 };
function topPriorityQuery(probeKeyPrefix, below, use = "filter", queue) {
  const params = below === void 0 ? {} : { below };
  const pending = `${queueTerm(queue, params)}status = 'pending'`;
  const where = below === void 0 ? withPrefix(pending, params, probeKeyPrefix, use) : withPrefix(`${pending} AND ${levelTerms(use, "priority < {:below}")}`, params, probeKeyPrefix, use);
  return {
    sql: `SELECT MAX(priority) IS NOT NULL AS found, COALESCE(MAX(priority), 0) AS priority FROM probe_jobs WHERE ${where.sql}`,
    params: where.params
  };
}
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix, queues = null, held = NONE_HELD) {
  const params = { now: formatPbDate(nowMs) };
  if (queues === null) return withPrefix(`${EXPIRED_LEASE_SQL}${heldBackTerms(held, params)}`, params, probeKeyPrefix);
  const names = storedQueueValues(queues).map((queue, i) => {
    params[`queue${i}`] = queue;
    return `{:queue${i}}`;
  });
  return withPrefix(`${EXPIRED_LEASE_SQL} AND queue IN (${names.join(", ")})${heldBackTerms(held, params)}`, params, probeKeyPrefix);
}
function compareClaimOrder(a, b) {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.run_at !== b.run_at) return a.run_at < b.run_at ? -1 : 1;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  if (a.enqueue_index !== b.enqueue_index) return a.enqueue_index - b.enqueue_index;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
function firstInClaimOrder(candidates, limit) {
  return candidates.slice().sort(compareClaimOrder).slice(0, limit);
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");
var FINISHED_SQL = "finished_at != ''";

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/batch-plans.ts
var JITTER_STEPS = 1048576;
var JUDGED_SHAPE = { answers: "" };
var WRITTEN_SHAPE = { id: "", answer: "", queue: "", group_key: "" };
var HELD = statusListSql(HELD_STATUSES);
var ROW_COLUMNS = [
  "r.id AS r_id",
  ...["status", "claimed_by", "lease_token", "probe_key", "queue", "group_key", "start_by", "claimed_at"].map((c) => `COALESCE(r.${c}, '') AS r_${c}`),
  ...["version", "reclaim_count", "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds"].map((c) => `COALESCE(r.${c}, 0) AS r_${c}`),
  LEASE_AS_JUDGED_SQL.replace(/lease_expires_at/g, "r.lease_expires_at").replace(/ AS r\.lease_expires_at$/, " AS r_lease_text"),
  `${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "r.lease_expires_at")} AS r_live`,
  `(CASE WHEN COALESCE(r.timeout_seconds, 0) > 0 THEN ${pbDateMsSql("COALESCE(r.claimed_at, '')")} + r.timeout_seconds * 1000 END) AS r_deadline_ms`
];
function judgedItems(itemFields, kind) {
  const fields = itemFields.map((f) => `json_extract(q.value, '$.${f}') AS i_${f}`).join(", ");
  return `WITH i AS (SELECT q.key AS k, ${fields} FROM json_each({:items}) AS q), d AS (SELECT i.*, ${ROW_COLUMNS.join(", ")} FROM i LEFT JOIN probe_jobs AS r ON r.id = i.i_id), v AS MATERIALIZED (SELECT d.*, (${kind}) AS kind FROM d)`;
}
var STALE_TOKEN = "(i_tok IS NOT NULL AND i_tok != r_lease_token)";
var PAST_DEADLINE = "COALESCE({:nowMs} >= r_deadline_ms, 0)";
var ATTEMPTS_LEFT = hasAttemptsLeftSql("r_attempts", "r_max_attempts");
function newValue(rule, current) {
  const cases = rule.map(([kinds, value]) => `WHEN kind IN (${kinds.map((k) => `'${k}'`).join(", ")}) THEN ${value}`);
  return `(CASE ${cases.join(" ")} ELSE ${current} END)`;
}
var VIEW_COLUMNS = ["status", "claimed_by", "lease_expires_at", "version"];
function rowValue(column) {
  return column === "lease_expires_at" ? "r_lease_text" : `r_${column}`;
}
function viewOf(plan) {
  const members = VIEW_COLUMNS.map((c) => {
    const rule = plan.columns[c];
    return `'${c}', ${rule === void 0 ? rowValue(c) : newValue(rule, rowValue(c))}`;
  });
  return `json_object('id', r_id, 'probe_key', r_probe_key, ${members.join(", ")})`;
}
var WRITTEN_VIEW = `json_object('id', id, 'probe_key', COALESCE(probe_key, ''), 'status', COALESCE(status, ''), 'claimed_by', COALESCE(claimed_by, ''), 'lease_expires_at', ${LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "")}, 'version', COALESCE(version, 0))`;
function judgeQuery(plan) {
  const answer = plan.answer(viewOf(plan));
  return `${judgedItems(plan.items, plan.kind)} SELECT COALESCE(json_group_array(json(${answer}) ORDER BY k), '[]') AS answers FROM v`;
}
function writeStatement(plan) {
  const sets = Object.keys(plan.columns).map((c) => `${c} = ${newValue(plan.columns[c], `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedItems(plan.items, plan.kind)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v WHERE probe_jobs.id = v.r_id AND v.kind IN (${quoted(plan.writes)}) RETURNING id, ${plan.writtenAnswer(WRITTEN_VIEW)} AS answer, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key`;
}
var quoted = (kinds) => kinds.map((k) => `'${k}'`).join(", ");
var RENEW = {
  // id, worker, token (absent: none sent), progress as JSON text (absent: none), the lease's end (text, and ms).
  items: ["id", "w", "tok", "p", "e", "em"],
  kind: `CASE WHEN r_id IS NULL OR r_status NOT IN ${HELD} THEN 'refused' WHEN r_claimed_by != i_w OR ${STALE_TOKEN} THEN 'refused' WHEN ${PAST_DEADLINE} THEN 'timed_out' WHEN NOT r_live THEN 'refused' ELSE 'renew' END`,
  writes: ["renew"],
  columns: {
    status: [[["renew"], "'running'"]],
    // Never past the attempt's deadline (leaseEnd).
    lease_expires_at: [[["renew"], `(CASE WHEN r_deadline_ms IS NOT NULL AND r_deadline_ms < i_em THEN ${formatPbDateSql("r_deadline_ms")} ELSE i_e END)`]],
    version: [[["renew"], "r_version + 1"]],
    progress: [[["renew"], "COALESCE(i_p, probe_jobs.progress)"]]
  },
  answer: (view) => `CASE kind WHEN 'renew' THEN json_object('jobId', i_id, 'renewed', json('true'), 'job', ${view}) WHEN 'timed_out' THEN json_object('jobId', i_id, 'renewed', json('false'), 'reason', 'timed_out') ELSE json_object('jobId', i_id, 'renewed', json('false')) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'renewed', json('true'), 'job', ${view})`
};
function planParams(items, nowMs) {
  return { items, now: formatPbDate(nowMs), nowMs };
}
var BACK_TO_PENDING = ["timeout_retry", "retry", "rate_limited"];
var DEAD_LETTER = ["timeout_dead", "dead"];
var RELEASES = ["finish", "requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var NOT_FINISH = ["requeue", ...BACK_TO_PENDING, ...DEAD_LETTER];
var RELEASE = {
  // id, worker, target, token, result as JSON text, error, the jitter step, rateLimitedFor's due time (absent: none).
  items: ["id", "w", "t", "tok", "res", "err", "j", "ra"],
  kind: `CASE WHEN r_id IS NULL THEN 'refused_not_holder' WHEN r_status NOT IN ${HELD} THEN (CASE WHEN ${statusInSql(COMPLETED_STATUSES, "r_status")} AND r_claimed_by = i_w THEN (CASE WHEN ${STALE_TOKEN} THEN 'refused_stale_token' ELSE 'refused_terminal_same_holder' END) ELSE 'refused_not_holder' END) WHEN r_claimed_by != i_w THEN 'refused_not_holder' WHEN ${STALE_TOKEN} THEN 'refused_stale_token' WHEN i_t = 'pending' THEN (CASE WHEN r_live THEN 'refused_lease_live' WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) ELSE 'requeue' END) WHEN NOT r_live THEN 'refused_not_holder' WHEN i_t = 'retry' AND i_ra IS NOT NULL THEN 'rate_limited' WHEN i_t = 'retry' THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'retry' ELSE 'dead' END) ELSE 'finish' END`,
  writes: RELEASES,
  columns: {
    status: [[["finish"], "i_t"], [BACK_TO_PENDING, "'pending'"], [["requeue"], "'pending'"], [DEAD_LETTER, "'failed'"]],
    claimed_by: [[NOT_FINISH, "''"]],
    lease_token: [[NOT_FINISH, "''"]],
    lease_expires_at: [[BACK_TO_PENDING, "''"]],
    progress: [[BACK_TO_PENDING, "'null'"]],
    run_at: [
      [["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)],
      [["retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", `i_j / ${JITTER_STEPS}.0`)}`)],
      [["rate_limited"], "i_ra"]
    ],
    version: [[RELEASES, "r_version + 1"]],
    finished_at: [[["finish", ...DEAD_LETTER], "{:now}"]],
    consecutive_orphan_count: [[["finish", "retry", "rate_limited"], "0"], [["requeue"], "r_consecutive_orphan_count + 1"]],
    reclaim_count: [[["requeue"], "r_reclaim_count + 1"]],
    requeued_at: [[["requeue"], "{:now}"]],
    dead_lettered_at: [[DEAD_LETTER, "{:now}"]],
    // A release's own error wins (withOutcome), then the rule's.
    last_error: [
      [RELEASES, `(CASE WHEN i_err IS NOT NULL THEN i_err WHEN kind IN ('timeout_retry', 'timeout_dead') THEN ${timedOutErrorSql("r_timeout_seconds")} WHEN kind = 'dead' THEN '${MAX_ATTEMPTS_ERROR}' ELSE probe_jobs.last_error END)`]
    ],
    result: [[RELEASES, "COALESCE(i_res, probe_jobs.result)"]],
    attempts: [[["rate_limited"], "MAX(0, r_attempts - 1)"]],
    // Only where one is set (rateLimitedPatch): a NULL stays NULL.
    start_by: [[["rate_limited"], "(CASE WHEN r_start_by != '' THEN '' ELSE probe_jobs.start_by END)"]]
  },
  answer: (view) => `CASE WHEN kind IN (${quoted(RELEASES)}) THEN json_object('jobId', i_id, 'released', json('true'), 'job', ${view}) ELSE json_object('jobId', i_id, 'released', json('false'), 'reason', kind) END`,
  writtenAnswer: (view) => `json_object('jobId', id, 'released', json('true'), 'job', ${view})`
};
function completeJudgeQuery(items, nowMs) {
  return { sql: judgeQuery(RELEASE), params: planParams(items, nowMs) };
}
function completeWriteStatement(items, nowMs) {
  return { sql: writeStatement(RELEASE), params: planParams(items, nowMs) };
}
function completeItems(releases, nowMs, jitterSteps) {
  return releases.map((r, n) => {
    var _a;
    const item = { id: r.jobId, w: r.workerId, t: r.target, j: (_a = jitterSteps[n]) != null ? _a : 0 };
    if (r.leaseToken !== void 0) item["tok"] = r.leaseToken;
    if (r.result !== void 0) item["res"] = JSON.stringify(r.result);
    if (r.error !== void 0) item["err"] = r.error;
    if (r.target === "retry" && r.rateLimitedFor !== void 0) item["ra"] = formatPbDate(rateLimitedUntilMs(nowMs, r.rateLimitedFor));
    return item;
  });
}
function completeByPlan(batch, releases, nowMs, random) {
  return inRounds(releases, (round) => {
    const steps = round.map(() => Math.min(JITTER_STEPS - 1, Math.floor(random() * JITTER_STEPS)));
    const { answers, written } = runPlan(
      batch,
      completeItems(round, nowMs, steps),
      (items) => completeWriteStatement(items, nowMs),
      (items) => completeJudgeQuery(items, nowMs)
    );
    round.forEach((release, n) => {
      const row = written[n];
      if (row !== void 0 && release.target === "retry" && release.rateLimitedFor !== void 0) {
        parkFor(batch, { queue: row.queue, group_key: row.group_key }, release.rateLimitedFor, nowMs);
      }
    });
    return answers;
  });
}
function runPlan(batch, items, write, judge) {
  const byId = /* @__PURE__ */ new Map();
  for (const row of batch.queryAll(write(JSON.stringify(items)), WRITTEN_SHAPE)) byId.set(row.id, row);
  const written = items.map((item) => byId.get(item.id));
  const writtenAnswers = JSON.parse(`[${written.filter((row) => row !== void 0).map((row) => row.answer).join(",")}]`);
  const rest = items.filter((_, n) => written[n] === void 0);
  let judged = [];
  if (rest.length > 0) {
    const found = batch.queryOne(judge(JSON.stringify(rest)), JUDGED_SHAPE);
    if (found === null) throw new Error("pb-fleet: the judging query answered nothing");
    judged = JSON.parse(found.answers);
  }
  let w = 0;
  let r = 0;
  const answers = written.map((row) => row !== void 0 ? writtenAnswers[w++] : judged[r++]);
  if (writtenAnswers.length > 0) batch.noteWritten(writtenAnswers.map((answer) => answer.job));
  return { answers, written };
}
function inRounds(items, run) {
  const seen = /* @__PURE__ */ new Map();
  const rounds = [];
  items.forEach((item, n) => {
    var _a, _b;
    const r = (_a = seen.get(item.jobId)) != null ? _a : 0;
    seen.set(item.jobId, r + 1);
    const round = (_b = rounds[r]) != null ? _b : rounds[r] = { items: [], at: [] };
    round.items.push(item);
    round.at.push(n);
  });
  const answers = new Array(items.length);
  for (const round of rounds) {
    const got = run(round.items);
    round.at.forEach((n, k) => {
      answers[n] = got[k];
    });
  }
  return answers;
}

// src/lib/claim-next.ts
var CLAIM_NEXT_ROUNDS = 4;
var MAX_PASSES = 64;
var MAX_CANDIDATES = 500;
var MAX_HELD_GROUPS = 12e3;
function claimNext(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  const claimed = [];
  const stealRule = { kind: "count_orphans", cap: orphanCap2 };
  const gate = flowGate(batch, nowMs);
  const held = { queues: [], groups: [] };
  const isHeld = {};
  const holdBack = (s) => {
    const key = `${s.scope}\0${s.name}`;
    if (isHeld[key]) return;
    isHeld[key] = true;
    (s.scope === "queue" ? held.queues : held.groups).push(s.name);
  };
  for (const s of batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE)) holdBack(s);
  const heldFromStart = held.queues.length + held.groups.length;
  let queues = req.queues === null && heldFromStart > 0 ? otherQueues(batch, held.queues) : req.queues;
  if (queues !== null) queues = queues.filter((q) => held.queues.indexOf(q) === -1);
  let rounds = 0;
  for (let pass = 0; rounds < CLAIM_NEXT_ROUNDS && pass < MAX_PASSES && claimed.length < req.limit; pass++) {
    if (queues !== null && queues.length === 0) break;
    const heldDuringCall = held.queues.length + held.groups.length - heldFromStart;
    const want = pass === 0 ? req.limit : Math.min(MAX_CANDIDATES, req.limit - claimed.length + heldDuringCall);
    const except = queues === null ? held : { queues: [], groups: held.groups };
    const candidates = firstInClaimOrder(
      duePendingOf(batch, nowMs, req.probeKeyPrefix, want, queues, except).concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix, queues, except), CLAIM_ORDER, want)),
      want
    );
    gate.load(candidates);
    let gaveUp = false;
    let heldBack = false;
    for (const row of candidates) {
      if (claimed.length >= req.limit) break;
      const heldBy = { scope: null };
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken2, stealRule, (r) => {
        const refusal = gate.refusal(r);
        heldBy.scope = refusal === null ? null : refusal.scope;
        return refusal === null ? null : refusal.reason;
      });
      if (decision.kind === "win") {
        batch.write(row, decision.patch);
        gate.claimed(row);
        claimed.push({ row, patch: decision.patch });
      } else if (decision.kind === "give_up" || decision.kind === "timed_out") {
        batch.write(row, decision.patch);
        gaveUp = true;
      } else if (heldBy.scope !== null) {
        const scope = heldBy.scope;
        holdBack(scope);
        if (held.groups.length > MAX_HELD_GROUPS) break;
        if (scope.scope === "queue") queues = queues === null ? otherQueues(batch, held.queues) : queues.filter((q) => q !== scope.name);
        else if (queues === null) queues = otherQueues(batch, held.queues);
        heldBack = true;
      }
    }
    if (held.groups.length > MAX_HELD_GROUPS) break;
    if (gaveUp) rounds++;
    else if (!heldBack) break;
  }
  gate.flush();
  return claimed;
}
function heldBackQueues(batch, nowMs) {
  const scopes = batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE);
  if (scopes.length >= HELD_BACK_SCOPES_LIMIT) return null;
  return scopes.filter((s) => s.scope === "queue").map((s) => s.name);
}
function claimQueuesBesides(batch, queues, heldQueues) {
  if (heldQueues === null) return null;
  if (queues !== null) return queues.filter((q) => heldQueues.indexOf(q) === -1);
  return heldQueues.length === 0 ? null : otherQueues(batch, heldQueues);
}
function otherQueues(batch, heldQueues) {
  const names = [];
  let after = null;
  for (let i = 0; i <= MAX_CLAIM_QUEUES + heldQueues.length + 1; i++) {
    const next = batch.queryOne(nextQueueQuery(after), NAME_SHAPE);
    if (next === null) return names;
    after = next.name;
    const name = storedQueueName(next.name);
    if (heldQueues.indexOf(name) === -1 && names.indexOf(name) === -1) names.push(name);
    if (names.length > MAX_CLAIM_QUEUES) return null;
  }
  return null;
}
function duePendingOf(batch, nowMs, probeKeyPrefix, want, queues, except) {
  var _a, _b;
  if (queues === null) return duePending(batch, nowMs, probeKeyPrefix, want, void 0, except);
  const rows = [];
  for (const queue of storedQueueValues(queues)) {
    const byGroup = except.groups.length > 0 && ((_b = (_a = batch.queryOne(pendingGroupCountQuery(queue, MAX_GROUP_WALK), COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : MAX_GROUP_WALK + 1) <= MAX_GROUP_WALK;
    const found = byGroup ? duePending(batch, nowMs, probeKeyPrefix, want, queue, except, (priority) => pendingDueByGroupWhere(priority, nowMs, probeKeyPrefix, queue, except.groups, want)) : duePending(batch, nowMs, probeKeyPrefix, want, queue, except);
    for (const row of found) rows.push(row);
  }
  return rows;
}
function duePending(batch, nowMs, probeKeyPrefix, want, queue, except = NONE_HELD, levelWhere) {
  const use = prefixUse(batch, probeKeyPrefix);
  const rows = [];
  let level = batch.queryOne(topPriorityQuery(probeKeyPrefix, void 0, use, queue), PRIORITY_LEVEL_SHAPE);
  while (level !== null && level.found === 1 && rows.length < want) {
    const where = levelWhere !== void 0 ? levelWhere(level.priority) : pendingDueWhere(level.priority, nowMs, probeKeyPrefix, use, queue, except);
    const found = batch.find(where, LEVEL_ORDER, want - rows.length);
    for (const row of found) rows.push(row);
    if (rows.length >= want) break;
    level = batch.queryOne(topPriorityQuery(probeKeyPrefix, level.priority, use, queue), PRIORITY_LEVEL_SHAPE);
  }
  return rows;
}
function prefixUse(batch, probeKeyPrefix) {
  if (probeKeyPrefix === "") return "filter";
  const family = batch.queryOne(familyProbeQuery(probeKeyPrefix), FAMILY_PROBE_SHAPE);
  return family !== null && family.n < FAMILY_PROBE_LIMIT ? "range" : "filter";
}

// src/lib/claim-plan.ts
var FLOW_DEMAND = {
  /** No setting in effect. */
  none: 0,
  /** Only queues paused or parked: the plan claims from the other queues, as claimNext would. */
  heldQueues: 1,
  /** A group paused or parked, a concurrency or a rate limit: claimNext counts them per candidate. */
  counted: 2
};
function flowDemandQuery(nowMs) {
  const held = "(paused = 1 OR (parked_until != '' AND parked_until > {:now}))";
  return {
    sql: `SELECT CASE WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE concurrency > 0 OR rate_limit > 0 OR (scope = 'group' AND ${held})) THEN ${FLOW_DEMAND.counted} WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE ${held}) THEN ${FLOW_DEMAND.heldQueues} ELSE ${FLOW_DEMAND.none} END AS n`,
    params: { now: formatPbDate(nowMs) }
  };
}
var WINS = ["claim", "steal"];
var TIMED_OUT = ["timeout_retry", "timeout_dead"];
var DEAD_LETTER2 = ["timeout_dead", "dead", "orphan_cap"];
var GIVE_UPS = ["timeout_retry", ...DEAD_LETTER2];
var WRITES = [...WINS, ...GIVE_UPS];
var READ = [
  "id",
  "status",
  "claimed_by",
  "lease_token",
  "probe_key",
  "queue",
  "group_key",
  "start_by",
  "claimed_at",
  "version",
  "reclaim_count",
  "consecutive_orphan_count",
  "attempts",
  "max_attempts",
  "timeout_seconds",
  "lease_expires_at",
  "priority",
  "run_at",
  "created",
  "enqueue_index"
];
var CANDIDATE_COLUMNS = [
  ...ROW_COLUMNS,
  "COALESCE(r.priority, 0) AS r_priority",
  "COALESCE(r.run_at, '') AS r_run_at",
  "COALESCE(r.created, '') AS r_created",
  "COALESCE(r.enqueue_index, 0) AS r_enqueue_index"
];
var KIND = "CASE WHEN r_status = 'pending' THEN (CASE WHEN " + ATTEMPTS_LEFT + ` THEN 'claim' ELSE 'dead' END) WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) WHEN NOT ${ATTEMPTS_LEFT} THEN 'dead' WHEN r_consecutive_orphan_count >= {:orphanCap} THEN 'orphan_cap' ELSE 'steal' END`;
var GIVE_UP_ERROR = giveUpErrorSql("r_consecutive_orphan_count");
var COLUMNS = {
  status: [[WINS, "'claimed'"], [["timeout_retry"], "'pending'"], [DEAD_LETTER2, "'failed'"]],
  claimed_by: [[WINS, "{:workerId}"], [["orphan_cap"], "{:sweeper}"], [["timeout_retry", "timeout_dead", "dead"], "''"]],
  // leaseEnd: never past the attempt's deadline, which a claim dates from now.
  lease_expires_at: [
    [WINS, formatPbDateSql("(CASE WHEN r_timeout_seconds > 0 THEN MIN({:leaseEndMs}, {:nowMs} + r_timeout_seconds * 1000) ELSE {:leaseEndMs} END)")],
    [["timeout_retry"], "''"]
  ],
  lease_token: [[WINS, "tok"], [GIVE_UPS, "''"]],
  version: [[WRITES, "r_version + 1"]],
  claimed_at: [[WINS, "{:now}"]],
  attempts: [[WINS, "r_attempts + 1"]],
  reclaim_count: [[["steal"], "r_reclaim_count + 1"]],
  consecutive_orphan_count: [[["steal"], "r_consecutive_orphan_count + 1"]],
  run_at: [[["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)]],
  progress: [[["timeout_retry"], "'null'"]],
  last_error: [
    [TIMED_OUT, timedOutErrorSql("r_timeout_seconds")],
    [["dead"], "{:maxAttemptsError}"],
    [["orphan_cap"], GIVE_UP_ERROR]
  ],
  dead_lettered_at: [[DEAD_LETTER2, "{:now}"]],
  finished_at: [[DEAD_LETTER2, "{:now}"]],
  result: [[["orphan_cap"], `json_object('error', ${GIVE_UP_ERROR}, 'reason', {:orphanReason}, 'lastHolder', r_claimed_by)`]]
};
var ORDER = CLAIM_ORDER.join(", ");
var JUDGED_ORDER = CLAIM_ORDER.map((term) => `r_${term}`).join(", ");
function judgedCandidates(byQueue, expired) {
  const inQueue = (alias) => byQueue ? `queue = ${alias}.q AND ` : "";
  const maxBelow = (alias, below) => `(SELECT MAX(priority) FROM probe_jobs WHERE ${inQueue(alias)}status = 'pending'${below})`;
  const first = byQueue ? `SELECT qs.q, ${maxBelow("qs", "")} FROM (SELECT value AS q FROM json_each({:queues})) AS qs` : `SELECT NULL, ${maxBelow("lv", "")}`;
  const levels = `lv(q, p) AS (${first} UNION ALL SELECT lv.q, ${maxBelow("lv", " AND priority < lv.p")} FROM lv WHERE lv.p IS NOT NULL)`;
  const levelRows = `SELECT id FROM probe_jobs WHERE ${inQueue("lv")}status = 'pending' AND priority = lv.p AND run_at <= {:now} AND ${STARTABLE_SQL} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:want}`;
  const due = `SELECT j.rowid AS rid, ${READ.map((c) => `j.${c}`).join(", ")} FROM lv, probe_jobs AS j WHERE lv.p IS NOT NULL AND j.id IN (${levelRows})`;
  const stale = `SELECT rowid AS rid, ${READ.join(", ")} FROM probe_jobs WHERE ${expired} ORDER BY ${ORDER} LIMIT {:want}`;
  return `WITH RECURSIVE ${levels}, c AS (SELECT * FROM (${due} UNION ALL SELECT * FROM (${stale})) ORDER BY ${ORDER} LIMIT {:want}), d AS (SELECT r.rid AS r_rowid, ${CANDIDATE_COLUMNS.join(", ")} FROM c AS r), k AS (SELECT d.*, (${KIND}) AS kind FROM d), v AS MATERIALIZED (SELECT k.*, (CASE WHEN kind IN (${quoted(WINS)}) THEN json_extract({:tokens}, '$[' || (SUM(kind IN (${quoted(WINS)})) OVER (ORDER BY ${JUDGED_ORDER} ROWS UNBOUNDED PRECEDING) - 1) || ']') END) AS tok FROM k)`;
}
function roundStatement(byQueue, expired) {
  const sets = Object.keys(COLUMNS).map((c) => `${c} = ${newValue(COLUMNS[c], `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedCandidates(byQueue, expired)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v WHERE probe_jobs.rowid IN (SELECT r_rowid FROM v WHERE kind IN (${quoted(WRITES)})) AND probe_jobs.rowid = v.r_rowid RETURNING ${ROW_AS_JSON} AS row, status, ${WRITTEN_VIEW} AS view`;
}
var CLAIM_ROUND_SHAPE = { row: "", status: "", view: "" };
function answerClaims(taken) {
  if ("jobs" in taken) return taken.jobs;
  const rows = JSON.parse(`[${taken.rowTexts.join(",")}]`);
  return rows.sort(compareClaimOrder).map((row) => ({ job: queueJobView(row), leaseToken: row.lease_token }));
}
function claimNextJobs(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  var _a;
  const demand = req.probeKeyPrefix === "" ? (_a = batch.queryOne(flowDemandQuery(nowMs), COUNT_SHAPE)) == null ? void 0 : _a.n : FLOW_DEMAND.counted;
  if (demand === FLOW_DEMAND.none) return claimNextByPlan(batch, req, nowMs, orphanCap2, newLeaseToken2);
  if (demand === FLOW_DEMAND.heldQueues) {
    const queues = claimQueuesBesides(batch, req.queues, heldBackQueues(batch, nowMs));
    if (queues !== null) return claimNextByPlan(batch, __spreadProps(__spreadValues({}, req), { queues }), nowMs, orphanCap2, newLeaseToken2);
  }
  return {
    jobs: claimNext(batch, req, nowMs, orphanCap2, newLeaseToken2).map(({ row, patch }) => {
      var _a2;
      return { job: queueJobView(row, patch), leaseToken: (_a2 = patch.lease_token) != null ? _a2 : "" };
    })
  };
}
function claimRoundStatement(req, want, tokens, nowMs, orphanCap2) {
  const expired = expiredLeaseWhere(nowMs, "", req.queues);
  const params = Object.assign({}, expired.params, {
    now: formatPbDate(nowMs),
    nowMs,
    want,
    tokens: JSON.stringify(tokens),
    workerId: req.workerId,
    leaseEndMs: nowMs + clampLeaseSeconds(req.leaseSeconds) * 1e3,
    orphanCap: orphanCap2,
    sweeper: SWEEPER_HOLDER,
    maxAttemptsError: MAX_ATTEMPTS_ERROR,
    orphanReason: ORPHAN_CAP_REASON
  });
  const byQueue = req.queues !== null;
  if (byQueue) params["queues"] = JSON.stringify(storedQueueValues(req.queues).filter((q, i, all) => all.indexOf(q) === i));
  return { sql: roundStatement(byQueue, expired.sql), params };
}
function claimNextByPlan(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  const claimed = [];
  if (req.queues !== null && req.queues.length === 0) return { rowTexts: claimed };
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && claimed.length < req.limit; round++) {
    const want = req.limit - claimed.length;
    const tokens = [];
    for (let n = 0; n < want; n++) tokens.push(newLeaseToken2());
    const written = batch.queryAll(claimRoundStatement(req, want, tokens, nowMs, orphanCap2), CLAIM_ROUND_SHAPE);
    if (written.length === 0) break;
    batch.noteWritten(JSON.parse(`[${written.map((r) => r.view).join(",")}]`));
    let won = 0;
    for (const r of written) {
      if (!isHeldStatus(r.status)) continue;
      claimed.push(r.row);
      won++;
    }
    if (won === written.length) break;
  }
  return { rowTexts: claimed };
}

// src/lib/retention.ts
var RETENTION_BATCH = 200;
var RETENTION_CLASSES = COMPLETED_STATUSES;
var CLASS_STATUSES = {
  done: ["done", "cancelled"],
  failed: ["failed"]
};
var CLASS_SETTINGS = {
  done: { env: KEEP_DONE_ENV, fallback: DEFAULT_KEEP_DONE, rows: "done or cancelled" },
  failed: { env: KEEP_FAILED_ENV, fallback: DEFAULT_KEEP_FAILED, rows: "failed" }
};
var UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
function parseKeepDuration(text) {
  if (text === "0") return 0;
  const m = /^(\d+)([smhd])$/.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]];
  return Number.isSafeInteger(ms) ? ms : null;
}
function keepSetting(getenv2, retentionClass) {
  const setting = CLASS_SETTINGS[retentionClass];
  const raw = getenv2(setting.env).trim();
  const ms = parseKeepDuration(raw === "" ? setting.fallback : raw);
  if (ms === null) {
    return {
      retentionClass,
      keepMs: null,
      error: `${setting.env}=${JSON.stringify(raw)} is not a duration such as ${setting.fallback}, 12h, 30m, 90s or 0 (keep forever), so no ${setting.rows} rows are deleted`
    };
  }
  return { retentionClass, keepMs: ms === 0 ? null : ms };
}
function eventsKeep(getenv2) {
  const raw = getenv2(KEEP_EVENTS_ENV).trim();
  if (raw === "") return { keepMs: JOB_EVENTS_KEEP_MS };
  const ms = parseKeepDuration(raw);
  if (ms === null) {
    return {
      keepMs: JOB_EVENTS_KEEP_MS,
      error: `${KEEP_EVENTS_ENV}=${JSON.stringify(raw)} is not a duration such as 15m, 1h or 0 (keep forever), so probe_job_events are kept ${JOB_EVENTS_KEEP_MS / 6e4}m`
    };
  }
  return { keepMs: ms === 0 ? null : ms };
}
function retentionCutoff(nowMs, keepMs) {
  if (keepMs === null || !(keepMs > 0)) return null;
  const cutoffMs = nowMs - keepMs;
  return Number.isFinite(cutoffMs) && cutoffMs >= 0 ? formatPbDate(cutoffMs) : null;
}
function statusesOf(retentionClass) {
  const statuses = Object.prototype.hasOwnProperty.call(CLASS_STATUSES, retentionClass) ? CLASS_STATUSES[retentionClass] : void 0;
  if (statuses === void 0 || statuses.length === 0 || !statuses.every(isTerminalStatus)) {
    throw new Error(`not a retention class: ${JSON.stringify(retentionClass)}`);
  }
  return statuses;
}
function expiredIdsQuery(retentionClass, cutoff, limit) {
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`not a batch size: ${limit}`);
  const statuses = statusesOf(retentionClass).map((status) => `'${status}'`).join(", ");
  return {
    sql: `SELECT id FROM probe_jobs WHERE status IN (${statuses}) AND ${FINISHED_SQL} AND finished_at < {:cutoff} LIMIT {:limit}`,
    params: { cutoff, limit }
  };
}
function deleteExpiredQuery(retentionClass, cutoff, limit) {
  const ids = expiredIdsQuery(retentionClass, cutoff, limit);
  return { sql: `DELETE FROM probe_jobs WHERE id IN (${ids.sql})`, params: ids.params };
}

// src/lib/maintenance.ts
var TICK_BATCH = { rows: RETENTION_BATCH, events: JOB_EVENTS_RETENTION_BATCH };
function retentionAlongsideComplete(releases) {
  return { rows: 2 * releases, events: 4 };
}
function deleteExpiredBatch(batch, nowMs, getenv2, limits = TICK_BATCH) {
  const tick = { deleted: { done: 0, failed: 0 }, events: 0, errors: [] };
  for (const retentionClass of RETENTION_CLASSES) {
    const setting = keepSetting(getenv2, retentionClass);
    if (setting.error !== void 0) tick.errors.push(setting.error);
    const cutoff = retentionCutoff(nowMs, setting.keepMs);
    if (cutoff === null) continue;
    tick.deleted[retentionClass] = batch.execute(deleteExpiredQuery(retentionClass, cutoff, limits.rows));
  }
  const events = eventsKeep(getenv2);
  if (events.error !== void 0) tick.errors.push(events.error);
  const eventsCutoff = retentionCutoff(nowMs, events.keepMs);
  if (eventsCutoff !== null) tick.events = batch.execute(deleteOldEventsStatement(eventsCutoff, limits.events));
  return tick;
}

// src/lib/validate.ts
var MAX_CLAIM_NEXT_LIMIT = 100;
var RESERVED_WORKER_IDS = [SWEEPER_HOLDER];
function reservedWorkerIdError(workerId) {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1 ? null : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}
function asBody(data) {
  return typeof data === "object" && data !== null ? data : {};
}
function fail(error) {
  return { ok: false, error };
}
function tooLongError(name, text, maxBytes) {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}
function workerIdError(workerId) {
  var _a;
  return (_a = reservedWorkerIdError(workerId)) != null ? _a : tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
}
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateReleaseRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return fail("status is required (done|failed|pending)");
  if (!isReleaseTarget(target)) return fail("status must be done|failed|pending");
  const lease = readLeaseToken(data);
  if (lease.error !== void 0) return fail(lease.error);
  const leaseToken = lease.token;
  const result = absentIfNull(asBody(data)["result"]);
  if (result !== void 0 && jsonLongerThan(result, MAX_RESULT_BYTES)) {
    return fail(`result must be at most ${MAX_RESULT_BYTES} bytes as JSON`);
  }
  const error = absentIfNull(asBody(data)["error"]);
  if (error !== void 0 && typeof error !== "string") return fail("error must be a string when given");
  if (error !== void 0 && utf8LongerThan(error, MAX_ERROR_BYTES)) {
    return fail(`error must be at most ${MAX_ERROR_BYTES} bytes`);
  }
  const rateLimitedFor = absentIfNull(asBody(data)["rateLimitedFor"]);
  if (rateLimitedFor !== void 0) {
    if (target !== "retry") return fail("rateLimitedFor is only for status retry");
    if (typeof rateLimitedFor !== "number" || !(rateLimitedFor >= 1) || rateLimitedFor > MAX_RATE_LIMITED_FOR_SECONDS) {
      return fail(`rateLimitedFor must be a number from 1 to ${MAX_RATE_LIMITED_FOR_SECONDS}`);
    }
  }
  return {
    ok: true,
    value: {
      jobId: ids.value.jobId,
      workerId: ids.value.workerId,
      target,
      leaseToken,
      result,
      error,
      rateLimitedFor
    }
  };
}
function absentIfNull(value) {
  return value === null ? void 0 : value;
}
var INVALID = null;
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return { token: void 0 };
  if (typeof token !== "string" || token === "") return { error: LEASE_TOKEN_ERROR };
  const tooLong = tooLongError("leaseToken", token, MAX_LEASE_TOKEN_BYTES);
  return tooLong === null ? { token } : { error: tooLong };
}
function validateClaimNextRequest(data) {
  const body = asBody(data);
  const { workerId, limit } = body;
  if (!workerId) return fail("workerId is required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  if (limit !== void 0 && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CLAIM_NEXT_LIMIT)) {
    return fail(`limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`);
  }
  const probeKeyPrefix = readPrefix(data);
  if (probeKeyPrefix === INVALID) return fail(PREFIX_ERROR);
  const badPrefix = prefixError(probeKeyPrefix);
  if (badPrefix !== null) return fail(badPrefix);
  const queues = readClaimQueues(body["queue"]);
  if (typeof queues === "string") return fail(queues);
  return {
    ok: true,
    value: { workerId, leaseSeconds: body["leaseSeconds"], limit: limit === void 0 ? 1 : limit, probeKeyPrefix, queues }
  };
}
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";
function readClaimQueues(value) {
  if (value === void 0 || value === null) return null;
  const names = Array.isArray(value) ? value : [value];
  if (names.length < 1 || names.length > MAX_CLAIM_QUEUES) return `queue must be a queue name or an array of 1 to ${MAX_CLAIM_QUEUES} names`;
  for (const name of names) if (!isQueueName(name)) return `queue must be a queue name or an array of them (${QUEUE_NAME_RULE})`;
  return names.filter((name, i) => names.indexOf(name) === i);
}
function prefixError(prefix) {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
}
var PREFIX_ERROR = "probeKeyPrefix must be a string";
function readPrefix(data) {
  const prefix = asBody(data)["probeKeyPrefix"];
  if (prefix === void 0) return "";
  return typeof prefix === "string" ? prefix : INVALID;
}
function isReleaseTarget(value) {
  return RELEASE_TARGETS.indexOf(value) !== -1;
}
function validateCompleteRequest(data) {
  const body = asBody(data);
  const items = batchItems(body, "releases");
  if (typeof items === "string") return fail(items);
  const releases = [];
  for (let i = 0; i < items.length; i++) {
    const item = asBody(items[i]);
    const valid = validateReleaseRequest({
      jobId: item["jobId"],
      workerId: body["workerId"],
      status: item["status"],
      leaseToken: item["leaseToken"],
      result: item["result"],
      error: item["error"],
      rateLimitedFor: item["rateLimitedFor"]
    });
    if (!valid.ok) return fail(`releases[${i}]: ${valid.error}`);
    releases.push(valid.value);
  }
  return { ok: true, value: releases };
}
function validateCompleteClaimNext(data) {
  const body = asBody(data);
  const claim = body["claimNext"];
  if (claim === void 0 || claim === null) return { ok: true, value: null };
  if (typeof claim !== "object" || Array.isArray(claim)) return fail("claimNext must be an object of claim-next's fields");
  if ("workerId" in claim) return fail("claimNext takes the call's workerId: leave workerId out of it");
  const valid = validateClaimNextRequest(__spreadProps(__spreadValues({}, claim), { workerId: body["workerId"] }));
  return valid.ok ? valid : fail(`claimNext: ${valid.error}`);
}
function batchItems(body, field) {
  const { workerId } = body;
  if (!workerId) return "workerId is required";
  if (typeof workerId !== "string") return "workerId must be a string";
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return badWorkerId;
  const items = body[field];
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_ITEMS) {
    return `${field} must be an array of 1 to ${MAX_BATCH_ITEMS} items`;
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "object" || item === null || Array.isArray(item)) return `${field}[${i}] must be an object`;
  }
  return items;
}

// src/handlers/complete.ts
function handleComplete(req) {
  const body = req.body();
  const valid = validateCompleteRequest(body);
  if (!valid.ok) return json(400, { error: valid.error });
  const next = validateCompleteClaimNext(body);
  if (!next.ok) return json(400, { error: next.error });
  const refused = batchWorkerIdRefusal(req.caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  let claim = null;
  if (next.value !== null) {
    const scope = claimQueues(req.caller, next.value.queues);
    if ("refusal" in scope) return json(403, { error: scope.refusal });
    claim = __spreadProps(__spreadValues({}, next.value), { queues: scope.queues });
  }
  const cap = claim === null ? 0 : orphanCap(getenv);
  const done = updateJobsBulk("complete", (batch, now) => {
    const released = completeByPlan(batch, valid.value, now, Math.random);
    deleteExpiredBatch(batch, now, getenv, retentionAlongsideComplete(released.length));
    const taken = claim === null ? null : claimNextJobs(batch, claim, now, cap, newLeaseToken);
    return { released, taken };
  });
  if (done === null) return json(503, { error: TRANSACTION_FAILED });
  const answer = done.taken === null ? { results: done.released } : { results: done.released, jobs: answerClaims(done.taken) };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleComplete, "worker");
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/flow", (__context) => {
return (globalThis["pbFleet POST /api/fleet/flow 32d221e3152f"] || (globalThis["pbFleet POST /api/fleet/flow 32d221e3152f"] = (() => {
var __defProp = Object.defineProperty;
var __defProps = Object.defineProperties;
var __getOwnPropDescs = Object.getOwnPropertyDescriptors;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};
var __spreadProps = (a, b) => __defProps(a, __getOwnPropDescs(b));

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
var FLOW_ROW_SHAPE = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
var FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";
function flowRowsQuery(scopes) {
  const params = {};
  const terms = scopes.map((s, i) => {
    params[`s${i}`] = s.scope;
    params[`n${i}`] = s.name;
    return `(scope = {:s${i}} AND name = {:n${i}})`;
  });
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow WHERE ${terms.join(" OR ")}`, params };
}
function reExpireClaimsStatement(s, periodSeconds) {
  return {
    sql: `UPDATE ${FLOW_CLAIMS_TABLE} SET expires = at + {:periodMs} WHERE scope = {:scope} AND name = {:name}`,
    params: { scope: s.scope, name: s.name, periodMs: periodSeconds * 1e3 }
  };
}
function settingsOf(row, nowMs) {
  if (row === null) return { paused: false, concurrency: null, rateLimit: null, parkedUntil: null };
  return {
    paused: row.paused === 1,
    concurrency: row.concurrency > 0 ? row.concurrency : null,
    rateLimit: row.rate_limit > 0 ? { limit: row.rate_limit, periodSeconds: row.rate_period } : null,
    parkedUntil: isParked(row, nowMs) ? row.parked_until : null
  };
}
function isParked(row, nowMs) {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}
var NEW_ID_SQL = "substr(lower(hex(randomblob(8))), 1, 15)";
function upsertFlowStatement(s, columns, nowMs) {
  const names = Object.keys(columns);
  const params = { scope: s.scope, name: s.name, stamp: formatPbDate(nowMs) };
  for (const c of names) params[c] = columns[c];
  const insertColumns = names.map((c) => `, ${c}`).join("");
  const insertValues = names.map((c) => `, {:${c}}`).join("");
  const updates = names.map((c) => `${c} = excluded.${c}, `).join("");
  return {
    sql: `INSERT INTO probe_flow (id, scope, name${insertColumns}, created, updated) VALUES (${NEW_ID_SQL}, {:scope}, {:name}${insertValues}, {:stamp}, {:stamp}) ON CONFLICT (scope, name) DO UPDATE SET ${updates}updated = excluded.updated`,
    params
  };
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var MAX_FLOW_CONCURRENCY = 1e5;
var MAX_RATE_LIMIT = 1e5;
var MAX_RATE_PERIOD_SECONDS = 86400;
var MAX_PARK_SECONDS = 604800;
function isGroupName(value) {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (code <= 31 || code >= 127 && code <= 159) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var TRANSACTION_FAILED = "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/validate.ts
function fail(error) {
  return { ok: false, error };
}
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";
function isIntegerIn(value, min, max) {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}
var ZONED_ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;
function parseZonedInstant(text) {
  const m = ZONED_ISO.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const ms = frac === void 0 ? "000" : (frac + "00").slice(0, 3);
  const local = parsePbDate(`${y}-${mo}-${d} ${h}:${mi}:${sec === void 0 ? "00" : sec}.${ms}Z`);
  if (local === null || zone === void 0) return null;
  if (zone === "Z") return local;
  const sign = zone[0] === "-" ? -1 : 1;
  const offH = Number(zone.slice(1, 3));
  const offM = Number(zone.slice(4, 6));
  if (offH > 23 || offM > 59) return null;
  const instant = local - sign * (offH * 60 + offM) * 6e4;
  return /^\d{4}-/.test(formatPbDate(instant)) ? instant : null;
}

// src/lib/flow-endpoint.ts
function writeFlow(batch, change, nowMs) {
  batch.execute(upsertFlowStatement(change.scope, flowColumnsAt(change, nowMs), nowMs));
  const period = change.columns.rate_period;
  if (period !== void 0 && period > 0) batch.execute(reExpireClaimsStatement(change.scope, period));
  return settingsOf(batch.queryOne(flowRowsQuery([change.scope]), FLOW_ROW_SHAPE), nowMs);
}
function flowColumnsAt(change, nowMs) {
  if (change.parkForMs === void 0) return change.columns;
  return __spreadProps(__spreadValues({}, change.columns), { parked_until: formatPbDate(nowMs + change.parkForMs) });
}
var FLOW_SETTINGS = ["paused", "concurrency", "rateLimit", "parkSeconds", "parkUntil"];
function validateFlowRequest(data, nowMs) {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return fail("the body must be a JSON object");
  const body = data;
  const hasQueue = body["queue"] !== void 0;
  const hasGroup = body["group"] !== void 0;
  if (hasQueue === hasGroup) return fail("give exactly one of queue and group");
  let scope;
  if (hasQueue) {
    if (!isQueueName(body["queue"])) return fail(`queue must be a queue name (${QUEUE_NAME_RULE})`);
    scope = { scope: "queue", name: body["queue"] };
  } else {
    if (!isGroupName(body["group"])) return fail(`group must be a group name (${GROUP_NAME_RULE})`);
    scope = { scope: "group", name: body["group"] };
  }
  if (!FLOW_SETTINGS.some((k) => body[k] !== void 0)) {
    return fail("give at least one setting: paused, concurrency, rateLimit, parkSeconds or parkUntil");
  }
  const columns = {};
  let parkForMs;
  const paused = body["paused"];
  if (paused !== void 0) {
    if (paused !== null && typeof paused !== "boolean") return fail("paused must be true, false or null");
    columns.paused = paused === true ? 1 : 0;
  }
  const concurrency = body["concurrency"];
  if (concurrency !== void 0) {
    if (concurrency !== null && !isIntegerIn(concurrency, 1, MAX_FLOW_CONCURRENCY)) {
      return fail(`concurrency must be an integer from 1 to ${MAX_FLOW_CONCURRENCY}, or null`);
    }
    columns.concurrency = concurrency === null ? 0 : concurrency;
  }
  const rateLimit = body["rateLimit"];
  if (rateLimit !== void 0) {
    const rate = readRateLimit(rateLimit);
    if (typeof rate === "string") return fail(rate);
    columns.rate_limit = rate === null ? 0 : rate.limit;
    columns.rate_period = rate === null ? 0 : rate.periodSeconds;
  }
  const parkSeconds = body["parkSeconds"];
  const parkUntil = body["parkUntil"];
  if (parkSeconds !== void 0 && parkUntil !== void 0) return fail("give parkSeconds or parkUntil, not both");
  if (parkSeconds !== void 0) {
    if (typeof parkSeconds !== "number" || !(parkSeconds >= 0) || parkSeconds > MAX_PARK_SECONDS) {
      return fail(`parkSeconds must be a number from 0 to ${MAX_PARK_SECONDS} (0 clears the park)`);
    }
    if (parkSeconds === 0) columns.parked_until = "";
    else parkForMs = Math.round(parkSeconds * 1e3);
  }
  if (parkUntil !== void 0) {
    if (parkUntil === null) {
      columns.parked_until = "";
    } else {
      const ms = typeof parkUntil === "string" ? parseZonedInstant(parkUntil) : null;
      if (ms === null || ms <= nowMs || ms > nowMs + MAX_PARK_SECONDS * 1e3) {
        return fail(`parkUntil must be a date with a zone, after now and at most ${MAX_PARK_SECONDS / 86400} days ahead, or null`);
      }
      columns.parked_until = formatPbDate(ms);
    }
  }
  return { ok: true, value: parkForMs === void 0 ? { scope, columns } : { scope, columns, parkForMs } };
}
function readRateLimit(value) {
  const rule = `rateLimit must be { limit: an integer from 1 to ${MAX_RATE_LIMIT}, periodSeconds: an integer from 1 to ${MAX_RATE_PERIOD_SECONDS} }, or null`;
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return rule;
  const { limit, periodSeconds } = value;
  if (!isIntegerIn(limit, 1, MAX_RATE_LIMIT) || !isIntegerIn(periodSeconds, 1, MAX_RATE_PERIOD_SECONDS)) return rule;
  for (const key of Object.keys(value)) if (key !== "limit" && key !== "periodSeconds") return rule;
  return { limit, periodSeconds };
}
function scopeName(s) {
  return s.scope === "queue" ? { queue: s.name } : { group: s.name };
}

// src/handlers/flow.ts
function handleSetFlow(req) {
  const now = Date.now();
  const valid = validateFlowRequest(req.body(), now);
  if (!valid.ok) return json(400, { error: valid.error });
  const stored = updateJobs((batch, nowMs) => writeFlow(batch, valid.value, nowMs));
  if (stored === null) return json(503, { error: TRANSACTION_FAILED });
  const answer = { flow: Object.assign(scopeName(valid.value.scope), stored) };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleSetFlow, "admin");
}
return route;
})()))(__context);
});

routerAdd("GET", "/api/fleet/flow", (__context) => {
return (globalThis["pbFleet GET /api/fleet/flow ae7307b1e0c0"] || (globalThis["pbFleet GET /api/fleet/flow ae7307b1e0c0"] = (() => {
var __defProp = Object.defineProperty;
var __defProps = Object.defineProperties;
var __getOwnPropDescs = Object.getOwnPropertyDescriptors;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};
var __spreadProps = (a, b) => __defProps(a, __getOwnPropDescs(b));

// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function storedQueueName(stored) {
  return stored === "" ? DEFAULT_QUEUE : stored;
}
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
var FLOW_ROW_SHAPE = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
var FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";
function scopeTerm(s, params) {
  params["scopeName"] = s.name;
  if (s.scope === "group") return "group_key != '' AND group_key = {:scopeName}";
  return s.name === DEFAULT_QUEUE ? "queue IN ({:scopeName}, '')" : "queue = {:scopeName}";
}
function heldCountQuery(s, nowMs) {
  const params = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND ${statusInSql(HELD_STATUSES)} AND ${LIVE_LEASE_SQL}`,
    params
  };
}
function dueCountQuery(s, nowMs) {
  const params = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND status = 'pending' AND run_at <= {:now} AND ${STARTABLE_SQL}`,
    params
  };
}
var COUNT_SHAPE = { n: 0 };
var STARTABLE_SQL = "(COALESCE(start_by, '') = '' OR attempts > 0 OR start_by > {:now})";
function windowCountQuery(s, nowMs, periodSeconds) {
  return {
    sql: `SELECT COUNT(*) AS n FROM ${FLOW_CLAIMS_TABLE} WHERE scope = {:scope} AND name = {:name} AND at > {:since}`,
    params: { scope: s.scope, name: s.name, since: nowMs - periodSeconds * 1e3 }
  };
}
function settingsOf(row, nowMs) {
  if (row === null) return { paused: false, concurrency: null, rateLimit: null, parkedUntil: null };
  return {
    paused: row.paused === 1,
    concurrency: row.concurrency > 0 ? row.concurrency : null,
    rateLimit: row.rate_limit > 0 ? { limit: row.rate_limit, periodSeconds: row.rate_period } : null,
    parkedUntil: isParked(row, nowMs) ? row.parked_until : null
  };
}
function isParked(row, nowMs) {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}
function nextQueueQuery(after) {
  return after === null ? { sql: "SELECT queue AS name FROM probe_jobs ORDER BY queue LIMIT 1", params: {} } : { sql: "SELECT queue AS name FROM probe_jobs WHERE queue > {:after} ORDER BY queue LIMIT 1", params: { after } };
}
var NAME_SHAPE = { name: "" };

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
function isGroupName(value) {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (code <= 31 || code >= 127 && code <= 159) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text) {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
var QUERY_FAILED = "pb-fleet: query failed";
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}
function readAllOrNull(db, query, shape) {
  try {
    return readAll(db, query, shape);
  } catch (err) {
    logError(QUERY_FAILED, err);
    return null;
  }
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}
function queryAll(query, shape) {
  return readAllOrNull($app.dao().db(), query, shape);
}

// src/lib/validate.ts
var QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";

// src/lib/flow-endpoint.ts
function flowListQuery(scope, name, limit) {
  const params = { limit };
  const terms = [];
  if (scope !== null) {
    params["scope"] = scope;
    terms.push("scope = {:scope}");
  }
  if (name !== null) {
    params["name"] = name;
    terms.push("name = {:name}");
  }
  const where = terms.length === 0 ? "" : ` WHERE ${terms.join(" AND ")}`;
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow${where} ORDER BY scope, name LIMIT {:limit}`, params };
}
function readFlowFilter(queue, group) {
  if (queue !== "" && !isQueueName(queue)) return `queue must be a queue name (${QUEUE_NAME_RULE})`;
  if (group !== "" && !isGroupName(group)) return `group must be a group name (${GROUP_NAME_RULE})`;
  return { queue: queue === "" ? null : queue, group: group === "" ? null : group };
}
var MAX_FLOW_LIST = 500;
function unfinishedInQueueQuery(stored) {
  return {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM probe_jobs WHERE queue = {:queue} AND ${statusInSql(LIVE_STATUSES)} LIMIT 1)`,
    params: { queue: stored }
  };
}
function scopeState(batch, s, row, nowMs) {
  const settings = settingsOf(row, nowMs);
  const count = (q) => {
    var _a, _b;
    return (_b = (_a = batch.queryOne(q, COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : 0;
  };
  return __spreadProps(__spreadValues({
    name: s.name
  }, settings), {
    held: count(heldCountQuery(s, nowMs)),
    due: count(dueCountQuery(s, nowMs)),
    claimsInWindow: settings.rateLimit === null ? 0 : count(windowCountQuery(s, nowMs, settings.rateLimit.periodSeconds))
  });
}
var FLOW_UNAVAILABLE = "flow figures are unavailable right now: the database read failed (details are in PocketBase's log)";
function flowState(batch, filter, nowMs) {
  var _a;
  const wantQueues = filter.group === null || filter.queue !== null;
  const wantGroups = filter.queue === null || filter.group !== null;
  const queues = [];
  const groups = [];
  if (wantQueues) {
    const rows = {};
    for (const row of batch.queryAll(flowListQuery("queue", filter.queue, MAX_FLOW_LIST), FLOW_ROW_SHAPE)) rows[row.name] = row;
    const names = Object.keys(rows);
    for (const name of queuesWithUnfinishedJobs(batch, filter.queue)) if (names.indexOf(name) === -1) names.push(name);
    for (const name of names.sort().slice(0, MAX_FLOW_LIST)) {
      queues.push(scopeState(batch, { scope: "queue", name }, (_a = rows[name]) != null ? _a : null, nowMs));
    }
  }
  if (wantGroups) {
    for (const row of batch.queryAll(flowListQuery("group", filter.group, MAX_FLOW_LIST), FLOW_ROW_SHAPE)) {
      groups.push(scopeState(batch, { scope: "group", name: row.name }, row, nowMs));
    }
  }
  return { queues, groups };
}
function queuesWithUnfinishedJobs(batch, only) {
  var _a, _b, _c, _d;
  const names = [];
  const stored = only === null ? null : only === DEFAULT_QUEUE ? [only, ""] : [only];
  if (stored !== null) {
    for (const value of stored) {
      if (((_b = (_a = batch.queryOne(unfinishedInQueueQuery(value), COUNT_SHAPE)) == null ? void 0 : _a.n) != null ? _b : 0) > 0) return [only];
    }
    return names;
  }
  let after = null;
  for (let i = 0; i < MAX_FLOW_LIST; i++) {
    const next = batch.queryOne(nextQueueQuery(after), NAME_SHAPE);
    if (next === null) break;
    after = next.name;
    if (((_d = (_c = batch.queryOne(unfinishedInQueueQuery(next.name), COUNT_SHAPE)) == null ? void 0 : _c.n) != null ? _d : 0) > 0) {
      const name = storedQueueName(next.name);
      if (names.indexOf(name) === -1) names.push(name);
    }
  }
  return names;
}

// src/handlers/flow.ts
var ReadFailed = class extends Error {
};
var READER = {
  queryAll(query, shape) {
    const rows = queryAll(query, shape);
    if (rows === null) throw new ReadFailed();
    return rows;
  },
  queryOne(query, shape) {
    var _a;
    return (_a = READER.queryAll(query, shape)[0]) != null ? _a : null;
  }
};
function handleGetFlow(req) {
  const filter = readFlowFilter(req.query("queue"), req.query("group"));
  if (typeof filter === "string") return json(400, { error: filter });
  try {
    const answer = flowState(READER, filter, Date.now());
    return json(200, answer);
  } catch (err) {
    if (err instanceof ReadFailed) return json(503, { error: FLOW_UNAVAILABLE });
    throw err;
  }
}

// entry.ts
function route(context) {
  return serve(context, handleGetFlow, "admin");
}
return route;
})()))(__context);
});

routerAdd("GET", "/api/fleet/openapi.json", (__context) => {
return (globalThis["pbFleet GET /api/fleet/openapi.json d5f39e3c39b6"] || (globalThis["pbFleet GET /api/fleet/openapi.json d5f39e3c39b6"] = (() => {
var __defProp = Object.defineProperty;
var __defProps = Object.defineProperties;
var __getOwnPropDescs = Object.getOwnPropertyDescriptors;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};
var __spreadProps = (a, b) => __defProps(a, __getOwnPropDescs(b));

// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var DEFAULT_LEASE_SECONDS = 30;
var MIN_LEASE_SECONDS = 1;
var MAX_LEASE_SECONDS = 3600;
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text2) {
  const m = PB_DATE.exec(text2);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var MAX_TIMEOUT_SECONDS = 86400;
var MAX_START_WITHIN_SECONDS = 2592e3;
var MAX_FLOW_CONCURRENCY = 1e5;
var MAX_RATE_LIMIT = 1e5;
var MAX_RATE_PERIOD_SECONDS = 86400;
var MAX_PARK_SECONDS = 604800;
var MAX_RATE_LIMITED_FOR_SECONDS = 86400;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_ENQUEUE_JOBS = 1e3;
var MAX_BATCH_ITEMS = 100;
var MAX_PAYLOAD_BYTES = 1048576;
var MAX_RESULT_BYTES = 1048576;
var MAX_ERROR_BYTES = 65536;
var MAX_WORKER_ID_BYTES = 256;
var MAX_JOB_ID_BYTES = 255;
var MAX_LEASE_TOKEN_BYTES = 255;
var MAX_PROBE_KEY_BYTES = 1024;
var MAX_UNIQUE_KEY_BYTES = 1024;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_DELAY_SECONDS = 31536e5;
var MAX_PROGRESS_BYTES = 4096;
var MIN_PRIORITY = -1e3;
var MAX_PRIORITY = 1e3;
var MAX_MAX_ATTEMPTS = 1e3;
var DEFAULT_MAX_ATTEMPTS = 25;

// src/lib/identity.ts
var WORKERS_COLLECTION = "fleet_workers";
var WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at"
};
var LAST_SEEN_EVERY_MS = 6e4;
var NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
var WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {}
};
var ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, complete, openapi.json, and enqueue when its can_enqueue is on";
var ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;
function authorize(auth, access) {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}
function forbidden(error) {
  return { status: 403, body: { error } };
}
function parseWorkerQueues(text2) {
  if (text2 === null) return null;
  if (text2 === "" || text2 === "null") return [];
  let value;
  try {
    value = JSON.parse(text2);
  } catch (e) {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value;
}
function lastSeenIsStale(lastSeenAt, nowMs) {
  if (lastSeenAt === null) return false;
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}
function stampLastSeenStatement(id, nowMs) {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) }
  };
}

// src/adapter/contract.ts
function json(status, body) {
  return { status, json: body };
}
function oversizedBodyReply(contentLength) {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}
function answerRequest(req, access, handler, logError2) {
  var _a;
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = (_a = oversizedBodyReply(req.contentLength)) != null ? _a : req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null;
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError2(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}
var LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function workerAuth(rec, hasField) {
  return {
    kind: "worker",
    id: rec.id,
    queuesJson: hasField(WORKER_FIELDS.queues) ? rec.getString(WORKER_FIELDS.queues) : null,
    canEnqueue: rec.getBool(WORKER_FIELDS.canEnqueue),
    disabled: !hasField(WORKER_FIELDS.disabled) || rec.getBool(WORKER_FIELDS.disabled),
    lastSeenAt: hasField(WORKER_FIELDS.lastSeenAt) ? rec.getString(WORKER_FIELDS.lastSeenAt) : null
  };
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var JOB_STATUSES = ["pending", "claimed", "running", "done", "failed", "cancelled"];
var RELEASE_TARGETS = ["done", "failed", "pending", "retry"];
var RELEASE_REFUSALS = [
  "refused_terminal_same_holder",
  "refused_not_holder",
  "refused_lease_live",
  "refused_stale_token"
];
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];
var RENEW_REFUSALS = ["timed_out"];
var SWEEP_OUTCOMES = ["requeued", "gave_up", "timed_out"];
var RETRY_REFUSALS = ["unique_key_taken"];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function serve(c, handler, access) {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      executeStatement($app.dao().nonconcurrentDB(), statement);
    }
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json);
}
function callerAuth(c) {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord");
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}

// src/lib/completions.ts
var DEFAULT_WINDOW_SECONDS = 300;
var DEFAULT_BUCKET_SECONDS = 5;
var MAX_WINDOW_SECONDS = 3600;
var MAX_BUCKET_SECONDS = 600;

// src/lib/validate.ts
var MAX_CLAIM_NEXT_LIMIT = 100;

// src/lib/openapi-schemas.ts
var ref = (name) => ({ $ref: `#/components/schemas/${name}` });
var text = (description) => description === void 0 ? { type: "string" } : { type: "string", description };
var bytes = (what, max) => text(`${what}: at most ${max} UTF-8 bytes (a 400 beyond).`);
var int = (minimum, maximum, description) => {
  const s = { type: "integer" };
  if (minimum !== void 0) s["minimum"] = minimum;
  if (maximum !== void 0) s["maximum"] = maximum;
  if (description !== void 0) s["description"] = description;
  return s;
};
var count = { type: "integer", minimum: 0 };
var nullable = (schema) => ({ oneOf: [schema, { type: "null" }] });
var anyJson = (description) => ({ description });
var arrayOf2 = (items, minItems, maxItems) => {
  const s = { type: "array", items };
  if (minItems !== void 0) s["minItems"] = minItems;
  if (maxItems !== void 0) s["maxItems"] = maxItems;
  return s;
};
var answer = (properties, required = Object.keys(properties)) => ({ type: "object", properties, required, additionalProperties: false });
var request = (properties, required) => ({ type: "object", properties, required });
var oneOf = (...schemas) => ({ oneOf: schemas });
var reasons = (list, description) => ({ type: "string", enum: [...list], description });
var queueName = {
  type: "string",
  pattern: QUEUE_NAME_PATTERN.source,
  description: "A queue name: 1 to 64 letters, digits and _ . : -, starting with a letter or digit."
};
var groupName = {
  type: "string",
  minLength: 1,
  maxLength: MAX_GROUP_KEY_CHARS,
  description: `A group: 1 to ${MAX_GROUP_KEY_CHARS} characters, no control characters.`
};
var pbDate = (description) => text(`${description} PocketBase's text form, \`2006-01-02 15:04:05.000Z\`.`);
var leaseSeconds = {
  type: "number",
  description: `A number > 0, clamped to [${MIN_LEASE_SECONDS}, ${MAX_LEASE_SECONDS}]; anything else means ${DEFAULT_LEASE_SECONDS}.`
};
var workerId = bytes("The holder's id (a worker identity: its record id, or the id and `/` and anything)", MAX_WORKER_ID_BYTES);
var jobId = bytes("The job's record id", MAX_JOB_ID_BYTES);
var leaseToken = bytes("Fencing: when sent, the call is refused unless it is the current claim's token", MAX_LEASE_TOKEN_BYTES);
var rateLimitedFor = int(
  1,
  MAX_RATE_LIMITED_FOR_SECONDS,
  "Only with status retry: the job is due again this many seconds from now, the attempt is given back, and its group (its queue when none) is parked as long."
);
var releaseFields = {
  status: { type: "string", enum: [...RELEASE_TARGETS] },
  leaseToken,
  result: anyJson(`Any JSON, at most ${MAX_RESULT_BYTES} bytes serialized, stored in \`result\`; null: absent.`),
  error: nullable(bytes("Stored in `last_error`", MAX_ERROR_BYTES)),
  rateLimitedFor
};
var JOB_VIEW_MEMBERS = {
  id: text(),
  probe_key: text(),
  status: { type: "string", enum: [...JOB_STATUSES] },
  claimed_by: text(),
  lease_expires_at: pbDate(`The lease's end, or "" when the row has no lease.`),
  version: { type: "integer" }
};
var JOB_VIEW = answer(JOB_VIEW_MEMBERS);
var QUEUE_JOB_VIEW = answer(__spreadProps(__spreadValues({}, JOB_VIEW_MEMBERS), {
  queue: text(`The job's queue; "${DEFAULT_QUEUE}" for a job enqueued without one.`),
  payload: anyJson("Any JSON; null when none."),
  priority: { type: "integer" },
  run_at: pbDate("When the job becomes (or became) claimable."),
  attempts: count,
  max_attempts: int(0, void 0, "0: no cap."),
  last_error: text(),
  dead_lettered_at: text(),
  unique_key: text(),
  progress: anyJson("The last renew's progress (any JSON); null when none."),
  group_key: text(`The job's group; "" when none.`),
  timeout_seconds: int(0, void 0, "0: no timeout."),
  deadline: nullable(pbDate("The current attempt's deadline; null when none."))
}));
var FLOW_SETTINGS = {
  paused: { type: "boolean" },
  concurrency: nullable(int(1, MAX_FLOW_CONCURRENCY)),
  rateLimit: nullable(ref("FlowRateLimit")),
  parkedUntil: nullable(pbDate("Until when the scope is parked; null when unset or already past."))
};
var SCHEMAS = {
  Error: answer({ error: text("What was wrong; nothing was written.") }),
  PocketBaseError: {
    type: "object",
    description: "PocketBase's error shape (the 401 of PocketBase 0.22's requireAdminAuth, on every line).",
    properties: { code: { type: "integer" }, message: text(), data: { type: "object" } },
    required: ["code", "message", "data"]
  },
  JobView: JOB_VIEW,
  QueueJobView: QUEUE_JOB_VIEW,
  FlowRateLimit: answer({ limit: int(1, MAX_RATE_LIMIT), periodSeconds: int(1, MAX_RATE_PERIOD_SECONDS) }),
  FlowSettings: answer(FLOW_SETTINGS),
  FlowScopeState: answer(__spreadProps(__spreadValues({ name: text() }, FLOW_SETTINGS), { held: count, due: count, claimsInWindow: count })),
  MaintenanceTick: answer({
    countsRepaired: { type: ["boolean", "null"], description: "true: the counting triggers were rebuilt; null: that transaction rolled back." },
    leaseIndexRepaired: {
      type: ["boolean", "null"],
      description: "true: the expired-lease index was missing and was made again; null: that transaction rolled back."
    },
    schedules: nullable(answer({
      enqueued: arrayOf2(answer({ schedule: text(), jobId: text(), created: { type: "boolean" } })),
      errors: arrayOf2(text())
    })),
    retention: answer({
      deleted: answer({ done: count, failed: count }),
      events: count,
      errors: arrayOf2(text()),
      batches: count,
      drained: { type: "boolean" },
      rolledBack: { type: "boolean" }
    }),
    flow: nullable(answer({ notStarted: count, claims: count, parks: count }))
  })
};

// src/lib/openapi.ts
var OPENAPI_PATH = "/api/fleet/openapi.json";
var API_VERSION = "0.1.0";
var queryParam = (name, schema, description) => ({ name, in: "query", required: false, schema, description });
var prefixParam = queryParam("probeKeyPrefix", text(), `Only jobs whose probe_key starts with this text (at most ${MAX_PROBE_KEY_BYTES} UTF-8 bytes).`);
var probeKeyPrefix = bytes("Only jobs whose probe_key starts with this text", MAX_PROBE_KEY_BYTES);
var ERROR_503 = ref("Error");
var heartbeatResult = oneOf(
  answer({ jobId: text(), renewed: { const: true }, job: ref("JobView") }),
  answer({ jobId: text(), renewed: { const: false }, reason: reasons(RENEW_REFUSALS, "Its attempt passed its deadline.") }, ["jobId", "renewed"])
);
var completeResult = oneOf(
  answer({ jobId: text(), released: { const: true }, job: ref("JobView") }),
  answer({ jobId: text(), released: { const: false }, reason: reasons(RELEASE_REFUSALS, "Why the release was refused.") })
);
var claimNextFields = {
  leaseSeconds,
  limit: int(1, MAX_CLAIM_NEXT_LIMIT, "How many jobs to claim at most; default 1."),
  probeKeyPrefix,
  queue: oneOf(queueName, arrayOf2(queueName, 1, MAX_CLAIM_QUEUES))
};
var claimedJobs = arrayOf2(answer({ job: ref("QueueJobView"), leaseToken: text() }));
var OPERATIONS = {
  "POST /api/fleet/claim": {
    operationId: "claim",
    summary: "Claim a job by id",
    description: "Wins a pending job, or steals a held one whose lease expired. The holder claiming again on a live lease gets alreadyHeld and its token. A reason only when a worker identity's queues or flow control hold back a job the claim would otherwise win.",
    body: request({ jobId, workerId, leaseSeconds }, ["jobId", "workerId"]),
    ok: oneOf(
      answer({ claimed: { const: true }, job: ref("JobView"), alreadyHeld: { const: true }, leaseToken: text() }, ["claimed", "job", "leaseToken"]),
      answer({ claimed: { const: false }, reason: reasons(CLAIM_REFUSALS, "Why a job the claim would win was held back.") }, ["claimed"])
    ),
    validates: true
  },
  "POST /api/fleet/renew": {
    operationId: "renew",
    summary: "Renew the holder's lease",
    body: request({
      jobId,
      workerId,
      leaseSeconds,
      leaseToken,
      progress: anyJson(`Any JSON, at most ${MAX_PROGRESS_BYTES} bytes serialized, stored when the renew succeeds; null: absent.`)
    }, ["jobId", "workerId"]),
    ok: oneOf(
      answer({ renewed: { const: true }, job: ref("JobView") }),
      answer({ renewed: { const: false }, reason: reasons(RENEW_REFUSALS, "The holder, past its job's deadline.") }, ["renewed"])
    ),
    validates: true
  },
  "POST /api/fleet/release": {
    operationId: "release",
    summary: "Release a job: done, failed, pending (the sweeper's hand-back) or retry",
    body: request(__spreadValues({ jobId, workerId }, releaseFields), ["jobId", "workerId", "status"]),
    ok: oneOf(
      answer({ released: { const: true }, job: ref("JobView") }),
      answer({ released: { const: false }, reason: reasons(RELEASE_REFUSALS, "Why the release was refused.") })
    ),
    validates: true
  },
  "POST /api/fleet/claim-next": {
    operationId: "claimNext",
    summary: "Claim the next due jobs, in claim order",
    body: request(__spreadValues({ workerId }, claimNextFields), ["workerId"]),
    ok: answer({ jobs: claimedJobs }),
    validates: true
  },
  "POST /api/fleet/sweep": {
    operationId: "sweep",
    summary: "Re-queue (or give up) jobs whose lease expired, one batch",
    body: request({ probeKeyPrefix }, []),
    ok: answer({
      requeued: count,
      gaveUp: count,
      timedOut: count,
      jobs: arrayOf2(answer({ id: text(), outcome: { type: "string", enum: [...SWEEP_OUTCOMES] }, claimedBy: text(), consecutiveOrphanCount: count }))
    }),
    validates: true
  },
  "GET /api/fleet/stats": {
    operationId: "stats",
    summary: "Counts by status, and the sweeper's state",
    query: [
      queryParam("format", { type: "string", enum: ["json", "prometheus"] }, "prometheus: the same figures in Prometheus text."),
      prefixParam,
      queryParam("queue", queueName, "Only jobs of this queue.")
    ],
    ok: answer({
      counts: answer(JOB_STATUSES.reduce((props, status) => __spreadProps(__spreadValues({}, props), { [status]: count }), {})),
      total: count,
      scheduled: count,
      retrying: count,
      deadLettered: count,
      oldestPendingAgeSeconds: { type: ["number", "null"] },
      expiredLeases: count,
      pastOrphanCap: count,
      orphanCap: count,
      sweeper: answer({ scheduled: { type: "boolean" }, schedule: text(), error: text() }, ["scheduled", "schedule"])
    }),
    okText: { type: "string", description: "Prometheus exposition text (format=prometheus)." },
    validates: true,
    unavailable: ERROR_503
  },
  "GET /api/fleet/completions": {
    operationId: "completions",
    summary: "Jobs finished per time bucket (the dashboard's chart)",
    query: [
      queryParam("windowSeconds", int(1, MAX_WINDOW_SECONDS), `Default ${DEFAULT_WINDOW_SECONDS}.`),
      queryParam("bucketSeconds", int(1, MAX_BUCKET_SECONDS), `Default ${DEFAULT_BUCKET_SECONDS}.`),
      prefixParam
    ],
    ok: answer({
      now: { type: "integer", description: "The server's clock, epoch ms." },
      bucketSeconds: int(1, MAX_BUCKET_SECONDS),
      from: { type: "integer" },
      to: { type: "integer" },
      buckets: arrayOf2(answer({ start: { type: "integer" }, done: count, failed: count }))
    }),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/enqueue": {
    operationId: "enqueue",
    summary: "Enqueue jobs, all or nothing",
    description: "A worker identity may call it when its can_enqueue is on (a 403 otherwise, and for a job of a queue it may not take).",
    body: request({
      jobs: arrayOf2(request({
        probeKey: bytes("The job's probe_key", MAX_PROBE_KEY_BYTES),
        payload: anyJson(`Any JSON, at most ${MAX_PAYLOAD_BYTES} bytes serialized; null when absent.`),
        runAt: text("ISO-8601 with a zone, or PocketBase's text form. Not with delaySeconds."),
        delaySeconds: { type: "number", minimum: 0, maximum: MAX_DELAY_SECONDS, description: "Due this many seconds from now. Not with runAt." },
        priority: int(MIN_PRIORITY, MAX_PRIORITY, "Higher runs first; default 0."),
        maxAttempts: int(0, MAX_MAX_ATTEMPTS, `0: no cap; default ${DEFAULT_MAX_ATTEMPTS}.`),
        uniqueKey: bytes("At most one non-terminal job per non-empty key", MAX_UNIQUE_KEY_BYTES),
        queue: queueName,
        group: nullable(groupName),
        timeoutSeconds: int(1, MAX_TIMEOUT_SECONDS, "The longest one attempt may be held."),
        startWithinSeconds: int(1, MAX_START_WITHIN_SECONDS, "Never first started later than run_at + this.")
      }, ["probeKey"]), 1, MAX_ENQUEUE_JOBS)
    }, ["jobs"]),
    ok: answer({
      jobs: arrayOf2(answer({
        id: text(),
        probeKey: text(),
        created: { type: "boolean", description: "false: uniqueKey matched a live job (or an earlier item), whose id this is." }
      }))
    }),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/cancel": {
    operationId: "cancel",
    summary: "Cancel a job that is not finished",
    body: request({ jobId }, ["jobId"]),
    ok: oneOf(answer({ cancelled: { const: true }, job: ref("QueueJobView") }), answer({ cancelled: { const: false } })),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/retry": {
    operationId: "retry",
    summary: "Put a failed or cancelled job back to pending",
    body: request({ jobId }, ["jobId"]),
    ok: oneOf(
      answer({ retried: { const: true }, job: ref("QueueJobView") }),
      answer({ retried: { const: false }, reason: reasons(RETRY_REFUSALS, "Another live job holds its unique_key.") }, ["retried"])
    ),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/maintenance": {
    operationId: "maintenance",
    summary: "Run the minute's maintenance tick now (schedules, counts, retention, flow upkeep)",
    body: request({}, []),
    ok: ref("MaintenanceTick"),
    validates: false,
    // A part that rolled back: what the other parts did, and the error.
    unavailable: {
      type: "object",
      properties: __spreadValues({ error: text() }, SCHEMAS["MaintenanceTick"]["properties"]),
      required: ["error", ...SCHEMAS["MaintenanceTick"]["required"]],
      additionalProperties: false
    }
  },
  "POST /api/fleet/heartbeat": {
    operationId: "heartbeat",
    summary: "Renew many leases of one holder in one transaction",
    body: request({
      workerId,
      leaseSeconds,
      leases: arrayOf2(request({
        jobId,
        leaseToken,
        progress: anyJson(`Any JSON, at most ${MAX_PROGRESS_BYTES} bytes serialized.`)
      }, ["jobId"]), 1, MAX_BATCH_ITEMS)
    }, ["workerId", "leases"]),
    ok: answer({ results: arrayOf2(heartbeatResult) }),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/complete": {
    operationId: "complete",
    summary: "Release many jobs of one holder in one transaction",
    description: "With claimNext (claim-next's fields without workerId), the same transaction then claims as claim-next would for workerId, answered as jobs: a worker whose slots the releases free asks for their next jobs in the same request.",
    body: request({
      workerId,
      releases: arrayOf2(request(__spreadValues({ jobId }, releaseFields), ["jobId", "status"]), 1, MAX_BATCH_ITEMS),
      claimNext: request(claimNextFields, [])
    }, ["workerId", "releases"]),
    ok: answer({ results: arrayOf2(completeResult), jobs: claimedJobs }, ["results"]),
    validates: true,
    unavailable: ERROR_503
  },
  "POST /api/fleet/flow": {
    operationId: "setFlow",
    summary: "Set a queue's or a group's flow control (pause, concurrency, rate limit, park)",
    body: {
      type: "object",
      properties: {
        queue: queueName,
        group: groupName,
        paused: { type: ["boolean", "null"] },
        concurrency: nullable(int(1, MAX_FLOW_CONCURRENCY)),
        rateLimit: nullable(ref("FlowRateLimit")),
        parkSeconds: { type: "number", minimum: 0, maximum: MAX_PARK_SECONDS, description: "0 clears the park. Not with parkUntil." },
        parkUntil: nullable(text(`A date with a zone, after now, at most ${MAX_PARK_SECONDS / 86400} days ahead; null clears the park.`))
      },
      oneOf: [{ required: ["queue"] }, { required: ["group"] }]
    },
    ok: answer({
      flow: {
        type: "object",
        properties: __spreadValues({ queue: queueName, group: groupName }, FLOW_SETTINGS),
        required: Object.keys(FLOW_SETTINGS),
        oneOf: [{ required: ["queue"] }, { required: ["group"] }],
        additionalProperties: false
      }
    }),
    validates: true,
    unavailable: ERROR_503
  },
  "GET /api/fleet/flow": {
    operationId: "getFlow",
    summary: "Flow control's settings and figures per queue and group",
    query: [queryParam("queue", queueName, "Only this queue."), queryParam("group", groupName, "Only this group.")],
    ok: answer({ queues: arrayOf2(ref("FlowScopeState")), groups: arrayOf2(ref("FlowScopeState")) }),
    validates: true,
    unavailable: ERROR_503
  },
  [`GET ${OPENAPI_PATH}`]: {
    operationId: "openApiDocument",
    summary: "This document",
    ok: { type: "object", required: ["openapi", "info", "paths"], description: "An OpenAPI 3.1 document." },
    validates: false
  }
};
var WHO = {
  admin: "An admin (superuser on 0.23+) only.",
  worker: "An admin, or a worker identity.",
  enqueue: "An admin, or a worker identity whose can_enqueue is on."
};
function errorResponse(description, schema = ref("Error")) {
  return { description, content: { "application/json": { schema } } };
}
function operationOf(route2) {
  const key = `${route2.method} ${route2.path}`;
  const op = OPERATIONS[key];
  if (op === void 0) throw new Error(`src/lib/openapi.ts has no operation for the route ${key}: describe it in OPERATIONS`);
  const okContent = { "application/json": { schema: op.ok } };
  if (op.okText !== void 0) okContent["text/plain"] = { schema: op.okText };
  const responses = { "200": { description: "The answer.", content: okContent } };
  if (op.validates) responses["400"] = errorResponse("Bad input: nothing was written.");
  responses["401"] = errorResponse("No token, a token that did not verify, a token of another auth collection, or a disabled worker identity.", ref("PocketBaseError"));
  responses["403"] = errorResponse(route2.access === "admin" ? "A worker identity's token: this route is for admins." : "A worker identity may not make this call (its queues, its workerId, its can_enqueue, or an unreadable queues field); nothing was written.");
  if (route2.method === "POST") responses["413"] = errorResponse(`The body is larger than ${MAX_REQUEST_BODY_BYTES} bytes; nothing was written.`);
  if (op.unavailable !== void 0) responses["503"] = errorResponse("The transaction rolled back or the read failed (details are in PocketBase's log).", op.unavailable);
  const operation = {
    operationId: op.operationId,
    summary: op.summary,
    description: [op.description, `Who may call: ${WHO[route2.access]}`].filter((s) => s !== void 0).join("\n\n"),
    security: route2.access === "admin" ? [{ adminToken: [] }] : [{ adminToken: [] }, { workerToken: [] }],
    "x-pb-fleet-access": route2.access
  };
  if (op.query !== void 0) operation["parameters"] = op.query;
  if (op.body !== void 0) operation["requestBody"] = { required: true, content: { "application/json": { schema: op.body } } };
  operation["responses"] = responses;
  return operation;
}
function openApiDocument(routes) {
  var _a;
  const paths = {};
  for (const route2 of routes) {
    const item = (_a = paths[route2.path]) != null ? _a : paths[route2.path] = {};
    item[route2.method.toLowerCase()] = operationOf(route2);
  }
  const token = (who) => ({
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: `${who} PocketBase's auth token as the Authorization header, as is (or after \`Bearer \`).`
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "pb-fleet",
      version: API_VERSION,
      description: `The /api/fleet/* routes of pb-fleet's PocketBase hooks (README, "The API"). Generated from src/lib/openapi.ts: do not edit openapi.json by hand.`,
      license: { name: "MIT", identifier: "MIT" }
    },
    paths,
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        adminToken: token("An admin's token (a superuser's on PocketBase 0.23+)."),
        workerToken: token("A worker identity's token (a fleet_workers record signed in with auth-with-password).")
      }
    }
  };
}

// src/handlers/routes.ts
var ROUTES = [
  { method: "POST", path: "/api/fleet/claim", module: "claim", handler: "handleClaim", access: "worker" },
  { method: "POST", path: "/api/fleet/renew", module: "renew", handler: "handleRenew", access: "worker" },
  { method: "POST", path: "/api/fleet/release", module: "release", handler: "handleRelease", access: "worker" },
  { method: "POST", path: "/api/fleet/claim-next", module: "claim-next", handler: "handleClaimNext", access: "worker" },
  { method: "POST", path: "/api/fleet/sweep", module: "sweep", handler: "handleSweep", access: "admin" },
  { method: "GET", path: "/api/fleet/stats", module: "stats", handler: "handleStats", access: "admin" },
  { method: "GET", path: "/api/fleet/completions", module: "completions", handler: "handleCompletions", access: "admin" },
  { method: "POST", path: "/api/fleet/enqueue", module: "enqueue", handler: "handleEnqueue", access: "enqueue" },
  { method: "POST", path: "/api/fleet/cancel", module: "cancel", handler: "handleCancel", access: "admin" },
  { method: "POST", path: "/api/fleet/retry", module: "retry", handler: "handleRetry", access: "admin" },
  { method: "POST", path: "/api/fleet/maintenance", module: "maintenance", handler: "handleMaintenance", access: "admin" },
  { method: "POST", path: "/api/fleet/heartbeat", module: "heartbeat", handler: "handleHeartbeat", access: "worker" },
  { method: "POST", path: "/api/fleet/complete", module: "complete", handler: "handleComplete", access: "worker" },
  { method: "POST", path: "/api/fleet/flow", module: "flow", handler: "handleSetFlow", access: "admin" },
  { method: "GET", path: "/api/fleet/flow", module: "flow", handler: "handleGetFlow", access: "admin" },
  // "worker": anyone who may call some route may read how (src/handlers/openapi.ts says why it is not anonymous).
  { method: "GET", path: "/api/fleet/openapi.json", module: "openapi", handler: "handleOpenApi", access: "worker" }
];

// src/handlers/openapi.ts
var built = null;
function handleOpenApi(_req) {
  if (built === null) built = openApiDocument(ROUTES);
  return json(200, built);
}

// entry.ts
function route(context) {
  return serve(context, handleOpenApi, "worker");
}
return route;
})()))(__context);
});

onModelBeforeCreate((__context) => {
return (globalThis["pbFleet onModelBeforeCreate job-created 70c78ffa545a"] || (globalThis["pbFleet onModelBeforeCreate job-created 70c78ffa545a"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/transitions.ts
function dueTimeOnCreate(runAt, nowMs) {
  return runAt === "" ? formatPbDate(nowMs) : null;
}
function queueOnCreate(queue) {
  return queue === "" ? DEFAULT_QUEUE : null;
}

// src/lib/identity.ts
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function stampDueTime(e) {
  const rec = e.model;
  const runAt = dueTimeOnCreate(rec.getString("run_at"), Date.now());
  if (runAt !== null) rec.set("run_at", runAt);
  const queue = queueOnCreate(rec.getString("queue"));
  if (queue !== null) rec.set("queue", queue);
}
return stampDueTime;
})()))(__context);
}, "probe_jobs");

onRecordBeforeRequestEmailChangeRequest((__context) => {
return (globalThis["pbFleet onRecordBeforeRequestEmailChangeRequest worker-account 7eb8bfa9f3c9"] || (globalThis["pbFleet onRecordBeforeRequestEmailChangeRequest worker-account 7eb8bfa9f3c9"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/identity.ts
var ACCOUNT_REQUEST_REFUSED = "a worker identity has no email: PocketBase's email change, password reset and verification are off for fleet_workers; an admin gives it a new password (npx pb-fleet worker rotate <name>)";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function refuseAccountRequest() {
  throw new ForbiddenError(ACCOUNT_REQUEST_REFUSED);
}
return refuseAccountRequest;
})()))(__context);
}, "fleet_workers");

onRecordBeforeRequestPasswordResetRequest((__context) => {
return (globalThis["pbFleet onRecordBeforeRequestPasswordResetRequest worker-account 7eb8bfa9f3c9"] || (globalThis["pbFleet onRecordBeforeRequestPasswordResetRequest worker-account 7eb8bfa9f3c9"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/identity.ts
var ACCOUNT_REQUEST_REFUSED = "a worker identity has no email: PocketBase's email change, password reset and verification are off for fleet_workers; an admin gives it a new password (npx pb-fleet worker rotate <name>)";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function refuseAccountRequest() {
  throw new ForbiddenError(ACCOUNT_REQUEST_REFUSED);
}
return refuseAccountRequest;
})()))(__context);
}, "fleet_workers");

onRecordBeforeRequestVerificationRequest((__context) => {
return (globalThis["pbFleet onRecordBeforeRequestVerificationRequest worker-account 7eb8bfa9f3c9"] || (globalThis["pbFleet onRecordBeforeRequestVerificationRequest worker-account 7eb8bfa9f3c9"] = (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/identity.ts
var ACCOUNT_REQUEST_REFUSED = "a worker identity has no email: PocketBase's email change, password reset and verification are off for fleet_workers; an admin gives it a new password (npx pb-fleet worker rotate <name>)";
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/pocketbase-0.22.ts
function refuseAccountRequest() {
  throw new ForbiddenError(ACCOUNT_REQUEST_REFUSED);
}
return refuseAccountRequest;
})()))(__context);
}, "fleet_workers");

cronAdd("pb-fleet-sweeper", (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var EVERY_MINUTE = "* * * * *";
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = EVERY_MINUTE;
var SWEEP_OFF = "off";
function sweepSchedule(getenv2) {
  const raw = getenv2(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" ? DEFAULT_SWEEP_SCHEDULE : raw;
}
var SWEEPER_STATE_KEY = "pbFleetSweeper";
function sweeperScheduled(schedule) {
  return { scheduled: true, schedule };
}
function sweeperNotScheduled(schedule, error) {
  return error === void 0 ? { scheduled: false, schedule } : { scheduled: false, schedule, error };
}
function invalidScheduleError(schedule, cause) {
  return `${SWEEP_SCHEDULE_ENV}=${JSON.stringify(schedule)} is not a valid 5-field cron expression (or "${SWEEP_OFF}"), so the server sweeper is not running: ${cause}`;
}
function encodeSweeperState(state) {
  return JSON.stringify(state);
}

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/cron.ts
var MACROS = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
};
var FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 }
];
function atoi(text) {
  return /^[+-]?\d+$/.test(text) ? Number(text) : null;
}
function parseCron(expression) {
  const expanded = Object.prototype.hasOwnProperty.call(MACROS, expression) ? MACROS[expression] : expression;
  const segments = expanded.split(" ");
  if (segments.length !== FIELDS.length) {
    return { ok: false, error: "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces" };
  }
  const sets = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    const values = /* @__PURE__ */ new Set();
    for (const part of segments[i].split(",")) {
      const error = addCronPart(values, part, field.min, field.max);
      if (error !== null) return { ok: false, error: `${field.name} field ${JSON.stringify(segments[i])}: ${error}` };
    }
    sets.push(values);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets;
  return { ok: true, schedule: { minutes, hours, daysOfMonth, months, daysOfWeek } };
}
function cronScheduleError(expression) {
  const parsed = parseCron(expression);
  return parsed.ok ? null : parsed.error;
}
function addCronPart(values, part, min, max) {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1]);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  let low = min;
  let high = max;
  const range = stepParts[0];
  if (range !== "*") {
    const bounds = range.split("-");
    if (bounds.length > 2) return "a range is written a-b";
    const first = atoi(bounds[0]);
    if (first === null || first < min || first > max) return `values must be numbers from ${min} to ${max}`;
    low = first;
    high = first;
    if (bounds.length === 1) {
      if (step !== 1) return "a step needs * or a range before it";
    } else {
      const last = atoi(bounds[1]);
      if (last === null || last < first || last > max) return `a range must end between its start and ${max}`;
      high = last;
    }
  }
  for (let v = low; v <= high; v += step) values.add(v);
  return null;
}

// src/lib/identity.ts
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function storeSet(key, value) {
  $app.store().set(key, value);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/handlers/sweep.ts
function sweeperScheduleAtLoad() {
  const configured = sweepSchedule(getenv);
  if (configured === SWEEP_OFF) {
    storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperNotScheduled(SWEEP_OFF)));
    return DEFAULT_SWEEP_SCHEDULE;
  }
  const invalid = cronScheduleError(configured);
  if (invalid !== null) {
    const error = invalidScheduleError(configured, invalid);
    storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperNotScheduled(configured, error)));
    logError("pb-fleet-sweeper is not scheduled", error);
    throw new Error(`pb-fleet-sweeper: ${error}`);
  }
  storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperScheduled(configured)));
  return configured;
}
return sweeperScheduleAtLoad;
})()(), () => {
return (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var EVERY_MINUTE = "* * * * *";
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = EVERY_MINUTE;
var SWEEP_OFF = "off";
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
var SWEEP_BATCH = 500;
function sweepSchedule(getenv2) {
  const raw = getenv2(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" ? DEFAULT_SWEEP_SCHEDULE : raw;
}
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow.ts
function deadlineMs(row) {
  var _a, _b;
  const timeout = (_a = row.timeout_seconds) != null ? _a : 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate((_b = row.claimed_at) != null ? _b : "");
  return claimed === null ? null : claimed + timeout * 1e3;
}

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function timedOutError(timeoutSeconds) {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
var TIMED_OUT_BEFORE = "timed out after ";
var TIMED_OUT_AFTER = " s";

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MAX_ATTEMPTS_ERROR = "max attempts reached";
var BACKOFF_BASE_MS = 1e3;
var BACKOFF_CAP_MS = 36e5;
var BACKOFF_JITTER = 0.25;
var TIMEOUT_BACKOFF_DRAW = 0.5;
var BACKOFF_MAX_EXPONENT = 32;
function retryBackoffMs(attempts, r) {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}
function hasAttemptsLeft(attempts, maxAttempts) {
  return maxAttempts <= 0 || attempts < maxAttempts;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return inStatusClass(HELD_STATUSES, status);
}
function isDue(row, nowMs) {
  return row.run_at <= formatPbDate(nowMs);
}
function isClaimable(row, nowMs) {
  return row.status === "pending" && isDue(row, nowMs) || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
function isPastDeadline(row, nowMs) {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}
function timeoutPatch(row, nowMs) {
  var _a;
  const error = timedOutError((_a = row.timeout_seconds) != null ? _a : 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}
function backToPendingPatch(row, runAt) {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1
  };
}
function deadLetterPatch(row, nowMs, error) {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1
  };
}
function requeuePatch(row, nowMs) {
  return {
    status: "pending",
    claimed_by: "",
    lease_token: "",
    // The expired lease stays as the row's "last in flight" marker.
    reclaim_count: row.reclaim_count + 1,
    consecutive_orphan_count: row.consecutive_orphan_count + 1,
    requeued_at: formatPbDate(nowMs),
    version: row.version + 1
  };
}
var ORPHAN_CAP_REASON = "orphan_cap";
var GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
var GIVE_UP_AFTER = " times in a row without a release";
function giveUpPatch(row, nowMs) {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}

// src/lib/identity.ts
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logInfo(message, ...attrs) {
  $app.logger().info(message, ...attrs);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/prefix.ts
function withPrefix(sql, params, probeKeyPrefix, use = "range") {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}
function prefixUpperBound(prefix) {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0));
  while (points.length > 0 && points[points.length - 1] === 1114111) points.pop();
  const last = points.pop();
  if (last === void 0) return null;
  points.push(last === 55295 ? 57344 : last + 1);
  return String.fromCodePoint(...points);
}

// src/lib/queries.ts
var NONE_HELD = { queues: [], groups: [] };
function heldBackTerms(held, params) {
  let terms = "";
  if (held.queues.length > 0) {
    const names = storedQueueValues(held.queues).map((queue, i) => {
      params[`heldQueue${i}`] = queue;
      return `{:heldQueue${i}}`;
    });
    terms += ` AND queue NOT IN (${names.join(", ")})`;
  }
  if (held.groups.length > 0) {
    const names = held.groups.map((group, i) => {
      params[`heldGroup${i}`] = group;
      return `{:heldGroup${i}}`;
    });
    terms += ` AND group_key NOT IN (${names.join(", ")})`;
  }
  return terms;
}
function storedQueueValues(queues) {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix, queues = null, held = NONE_HELD) {
  const params = { now: formatPbDate(nowMs) };
  if (queues === null) return withPrefix(`${EXPIRED_LEASE_SQL}${heldBackTerms(held, params)}`, params, probeKeyPrefix);
  const names = storedQueueValues(queues).map((queue, i) => {
    params[`queue${i}`] = queue;
    return `{:queue${i}}`;
  });
  return withPrefix(`${EXPIRED_LEASE_SQL} AND queue IN (${names.join(", ")})${heldBackTerms(held, params)}`, params, probeKeyPrefix);
}
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/sweep.ts
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
}
function sweepExpired(batch, nowMs, cap, probeKeyPrefix, limit) {
  var _a;
  const answer = { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  for (const row of batch.find(expiredLeaseWhere(nowMs, probeKeyPrefix), SWEEP_ORDER, limit)) {
    const decision = decideSweep(row, nowMs, cap);
    if (decision.kind === "skip") continue;
    batch.write(row, decision.patch);
    if (decision.kind === "requeue") answer.requeued++;
    else if (decision.kind === "timed_out") answer.timedOut++;
    else answer.gaveUp++;
    answer.jobs.push({
      id: row.id,
      outcome: decision.kind === "requeue" ? "requeued" : decision.kind === "timed_out" ? "timed_out" : "gave_up",
      claimedBy: row.claimed_by,
      consecutiveOrphanCount: (_a = decision.patch.consecutive_orphan_count) != null ? _a : row.consecutive_orphan_count
    });
  }
  return answer;
}
var SWEEP_ORDER = ["lease_expires_at ASC"];

// src/handlers/sweep.ts
function sweep(probeKeyPrefix) {
  const cap = orphanCap(getenv);
  return updateJobsBulk("sweep", (batch, now) => sweepExpired(batch, now, cap, probeKeyPrefix, SWEEP_BATCH));
}
function runScheduledSweep() {
  if (sweepSchedule(getenv) === SWEEP_OFF) return;
  const outcome = sweep("");
  if (outcome !== null && (outcome.requeued > 0 || outcome.gaveUp > 0 || outcome.timedOut > 0)) {
    logInfo("pb-fleet sweep", "requeued", outcome.requeued, "gaveUp", outcome.gaveUp, "timedOut", outcome.timedOut);
  }
}
return runScheduledSweep;
})()();
});

cronAdd("pb-fleet-maintenance", (() => {
// src/lib/job-events.ts
var JOB_EVENTS_KEEP_MS = 15 * 6e4;

// src/lib/config.ts
var EVERY_MINUTE = "* * * * *";
var MAINTENANCE_SCHEDULE_ENV = "PB_FLEET_MAINTENANCE_CRON";
var MAINTENANCE_SCHEDULE = EVERY_MINUTE;
var MAINTENANCE_OFF = "off";
function maintenanceSetting(getenv2) {
  const raw = getenv2(MAINTENANCE_SCHEDULE_ENV).trim();
  if (raw === "") return "on";
  if (raw === MAINTENANCE_OFF) return "off";
  return { error: `${MAINTENANCE_SCHEDULE_ENV} is ${JSON.stringify(raw)}: leave it unset (every minute) or set it to "off"` };
}

// src/lib/job-schema.ts
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}

// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var MAX_CLAIM_QUEUES = 16;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

// src/lib/queue.ts
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;

// src/lib/identity.ts
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

// src/handlers/maintenance.ts
function maintenanceScheduleAtLoad() {
  const setting = maintenanceSetting(getenv);
  if (typeof setting === "object") {
    logError("pb-fleet-maintenance is not scheduled", setting.error);
    throw new Error(`pb-fleet-maintenance: ${setting.error}`);
  }
  return MAINTENANCE_SCHEDULE;
}
return maintenanceScheduleAtLoad;
})()(), () => {
return (() => {
var __defProp = Object.defineProperty;
var __getOwnPropSymbols = Object.getOwnPropertySymbols;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __propIsEnum = Object.prototype.propertyIsEnumerable;
var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
var __spreadValues = (a, b) => {
  for (var prop in b || (b = {}))
    if (__hasOwnProp.call(b, prop))
      __defNormalProp(a, prop, b[prop]);
  if (__getOwnPropSymbols)
    for (var prop of __getOwnPropSymbols(b)) {
      if (__propIsEnum.call(b, prop))
        __defNormalProp(a, prop, b[prop]);
    }
  return a;
};

// src/lib/job-events.ts
var JOB_EVENTS_COLLECTION = "probe_job_events";
var JOB_EVENT_MAX_BYTES = 1e6;
function changeBytesBound(change) {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length + change.lease_expires_at.length;
  return 6 * texts + 120;
}
function jobEventChunks(changes) {
  const chunks = [];
  let chunk = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
var JOB_EVENTS_KEEP_MS = 15 * 6e4;
var JOB_EVENTS_RETENTION_BATCH = 500;
function deleteOldEventsStatement(cutoff, limit) {
  return {
    sql: `DELETE FROM ${JOB_EVENTS_COLLECTION} WHERE id IN (SELECT id FROM ${JOB_EVENTS_COLLECTION} WHERE created < {:cutoff} ORDER BY created LIMIT {:limit})`,
    params: { cutoff, limit }
  };
}

// src/lib/config.ts
var MAINTENANCE_SCHEDULE_ENV = "PB_FLEET_MAINTENANCE_CRON";
var MAINTENANCE_OFF = "off";
function maintenanceSetting(getenv2) {
  const raw = getenv2(MAINTENANCE_SCHEDULE_ENV).trim();
  if (raw === "") return "on";
  if (raw === MAINTENANCE_OFF) return "off";
  return { error: `${MAINTENANCE_SCHEDULE_ENV} is ${JSON.stringify(raw)}: leave it unset (every minute) or set it to "off"` };
}
var KEEP_DONE_ENV = "PB_FLEET_KEEP_DONE";
var DEFAULT_KEEP_DONE = "7d";
var KEEP_FAILED_ENV = "PB_FLEET_KEEP_FAILED";
var DEFAULT_KEEP_FAILED = "30d";
var KEEP_EVENTS_ENV = "PB_FLEET_KEEP_EVENTS";

// src/lib/job-schema.ts
var JOBS_COLLECTION = "probe_jobs";
var JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true }
};
function jobColumnsWhere(test) {
  const out = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name], name)) out.push(name);
  return out;
}
var isNumber = (c) => c.kind === "number";
var isJson = (c) => c.kind === "json";
var isText = (c) => !isNumber(c);
var JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isText(c));
var JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "always" && isNumber(c));
var JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isText(c));
var JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.row === "when_set" && isNumber(c));
var JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isText(c) && !isJson(c));
var JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isNumber(c));
var JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere((c) => c.patch === true && isJson(c));
var JOB_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere(isJson);
var HELD_STATUSES = ["claimed", "running"];
var TERMINAL_STATUSES = ["done", "failed", "cancelled"];
var COMPLETED_STATUSES = ["done", "failed"];
var LIVE_STATUSES = ["pending", ...HELD_STATUSES];
function statusListSql(statuses) {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
function statusInSql(statuses, column = "status") {
  return `${column} IN ${statusListSql(statuses)}`;
}
function inStatusClass(statuses, status) {
  return statuses.indexOf(status) !== -1;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
function parsePbDate(text) {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = /* @__PURE__ */ new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}
function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && year % 100 !== 0 || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)`;
var LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;
var UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/lib/queue-names.ts
var DEFAULT_QUEUE = "default";
var QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
var MAX_CLAIM_QUEUES = 16;
function isQueueName(value) {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}

// src/lib/flow.ts
var FLOW_CLAIMS_TABLE = "probe_flow_claims";
function deleteExpiredClaimsStatement(nowMs, limit) {
  return {
    sql: `DELETE FROM ${FLOW_CLAIMS_TABLE} WHERE rowid IN (SELECT rowid FROM ${FLOW_CLAIMS_TABLE} WHERE expires <= {:now} LIMIT {:limit})`,
    params: { now: nowMs, limit }
  };
}
var CLAIMS_RETENTION_BATCH = 2e4;
function deletePassedParksStatement(nowMs, limit) {
  return {
    sql: "DELETE FROM probe_flow WHERE id IN (SELECT id FROM probe_flow WHERE scope = 'group' AND COALESCE(parked_until, '') <= {:now} AND COALESCE(paused, 0) = 0 AND COALESCE(concurrency, 0) = 0 AND COALESCE(rate_limit, 0) = 0 LIMIT {:limit})",
    params: { now: formatPbDate(nowMs), limit }
  };
}
var PARKS_RETENTION_BATCH = 5e3;
function startByPassed(row, nowMs) {
  var _a;
  const startBy = (_a = row.start_by) != null ? _a : "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}
function startByPassedWhere(nowMs) {
  return { sql: "status = 'pending' AND start_by != '' AND start_by <= {:now} AND attempts = 0", params: { now: formatPbDate(nowMs) } };
}
var START_BY_ORDER = ["start_by ASC"];
var START_BY_BATCH = 500;

// src/lib/flow-limits.ts
var MAX_GROUP_KEY_CHARS = 200;
function isGroupName(value) {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (code <= 31 || code >= 127 && code <= 159) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}
var GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;
function notStartedByError(startBy) {
  return `not started by ${startBy}`;
}

// src/lib/queue.ts
var MAX_PAYLOAD_BYTES = 1048576;
var MAX_REQUEST_BODY_BYTES = 33554432;
var REQUEST_TOO_LARGE = `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: send fewer or smaller items per call (nothing was written)`;
var MIN_PRIORITY = -1e3;
var MAX_PRIORITY = 1e3;
var MAX_MAX_ATTEMPTS = 1e3;
function jsonByteLength(value) {
  const text = JSON.stringify(value);
  return text === void 0 ? 0 : utf8ByteLength(text);
}
function utf8ByteLength(text) {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return text.length - nonAscii.length + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}

// src/lib/transitions.ts
function isTerminalStatus(status) {
  return inStatusClass(TERMINAL_STATUSES, status);
}
function notStartedPatch(row, nowMs) {
  var _a;
  return {
    status: "failed",
    finished_at: formatPbDate(nowMs),
    last_error: notStartedByError((_a = row.start_by) != null ? _a : ""),
    version: row.version + 1
  };
}

// src/lib/cron.ts
var MACROS = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
};
var FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 }
];
function atoi(text) {
  return /^[+-]?\d+$/.test(text) ? Number(text) : null;
}
function parseCron(expression) {
  const expanded = Object.prototype.hasOwnProperty.call(MACROS, expression) ? MACROS[expression] : expression;
  const segments = expanded.split(" ");
  if (segments.length !== FIELDS.length) {
    return { ok: false, error: "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces" };
  }
  const sets = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    const values = /* @__PURE__ */ new Set();
    for (const part of segments[i].split(",")) {
      const error = addCronPart(values, part, field.min, field.max);
      if (error !== null) return { ok: false, error: `${field.name} field ${JSON.stringify(segments[i])}: ${error}` };
    }
    sets.push(values);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets;
  return { ok: true, schedule: { minutes, hours, daysOfMonth, months, daysOfWeek } };
}
function addCronPart(values, part, min, max) {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1]);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  let low = min;
  let high = max;
  const range = stepParts[0];
  if (range !== "*") {
    const bounds = range.split("-");
    if (bounds.length > 2) return "a range is written a-b";
    const first = atoi(bounds[0]);
    if (first === null || first < min || first > max) return `values must be numbers from ${min} to ${max}`;
    low = first;
    high = first;
    if (bounds.length === 1) {
      if (step !== 1) return "a step needs * or a range before it";
    } else {
      const last = atoi(bounds[1]);
      if (last === null || last < first || last > max) return `a range must end between its start and ${max}`;
      high = last;
    }
  }
  for (let v = low; v <= high; v += step) values.add(v);
  return null;
}
function cronMatchesMinute(schedule, epochMs) {
  const t = new Date(epochMs);
  return schedule.minutes.has(t.getUTCMinutes()) && schedule.hours.has(t.getUTCHours()) && schedule.daysOfMonth.has(t.getUTCDate()) && schedule.daysOfWeek.has(t.getUTCDay()) && schedule.months.has(t.getUTCMonth() + 1);
}

// src/lib/schedules.ts
var SCHEDULES_PER_TICK = 100;
function enabledSchedulesQuery(minuteMs, limit = SCHEDULES_PER_TICK, afterName = "") {
  return {
    // COALESCE: a hand-made row's empty json field is NULL, which the text shape cannot read.
    sql: "SELECT id, name, probe_key, cron, COALESCE(payload, '') AS payload, priority, max_attempts, enabled, COALESCE(last_enqueued_for, '') AS last_enqueued_for, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key FROM probe_schedules WHERE enabled = TRUE AND name > {:after} AND COALESCE(last_enqueued_for, '') < {:minute} ORDER BY name LIMIT {:limit}",
    params: { after: afterName, limit, minute: formatPbDate(minuteStart(minuteMs)) }
  };
}
var SCHEDULE_COLUMNS_SHAPE = {
  id: "",
  name: "",
  probe_key: "",
  cron: "",
  payload: "",
  priority: 0,
  max_attempts: 0,
  enabled: false,
  last_enqueued_for: "",
  queue: "",
  group_key: ""
};
var SCHEDULE_PAGES_PER_TICK = 10;
function markScheduleStatement(id, patch) {
  return {
    sql: "UPDATE probe_schedules SET last_enqueued_for = {:minute} WHERE id = {:id}",
    params: { id, minute: patch.last_enqueued_for }
  };
}
var MINUTE_MS = 6e4;
function minuteStart(epochMs) {
  return Math.floor(epochMs / MINUTE_MS) * MINUTE_MS;
}
function scheduleUniqueKey(name, minuteMs) {
  return `${SCHEDULE_KEY_PREFIX}${name}:${new Date(minuteStart(minuteMs)).toISOString().slice(0, 16)}Z`;
}
var SCHEDULE_KEY_PREFIX = "pb-fleet-schedule:";
function decideScheduleTick(row, nowMs) {
  var _a;
  if (row.enabled !== true) return { kind: "skip", reason: "disabled" };
  const parsed = parseCron(row.cron);
  if (!parsed.ok) return invalid(row, `cron ${JSON.stringify(row.cron)} is not a valid cron expression: ${parsed.error}`);
  const minute = minuteStart(nowMs);
  if (!cronMatchesMinute(parsed.schedule, minute)) return { kind: "skip", reason: "not_due" };
  const last = row.last_enqueued_for === "" ? null : parsePbDate(row.last_enqueued_for);
  if (last !== null && last >= minute) return { kind: "skip", reason: "already_enqueued" };
  const payload = (_a = row.payload) != null ? _a : null;
  const error = scheduleFieldError(row, payload);
  if (error !== null) return invalid(row, error);
  return {
    kind: "enqueue",
    item: {
      probeKey: row.probe_key,
      queue: row.queue === "" ? DEFAULT_QUEUE : row.queue,
      groupKey: row.group_key,
      timeoutSeconds: 0,
      startBy: "",
      payload,
      priority: row.priority,
      maxAttempts: row.max_attempts,
      uniqueKey: scheduleUniqueKey(row.name, minute),
      runAt: formatPbDate(minute)
    },
    patch: { last_enqueued_for: formatPbDate(minute) }
  };
}
function invalid(row, error) {
  return {
    kind: "skip",
    reason: "invalid",
    error: `probe_schedules ${JSON.stringify(row.name)} (id ${row.id}): ${error}; nothing enqueued`
  };
}
function scheduleFieldError(row, payload) {
  if (typeof row.name !== "string" || row.name === "") return "name is empty";
  if (typeof row.probe_key !== "string" || row.probe_key === "") return "probe_key is empty";
  if (!Number.isInteger(row.priority) || row.priority < MIN_PRIORITY || row.priority > MAX_PRIORITY) {
    return `priority ${row.priority} is not an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  if (!Number.isInteger(row.max_attempts) || row.max_attempts < 0 || row.max_attempts > MAX_MAX_ATTEMPTS) {
    return `max_attempts ${row.max_attempts} is not an integer from 0 (no cap) to ${MAX_MAX_ATTEMPTS}`;
  }
  if (row.queue !== "" && !isQueueName(row.queue)) return `queue ${JSON.stringify(row.queue)} is not a queue name`;
  if (row.group_key !== "" && !isGroupName(row.group_key)) return `group_key is not a group name (${GROUP_NAME_RULE})`;
  const bytes = jsonByteLength(payload);
  if (bytes > MAX_PAYLOAD_BYTES) return `payload is ${bytes} bytes of JSON, more than ${MAX_PAYLOAD_BYTES}`;
  return null;
}

// src/lib/identity.ts
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/adapter/contract.ts
var ROLLED_BACK = "pb-fleet: transaction rolled back";

// src/lib/job-row.ts
function jobView(row, patch) {
  var _a, _b, _c, _d;
  const p = patch != null ? patch : {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (_a = p.status) != null ? _a : row.status,
    claimed_by: (_b = p.claimed_by) != null ? _b : row.claimed_by,
    lease_expires_at: (_c = p.lease_expires_at) != null ? _c : row.lease_expires_at,
    version: (_d = p.version) != null ? _d : row.version
  };
}
function parseJsonField(text) {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    return null;
  }
}

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logInfo(message, ...attrs) {
  $app.logger().info(message, ...attrs);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  for (const field of JOB_ROW_FLOW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_FLOW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function setFields(rec, fields) {
  for (const field in fields) {
    const value = fields[field];
    if (value === void 0) continue;
    rec.set(field, JOB_JSON_FIELDS.indexOf(field) === -1 ? value : JSON.stringify(value));
  }
}
function readAll(db, query, shape) {
  const rows = arrayOf(new DynamicModel(shape));
  db.newQuery(query.sql).bind(query.params).all(rows);
  return rows;
}
function executeStatement(db, statement) {
  return db.newQuery(statement.sql).bind(statement.params).execute().rowsAffected();
}

// src/lib/bulk.ts
var JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");
var textMembers = (fields) => fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
var numberMembers = (fields) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
var BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
var NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";
var ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;
function jobRowsQuery(where, order, limit) {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params
  };
}
var JOB_ROWS_SHAPE = { rows: "" };
function parseJobRows(text) {
  return JSON.parse(text);
}
var PATCH_TEXT = JOB_PATCH_TEXT_FIELDS;
var PATCH_NUMBER = JOB_PATCH_NUMBER_FIELDS;
var PATCH_JSON = JOB_PATCH_JSON_FIELDS;
function bulkPatchStatement(patches, updated) {
  const columns = [];
  const items = patches.map(({ id, patch }) => {
    const item = { id };
    for (const field in patch) {
      const value = patch[field];
      if (value === void 0) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) => `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p WHERE probe_jobs.id = json_extract(p.value, '$.id')`,
    params: { patches: JSON.stringify(items), updated }
  };
}

// src/lib/job-counts.ts
var JOB_COUNTS_TABLE = "probe_job_counts";
var JOB_COMPLETIONS_TABLE = "probe_job_completions";
var JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update"
];
var JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE];
function bucket(row) {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`
  };
}
function addTo(row) {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;`;
}
function takeFrom(row) {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}
var [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;
function finishedSecond(row) {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}
var COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;
var ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;`;
var OLD_BUCKET = bucket("OLD");
var NEW_BUCKET = bucket("NEW");
var JOB_COUNTS_SETUP = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`
];
var JOB_COUNTS_TEARDOWN = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`)
];
var JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;
var JOB_COUNTS_REBUILD = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3`,
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) WHERE s IS NOT NULL GROUP BY s`
];
function pruneCompletionsStatement(nowMs) {
  return {
    sql: `DELETE FROM ${JOB_COMPLETIONS_TABLE} WHERE second < {:before}`,
    params: { before: Math.floor(nowMs / 1e3) - JOB_COMPLETIONS_KEEP_SECONDS }
  };
}
var JOB_COUNTS_READY_SQL = `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN (${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;
var JOB_COUNTS_READY_QUERY = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
var JOB_COUNTS_READY_SHAPE = { ready: 0 };
var JOB_COUNTS_REPAIR = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

// src/lib/types.ts
var FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"];
var CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS];

// src/lib/queries.ts
var LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"];
var CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER];
var UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
var UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
var UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
var UNREADABLE_LEASE_INDEX = `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
var UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
var UNREADABLE_LEASE_INDEX_PRESENT = {
  sql: "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name = {:name}",
  params: { name: UNREADABLE_LEASE_INDEX_NAME }
};
var EXPIRED_LEASE_SQL = `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;
function liveUniqueKeyQuery(uniqueKey) {
  return {
    sql: `SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`,
    params: { uniqueKey }
  };
}
var LIVE_KEY_SHAPE = { id: "", queue: "" };
var LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");
var FINISHED_SQL = "finished_at != ''";

// src/adapter/transactions.ts
function jobStore(records, opener) {
  return __spreadValues(__spreadValues({}, records), opener);
}
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}
function jobBatchOf(store, tx) {
  const foundById = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === void 0) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    }
  };
}
function updateJobsBulkIn(store, source, work) {
  return inTransaction(store, (tx) => {
    let pending = {};
    const written = {};
    const flush = () => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === void 0 ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        pending[row.id] = earlier === void 0 ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes2) {
        for (const change of changes2) written[change.id] = change;
      }
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id]);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}
function firstOf(rows) {
  return rows.length > 0 ? rows[0] : null;
}
function inTransaction(store, fn) {
  const result = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}

// src/adapter/pocketbase-0.22.ts
var RECORDS = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement)
};
var STORE = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError
});
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}
function updateJobsBulk(source, work) {
  return updateJobsBulkIn(STORE, source, work);
}
var COLLECTION_CACHE_MS = 2e3;
function cachedCollection(name, nowMs, dao) {
  const cache = globalThis;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}
function forgetCollections() {
  delete globalThis.pbFleetCollections;
}

// src/lib/enqueue.ts
function enqueueJobs(batch, items) {
  var _a, _b;
  const idByUniqueKey = {};
  const answer = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const key = item.uniqueKey;
    if (key !== "") {
      const known = (_b = idByUniqueKey[key]) != null ? _b : (_a = batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE)) == null ? void 0 : _a.id;
      if (known !== void 0) {
        idByUniqueKey[key] = known;
        answer.push({ id: known, probeKey: item.probeKey, created: false });
        continue;
      }
    }
    const id = batch.insert({
      probe_key: item.probeKey,
      queue: item.queue,
      status: "pending",
      payload: item.payload,
      run_at: item.runAt,
      priority: item.priority,
      max_attempts: item.maxAttempts,
      unique_key: key,
      enqueue_index: index,
      group_key: item.groupKey,
      timeout_seconds: item.timeoutSeconds,
      start_by: item.startBy
    });
    if (key !== "") idByUniqueKey[key] = id;
    answer.push({ id, probeKey: item.probeKey, created: true });
  }
  return answer;
}

// src/lib/retention.ts
var RETENTION_BATCH = 200;
var RETENTION_BUDGET_MS = 15e3;
var RETENTION_CLASSES = COMPLETED_STATUSES;
var CLASS_STATUSES = {
  done: ["done", "cancelled"],
  failed: ["failed"]
};
var CLASS_SETTINGS = {
  done: { env: KEEP_DONE_ENV, fallback: DEFAULT_KEEP_DONE, rows: "done or cancelled" },
  failed: { env: KEEP_FAILED_ENV, fallback: DEFAULT_KEEP_FAILED, rows: "failed" }
};
var UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
function parseKeepDuration(text) {
  if (text === "0") return 0;
  const m = /^(\d+)([smhd])$/.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]];
  return Number.isSafeInteger(ms) ? ms : null;
}
function keepSetting(getenv2, retentionClass) {
  const setting = CLASS_SETTINGS[retentionClass];
  const raw = getenv2(setting.env).trim();
  const ms = parseKeepDuration(raw === "" ? setting.fallback : raw);
  if (ms === null) {
    return {
      retentionClass,
      keepMs: null,
      error: `${setting.env}=${JSON.stringify(raw)} is not a duration such as ${setting.fallback}, 12h, 30m, 90s or 0 (keep forever), so no ${setting.rows} rows are deleted`
    };
  }
  return { retentionClass, keepMs: ms === 0 ? null : ms };
}
function eventsKeep(getenv2) {
  const raw = getenv2(KEEP_EVENTS_ENV).trim();
  if (raw === "") return { keepMs: JOB_EVENTS_KEEP_MS };
  const ms = parseKeepDuration(raw);
  if (ms === null) {
    return {
      keepMs: JOB_EVENTS_KEEP_MS,
      error: `${KEEP_EVENTS_ENV}=${JSON.stringify(raw)} is not a duration such as 15m, 1h or 0 (keep forever), so probe_job_events are kept ${JOB_EVENTS_KEEP_MS / 6e4}m`
    };
  }
  return { keepMs: ms === 0 ? null : ms };
}
function retentionCutoff(nowMs, keepMs) {
  if (keepMs === null || !(keepMs > 0)) return null;
  const cutoffMs = nowMs - keepMs;
  return Number.isFinite(cutoffMs) && cutoffMs >= 0 ? formatPbDate(cutoffMs) : null;
}
function statusesOf(retentionClass) {
  const statuses = Object.prototype.hasOwnProperty.call(CLASS_STATUSES, retentionClass) ? CLASS_STATUSES[retentionClass] : void 0;
  if (statuses === void 0 || statuses.length === 0 || !statuses.every(isTerminalStatus)) {
    throw new Error(`not a retention class: ${JSON.stringify(retentionClass)}`);
  }
  return statuses;
}
function expiredIdsQuery(retentionClass, cutoff, limit) {
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`not a batch size: ${limit}`);
  const statuses = statusesOf(retentionClass).map((status) => `'${status}'`).join(", ");
  return {
    sql: `SELECT id FROM probe_jobs WHERE status IN (${statuses}) AND ${FINISHED_SQL} AND finished_at < {:cutoff} LIMIT {:limit}`,
    params: { cutoff, limit }
  };
}
function deleteExpiredQuery(retentionClass, cutoff, limit) {
  const ids = expiredIdsQuery(retentionClass, cutoff, limit);
  return { sql: `DELETE FROM probe_jobs WHERE id IN (${ids.sql})`, params: ids.params };
}

// src/lib/maintenance.ts
function enqueueDueSchedules(batch, nowMs) {
  const tick2 = { enqueued: [], errors: [] };
  let after = "";
  for (let page = 0; page < SCHEDULE_PAGES_PER_TICK; page++) {
    const rows = batch.queryAll(enabledSchedulesQuery(nowMs, SCHEDULES_PER_TICK, after), SCHEDULE_COLUMNS_SHAPE);
    for (const columns of rows) {
      const row = Object.assign({}, columns, { payload: parseJsonField(columns.payload) });
      const decision = decideScheduleTick(row, nowMs);
      if (decision.kind === "skip") {
        if (decision.error !== void 0) tick2.errors.push(decision.error);
        continue;
      }
      const job = enqueueJobs(batch, [decision.item])[0];
      batch.execute(markScheduleStatement(row.id, decision.patch));
      if (job !== void 0) tick2.enqueued.push({ schedule: row.name, jobId: job.id, created: job.created });
    }
    if (rows.length < SCHEDULES_PER_TICK) return tick2;
    after = rows[rows.length - 1].name;
  }
  tick2.errors.push(`more than ${SCHEDULES_PER_TICK * SCHEDULE_PAGES_PER_TICK} enabled schedules are waiting this minute: those after ${JSON.stringify(after)} by name wait for a later tick`);
  return tick2;
}
var TICK_BATCH = { rows: RETENTION_BATCH, events: JOB_EVENTS_RETENTION_BATCH };
function deleteExpiredBatch(batch, nowMs, getenv2, limits = TICK_BATCH) {
  const tick2 = { deleted: { done: 0, failed: 0 }, events: 0, errors: [] };
  for (const retentionClass of RETENTION_CLASSES) {
    const setting = keepSetting(getenv2, retentionClass);
    if (setting.error !== void 0) tick2.errors.push(setting.error);
    const cutoff = retentionCutoff(nowMs, setting.keepMs);
    if (cutoff === null) continue;
    tick2.deleted[retentionClass] = batch.execute(deleteExpiredQuery(retentionClass, cutoff, limits.rows));
  }
  const events = eventsKeep(getenv2);
  if (events.error !== void 0) tick2.errors.push(events.error);
  const eventsCutoff = retentionCutoff(nowMs, events.keepMs);
  if (eventsCutoff !== null) tick2.events = batch.execute(deleteOldEventsStatement(eventsCutoff, limits.events));
  return tick2;
}
function batchWasFull(tick2) {
  return tick2.deleted.done >= RETENTION_BATCH || tick2.deleted.failed >= RETENTION_BATCH || tick2.events >= JOB_EVENTS_RETENTION_BATCH;
}
function drainRetention(runBatch, clock, budgetMs = RETENTION_BUDGET_MS) {
  const drain = { deleted: { done: 0, failed: 0 }, events: 0, errors: [], batches: 0, drained: false, rolledBack: false };
  const started = clock();
  do {
    const tick2 = runBatch();
    if (tick2 === null) {
      drain.rolledBack = true;
      return drain;
    }
    if (drain.batches === 0) drain.errors = tick2.errors;
    drain.batches++;
    drain.deleted.done += tick2.deleted.done;
    drain.deleted.failed += tick2.deleted.failed;
    drain.events += tick2.events;
    if (!batchWasFull(tick2)) {
      drain.drained = true;
      return drain;
    }
  } while (clock() - started < budgetMs);
  return drain;
}
function ensureJobCounts(batch, nowMs) {
  const found = batch.queryOne(JOB_COUNTS_READY_QUERY, JOB_COUNTS_READY_SHAPE);
  const repair = found === null || found.ready !== 1;
  if (repair) for (const statement of JOB_COUNTS_REPAIR) batch.execute({ sql: statement, params: {} });
  batch.execute(pruneCompletionsStatement(nowMs));
  return repair;
}
function ensureLeaseIndex(batch) {
  var _a;
  if (((_a = batch.queryOne(UNREADABLE_LEASE_INDEX_PRESENT, { n: 0 })) == null ? void 0 : _a.n) === 1) return false;
  batch.execute({ sql: UNREADABLE_LEASE_INDEX_SETUP, params: {} });
  return true;
}
function flowUpkeepBatch(batch, nowMs) {
  let notStarted = 0;
  for (const row of batch.find(startByPassedWhere(nowMs), START_BY_ORDER, START_BY_BATCH)) {
    if (!startByPassed(row, nowMs)) continue;
    batch.write(row, notStartedPatch(row, nowMs));
    notStarted++;
  }
  return {
    notStarted,
    claims: batch.execute(deleteExpiredClaimsStatement(nowMs, CLAIMS_RETENTION_BATCH)),
    parks: batch.execute(deletePassedParksStatement(nowMs, PARKS_RETENTION_BATCH))
  };
}
function flowUpkeepWasFull(upkeep) {
  return upkeep.notStarted >= START_BY_BATCH || upkeep.claims >= CLAIMS_RETENTION_BATCH || upkeep.parks >= PARKS_RETENTION_BATCH;
}
var FLOW_UPKEEP_BATCHES = 50;
function drainFlowUpkeep(runBatch) {
  const total = { notStarted: 0, claims: 0, parks: 0 };
  for (let i = 0; i < FLOW_UPKEEP_BATCHES; i++) {
    const done = runBatch();
    if (done === null) return null;
    total.notStarted += done.notStarted;
    total.claims += done.claims;
    total.parks += done.parks;
    if (!flowUpkeepWasFull(done)) break;
  }
  return total;
}

// src/handlers/maintenance.ts
function flowUpkeep() {
  return drainFlowUpkeep(() => updateJobsBulk("maintenance", (batch, now) => flowUpkeepBatch(batch, now)));
}
function tick() {
  var _a;
  const countsRepaired = updateJobs((batch, now) => ensureJobCounts(batch, now));
  if (countsRepaired === true) logError("pb-fleet maintenance", "the job counts' triggers were missing: rebuilt them and recounted");
  const leaseIndexRepaired = updateJobs((batch) => ensureLeaseIndex(batch));
  if (leaseIndexRepaired === true) logError("pb-fleet maintenance", "the expired-lease index was missing: made it again");
  const schedules = updateJobs((batch, now) => enqueueDueSchedules(batch, now));
  const retention = drainRetention(() => updateJobs((batch, now) => deleteExpiredBatch(batch, now, getenv)), Date.now);
  const flow = flowUpkeep();
  for (const error of ((_a = schedules == null ? void 0 : schedules.errors) != null ? _a : []).concat(retention.errors)) logError("pb-fleet maintenance", error);
  return { countsRepaired, leaseIndexRepaired, schedules, retention, flow };
}
function runMaintenance() {
  var _a, _b;
  if (maintenanceSetting(getenv) !== "on") return;
  const done = tick();
  const enqueued = (_b = (_a = done.schedules) == null ? void 0 : _a.enqueued.filter((job) => job.created).length) != null ? _b : 0;
  const { deleted, events, batches, drained } = done.retention;
  if (enqueued > 0 || deleted.done + deleted.failed + events > 0) {
    logInfo(
      "pb-fleet maintenance",
      "enqueued",
      enqueued,
      "deleted",
      deleted.done + deleted.failed,
      "events",
      events,
      "batches",
      batches,
      "drained",
      drained
    );
  }
  if (done.flow !== null && done.flow.notStarted > 0) logInfo("pb-fleet maintenance", "not started by start_by", done.flow.notStarted);
}
return runMaintenance;
})()();
});
