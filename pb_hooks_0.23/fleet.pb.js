// GENERATED FILE - DO NOT EDIT. For PocketBase 0.23.x to 0.40.x.
// Built by esbuild.config.mjs from src/handlers, src/adapter and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.

routerAdd("POST", "/api/fleet/claim", (__context) => {
return (globalThis["pbFleet POST /api/fleet/claim c3420f3f3712"] || (globalThis["pbFleet POST /api/fleet/claim c3420f3f3712"] = (() => {
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];
function jobView(row, patch) {
  const after = patch ? Object.assign({}, row, patch) : row;
  return {
    id: after.id,
    probe_key: after.probe_key,
    status: after.status,
    claimed_by: after.claimed_by,
    lease_expires_at: after.lease_expires_at,
    version: after.version
  };
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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/adapter/runtime.ts
function newLeaseToken() {
  return $security.randomString(24);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}

// src/adapter/transactions.ts
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

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJob(jobId, decide, patchOf) {
  return updateJobIn(STORE, jobId, decide, patchOf);
}

// src/lib/answers.ts
function claimAnswer(outcome) {
  var _a;
  if (outcome === null) return { claimed: false };
  const { row, decision } = outcome;
  if (decision.kind === "already_held") {
    return { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
  }
  if (decision.kind !== "win") return { claimed: false };
  return { claimed: true, job: jobView(row, decision.patch), leaseToken: (_a = decision.patch.lease_token) != null ? _a : "" };
}
function claimPatch(decision) {
  return decision.kind === "win" || decision.kind === "give_up" ? decision.patch : null;
}

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
var REFERENCE_STEAL = { kind: "reference" };
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2, stealRule = REFERENCE_STEAL) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  const patch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds),
    lease_token: newLeaseToken2(),
    // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim.
    claimed_at: formatPbDate(nowMs)
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}
var ORPHAN_CAP_REASON = "orphan_cap";
function giveUpPatch(row, nowMs) {
  return {
    status: "failed",
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds) {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1e3);
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
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

// src/handlers/claim.ts
function handleClaim(req) {
  const valid = validateClaimRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const { jobId, workerId, leaseSeconds } = valid.value;
  const outcome = updateJob(jobId, (row, now) => decideClaim(row, workerId, leaseSeconds, now, newLeaseToken), claimPatch);
  return json(200, claimAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleClaim);
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/renew", (__context) => {
return (globalThis["pbFleet POST /api/fleet/renew c095bae3c87e"] || (globalThis["pbFleet POST /api/fleet/renew c095bae3c87e"] = (() => {
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];
function jobView(row, patch) {
  const after = patch ? Object.assign({}, row, patch) : row;
  return {
    id: after.id,
    probe_key: after.probe_key,
    status: after.status,
    claimed_by: after.claimed_by,
    lease_expires_at: after.lease_expires_at,
    version: after.version
  };
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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}

// src/adapter/transactions.ts
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

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJob(jobId, decide, patchOf) {
  return updateJobIn(STORE, jobId, decide, patchOf);
}

// src/lib/answers.ts
function renewAnswer(outcome) {
  if (outcome === null || outcome.decision === null) return { renewed: false };
  return { renewed: true, job: jobView(outcome.row, outcome.decision) };
}

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isStaleToken(row, req) {
  return req.leaseToken !== void 0 && req.leaseToken !== row.lease_token;
}
function decideRenew(row, req, nowMs) {
  if (!isHeldStatus(row.status)) return null;
  if (row.claimed_by !== req.workerId || isStaleToken(row, req)) return null;
  if (!isLeaseLive(row.lease_expires_at, nowMs)) return null;
  return {
    status: "running",
    lease_expires_at: leaseEnd(nowMs, req.leaseSeconds),
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds) {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1e3);
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
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateRenewRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const leaseToken = readLeaseToken(data);
  if (leaseToken === INVALID) return fail(LEASE_TOKEN_ERROR);
  return { ok: true, value: Object.assign({ leaseToken }, ids.value) };
}
var INVALID = null;
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return void 0;
  return typeof token === "string" && token !== "" ? token : INVALID;
}

// src/handlers/renew.ts
function handleRenew(req) {
  const valid = validateRenewRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const outcome = updateJob(valid.value.jobId, (row, now) => decideRenew(row, valid.value, now), (patch) => patch);
  return json(200, renewAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleRenew);
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/release", (__context) => {
return (globalThis["pbFleet POST /api/fleet/release 3c7f72c251d7"] || (globalThis["pbFleet POST /api/fleet/release 3c7f72c251d7"] = (() => {
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];
function jobView(row, patch) {
  const after = patch ? Object.assign({}, row, patch) : row;
  return {
    id: after.id,
    probe_key: after.probe_key,
    status: after.status,
    claimed_by: after.claimed_by,
    lease_expires_at: after.lease_expires_at,
    version: after.version
  };
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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/adapter/runtime.ts
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function jobByIdWhere(jobId) {
  return { sql: "id = {:id}", params: { id: jobId } };
}

// src/adapter/transactions.ts
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

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJob(jobId, decide, patchOf) {
  return updateJobIn(STORE, jobId, decide, patchOf);
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

// src/lib/config.ts
var SWEEPER_HOLDER = "pb-fleet-sweeper";

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isTerminalStatus(status) {
  return status === "done" || status === "failed";
}
function isStaleToken(row, req) {
  return req.leaseToken !== void 0 && req.leaseToken !== row.lease_token;
}
function decideRelease(row, req, nowMs) {
  if (!isHeldStatus(row.status)) {
    if (isTerminalStatus(row.status) && row.claimed_by === req.workerId) {
      return refused(isStaleToken(row, req) ? "refused_stale_token" : "refused_terminal_same_holder");
    }
    return refused("refused_not_holder");
  }
  if (row.claimed_by !== req.workerId) return refused("refused_not_holder");
  if (isStaleToken(row, req)) return refused("refused_stale_token");
  const live = isLeaseLive(row.lease_expires_at, nowMs);
  if (req.target === "pending") {
    return live ? refused("refused_lease_live") : { kind: "release", patch: requeuePatch(row, nowMs) };
  }
  if (!live) return refused("refused_not_holder");
  return {
    kind: "release",
    patch: {
      status: req.target,
      finished_at: formatPbDate(nowMs),
      // A finished job starts any later orphaning with a fresh budget.
      consecutive_orphan_count: 0,
      version: row.version + 1
    }
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

// src/lib/types.ts
var RELEASE_TARGETS = ["done", "failed", "pending"];

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
function validateClaimRequest(data) {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}
function validateReleaseRequest(data) {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return fail("status is required (done|failed|pending)");
  if (!isReleaseTarget(target)) return fail("status must be done|failed|pending");
  const leaseToken = readLeaseToken(data);
  if (leaseToken === INVALID) return fail(LEASE_TOKEN_ERROR);
  return { ok: true, value: { jobId: ids.value.jobId, workerId: ids.value.workerId, target, leaseToken } };
}
var INVALID = null;
var LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";
function readLeaseToken(data) {
  const token = asBody(data)["leaseToken"];
  if (token === void 0) return void 0;
  return typeof token === "string" && token !== "" ? token : INVALID;
}
function isReleaseTarget(value) {
  return RELEASE_TARGETS.indexOf(value) !== -1;
}

// src/handlers/release.ts
function handleRelease(req) {
  const valid = validateReleaseRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const outcome = updateJob(valid.value.jobId, (row, now) => decideRelease(row, valid.value, now), releasePatch);
  return json(200, releaseAnswer(outcome));
}

// entry.ts
function route(context) {
  return serve(context, handleRelease);
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/claim-next", (__context) => {
return (globalThis["pbFleet POST /api/fleet/claim-next 215d6feffc99"] || (globalThis["pbFleet POST /api/fleet/claim-next 215d6feffc99"] = (() => {
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];
function jobView(row, patch) {
  const after = patch ? Object.assign({}, row, patch) : row;
  return {
    id: after.id,
    probe_key: after.probe_key,
    status: after.status,
    claimed_by: after.claimed_by,
    lease_expires_at: after.lease_expires_at,
    version: after.version
  };
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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

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
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
function pendingWhere(probeKeyPrefix) {
  return withPrefix("status = 'pending'", {}, probeKeyPrefix);
}
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(EXPIRED_LEASE_SQL, { now: formatPbDate(nowMs) }, probeKeyPrefix);
}
function withPrefix(sql, params, probeKeyPrefix) {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  let range = "probe_key >= {:prefix}";
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += " AND probe_key < {:prefixEnd}";
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
function oldestFirst(candidates, limit) {
  return candidates.slice().sort((a, b) => a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0).slice(0, limit);
}
var CLAIM_ORDER = ["created ASC", "id ASC"];

// src/adapter/transactions.ts
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => {
    const foundById = {};
    return work({
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
      }
    }, Date.now());
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

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}

// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
var REFERENCE_STEAL = { kind: "reference" };
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2, stealRule = REFERENCE_STEAL) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  const patch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds),
    lease_token: newLeaseToken2(),
    // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim.
    claimed_at: formatPbDate(nowMs)
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}
var ORPHAN_CAP_REASON = "orphan_cap";
function giveUpPatch(row, nowMs) {
  return {
    status: "failed",
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}
function leaseEnd(nowMs, leaseSeconds) {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1e3);
}

// src/lib/claim-next.ts
var CLAIM_NEXT_ROUNDS = 4;
function claimNext(batch, req, nowMs, orphanCap2, newLeaseToken2) {
  const claimed = [];
  const stealRule = { kind: "count_orphans", cap: orphanCap2 };
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && claimed.length < req.limit; round++) {
    const want = req.limit - claimed.length;
    const candidates = oldestFirst(
      batch.find(pendingWhere(req.probeKeyPrefix), CLAIM_ORDER, want).concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix), CLAIM_ORDER, want)),
      want
    );
    let gaveUp = 0;
    for (const row of candidates) {
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken2, stealRule);
      if (decision.kind === "win") {
        batch.write(row, decision.patch);
        claimed.push({ row, patch: decision.patch });
      } else if (decision.kind === "give_up") {
        batch.write(row, decision.patch);
        gaveUp++;
      }
    }
    if (gaveUp === 0) break;
  }
  return claimed;
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
var INVALID = null;
function validateClaimNextRequest(data) {
  const body = asBody(data);
  const { workerId, limit } = body;
  if (!workerId) return fail("workerId is required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  if (limit !== void 0 && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CLAIM_NEXT_LIMIT)) {
    return fail(`limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`);
  }
  const probeKeyPrefix = readPrefix(data);
  if (probeKeyPrefix === INVALID) return fail(PREFIX_ERROR);
  return {
    ok: true,
    value: { workerId, leaseSeconds: body["leaseSeconds"], limit: limit === void 0 ? 1 : limit, probeKeyPrefix }
  };
}
var PREFIX_ERROR = "probeKeyPrefix must be a string";
function readPrefix(data) {
  const prefix = asBody(data)["probeKeyPrefix"];
  if (prefix === void 0) return "";
  return typeof prefix === "string" ? prefix : INVALID;
}

// src/handlers/claim-next.ts
function handleClaimNext(req) {
  var _a;
  const valid = validateClaimNextRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const cap = orphanCap(getenv);
  const won = (_a = updateJobs((batch, now) => claimNext(batch, valid.value, now, cap, newLeaseToken))) != null ? _a : [];
  const answer = {
    jobs: won.map(({ row, patch }) => {
      var _a2;
      return { job: jobView(row, patch), leaseToken: (_a2 = patch.lease_token) != null ? _a2 : "" };
    })
  };
  return json(200, answer);
}

// entry.ts
function route(context) {
  return serve(context, handleClaimNext);
}
return route;
})()))(__context);
});

routerAdd("POST", "/api/fleet/sweep", (__context) => {
return (globalThis["pbFleet POST /api/fleet/sweep 3c4731b45a6e"] || (globalThis["pbFleet POST /api/fleet/sweep 3c4731b45a6e"] = (() => {
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";
function json(status, body) {
  return { status, json: body };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];

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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

// src/adapter/runtime.ts
function getenv(name) {
  return $os.getenv(name);
}
function logError(message, err) {
  $app.logger().error(message, "error", String(err));
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(EXPIRED_LEASE_SQL, { now: formatPbDate(nowMs) }, probeKeyPrefix);
}
function withPrefix(sql, params, probeKeyPrefix) {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  let range = "probe_key >= {:prefix}";
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += " AND probe_key < {:prefixEnd}";
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

// src/adapter/transactions.ts
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => {
    const foundById = {};
    return work({
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
      }
    }, Date.now());
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

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}

// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
var SWEEP_BATCH = 500;
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
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
function giveUpPatch(row, nowMs) {
  return {
    status: "failed",
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}

// src/lib/sweep.ts
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
}
function sweepExpired(batch, nowMs, cap, probeKeyPrefix, limit) {
  var _a;
  const answer = { requeued: 0, gaveUp: 0, jobs: [] };
  for (const row of batch.find(expiredLeaseWhere(nowMs, probeKeyPrefix), SWEEP_ORDER, limit)) {
    const decision = decideSweep(row, nowMs, cap);
    if (decision.kind === "skip") continue;
    batch.write(row, decision.patch);
    if (decision.kind === "requeue") answer.requeued++;
    else answer.gaveUp++;
    answer.jobs.push({
      id: row.id,
      outcome: decision.kind === "requeue" ? "requeued" : "gave_up",
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
var INVALID = null;
function validateSweepRequest(data) {
  const prefix = readPrefix(data);
  return prefix === INVALID ? fail(PREFIX_ERROR) : { ok: true, value: { probeKeyPrefix: prefix } };
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
  return updateJobs((batch, now) => sweepExpired(batch, now, cap, probeKeyPrefix, SWEEP_BATCH));
}
function handleSweep(req) {
  var _a;
  const valid = validateSweepRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const empty = { requeued: 0, gaveUp: 0, jobs: [] };
  return json(200, (_a = sweep(valid.value.probeKeyPrefix)) != null ? _a : empty);
}

// entry.ts
function route(context) {
  return serve(context, handleSweep);
}
return route;
})()))(__context);
});

routerAdd("GET", "/api/fleet/stats", (__context) => {
return (globalThis["pbFleet GET /api/fleet/stats 3c04480aeea7"] || (globalThis["pbFleet GET /api/fleet/stats 3c04480aeea7"] = (() => {
// src/adapter/contract.ts
var QUERY_FAILED = "pb-fleet: query failed";
function json(status, body) {
  return { status, json: body };
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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

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

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function withPrefix(sql, params, probeKeyPrefix) {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  let range = "probe_key >= {:prefix}";
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += " AND probe_key < {:prefixEnd}";
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
function statsQuery(nowMs, orphanCap2, probeKeyPrefix) {
  const scope = withPrefix("1 = 1", { now: formatPbDate(nowMs), cap: orphanCap2 }, probeKeyPrefix);
  return {
    sql: `SELECT
  COALESCE(SUM(status = 'pending'), 0) AS pending,
  COALESCE(SUM(status = 'claimed'), 0) AS claimed,
  COALESCE(SUM(status = 'running'), 0) AS running,
  COALESCE(SUM(status = 'done'), 0) AS done,
  COALESCE(SUM(status = 'failed'), 0) AS failed,
  COUNT(*) AS total,
  COALESCE(MIN(CASE WHEN status = 'pending' THEN MAX(created, COALESCE(requeued_at, '')) END), '') AS oldest_pending,
  COALESCE(SUM(${EXPIRED_LEASE_SQL}), 0) AS expired_leases,
  COALESCE(SUM(consecutive_orphan_count >= {:cap}), 0) AS past_orphan_cap
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
  total: 0,
  oldest_pending: "",
  expired_leases: 0,
  past_orphan_cap: 0
};

// src/adapter/pocketbase-0.23.ts
var NOT_A_SUPERUSER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
function serve(e, handler) {
  if (!e.hasSuperuserAuth()) return e.json(401, NOT_A_SUPERUSER);
  const reply = handler({
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request.url.query().get(name)
  });
  if ("text" in reply) return e.string(reply.status, reply.text);
  return e.json(reply.status, reply.json);
}
function requestBody(e) {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}
function queryOne(query, shape) {
  return readOne($app.db(), query, shape);
}

// src/lib/config.ts
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = "* * * * *";
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

// src/lib/types.ts
var JOB_STATUSES = ["pending", "claimed", "running", "done", "failed"];

// src/lib/stats.ts
function buildStats(row, nowMs, orphanCap2, sweeper) {
  const counts = {};
  for (const status of JOB_STATUSES) counts[status] = row[status];
  const oldest = parsePbDate(row.oldest_pending);
  return {
    counts,
    total: row.total,
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
function formatPrometheus(stats) {
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
  gauge(
    "pb_fleet_oldest_pending_age_seconds",
    "Seconds the oldest pending job has waited.",
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
  const now = Date.now();
  const cap = orphanCap(getenv);
  const row = queryOne(statsQuery(now, cap, req.query("probeKeyPrefix")), STATS_ROW_SHAPE);
  if (row === null) return json(503, { error: STATS_UNAVAILABLE });
  const sweeper = decodeSweeperState(storeGet(SWEEPER_STATE_KEY), sweepSchedule(getenv));
  const stats = buildStats(row, now, cap, sweeper);
  return format === "prometheus" ? { status: 200, text: formatPrometheus(stats) } : json(200, stats);
}

// entry.ts
function route(context) {
  return serve(context, handleStats);
}
return route;
})()))(__context);
});

cronAdd("pb-fleet-sweeper", (() => {
// src/lib/lease.ts
var PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

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

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;

// src/lib/config.ts
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = "* * * * *";
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

// src/lib/cron.ts
var MACROS = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];
var FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 }
];
function atoi(text) {
  return /^[+-]?\d{1,18}$/.test(text) ? Number(text) : null;
}
function cronScheduleError(expression) {
  if (MACROS.indexOf(expression) !== -1) return null;
  const segments = expression.split(" ");
  if (segments.length !== FIELDS.length) {
    return "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces";
  }
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i];
    for (const part of segments[i].split(",")) {
      const error = cronPartError(part, field.min, field.max);
      if (error !== null) return `${field.name} field ${JSON.stringify(segments[i])}: ${error}`;
    }
  }
  return null;
}
function cronPartError(part, min, max) {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1]);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  const range = stepParts[0];
  if (range === "*") return null;
  const bounds = range.split("-");
  if (bounds.length > 2) return "a range is written a-b";
  const low = atoi(bounds[0]);
  if (low === null || low < min || low > max) return `values must be numbers from ${min} to ${max}`;
  if (bounds.length === 1) return step === 1 ? null : "a step needs * or a range before it";
  const high = atoi(bounds[1]);
  if (high === null || high < low || high > max) return `a range must end between its start and ${max}`;
  return null;
}

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
// src/adapter/contract.ts
var JOBS_COLLECTION = "probe_jobs";
var ROLLED_BACK = "pb-fleet: transaction rolled back";

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "created",
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];

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
var LIVE_LEASE_SQL = `COALESCE(lease_expires_at GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19) AND lease_expires_at > {:now}, 0)`;
var LEASE_AS_JUDGED_SQL = `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

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
  return row;
}
function findJudgedRecords(query, where, order, limit) {
  const records = arrayOf(new Record());
  query.select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}

// src/lib/queries.ts
var EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(EXPIRED_LEASE_SQL, { now: formatPbDate(nowMs) }, probeKeyPrefix);
}
function withPrefix(sql, params, probeKeyPrefix) {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  let range = "probe_key >= {:prefix}";
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += " AND probe_key < {:prefixEnd}";
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

// src/adapter/transactions.ts
function updateJobsIn(store, work) {
  return inTransaction(store, (tx) => {
    const foundById = {};
    return work({
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
      }
    }, Date.now());
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

// src/adapter/pocketbase-0.23.ts
var STORE = {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    for (const field in patch) rec.set(field, patch[field]);
    txApp.saveNoValidate(rec);
  },
  forget() {
  },
  logError
};
function updateJobs(work) {
  return updateJobsIn(STORE, work);
}

// src/lib/config.ts
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = "* * * * *";
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

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
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
function giveUpPatch(row, nowMs) {
  return {
    status: "failed",
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by
    },
    version: row.version + 1
  };
}

// src/lib/sweep.ts
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
}
function sweepExpired(batch, nowMs, cap, probeKeyPrefix, limit) {
  var _a;
  const answer = { requeued: 0, gaveUp: 0, jobs: [] };
  for (const row of batch.find(expiredLeaseWhere(nowMs, probeKeyPrefix), SWEEP_ORDER, limit)) {
    const decision = decideSweep(row, nowMs, cap);
    if (decision.kind === "skip") continue;
    batch.write(row, decision.patch);
    if (decision.kind === "requeue") answer.requeued++;
    else answer.gaveUp++;
    answer.jobs.push({
      id: row.id,
      outcome: decision.kind === "requeue" ? "requeued" : "gave_up",
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
  return updateJobs((batch, now) => sweepExpired(batch, now, cap, probeKeyPrefix, SWEEP_BATCH));
}
function runScheduledSweep() {
  if (sweepSchedule(getenv) === SWEEP_OFF) return;
  const outcome = sweep("");
  if (outcome !== null && (outcome.requeued > 0 || outcome.gaveUp > 0)) {
    logInfo("pb-fleet sweep", "requeued", outcome.requeued, "gaveUp", outcome.gaveUp);
  }
}
return runScheduledSweep;
})()();
});
