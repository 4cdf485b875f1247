// GENERATED FILE - DO NOT EDIT.
// Built by esbuild.config.mjs from src/handlers and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase 0.22 runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.

routerAdd("POST", "/api/fleet/claim", (__context) => {
// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
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
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
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
  return { kind: "win", patch, steal };
}
function leaseEnd(nowMs, leaseSeconds) {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1e3);
}

// src/lib/validate.ts
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
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function requestBody(c) {
  return $apis.requestInfo(c).data;
}
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function findJob(dao, collection, jobId) {
  const rec = new Record();
  try {
    dao.recordQuery(collection).andWhere($dbx.hashExp({ id: jobId })).limit(1).one(rec);
    return rec;
  } catch (e) {
    return null;
  }
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}
function newLeaseToken() {
  return $security.randomString(24);
}

// src/handlers/claim.ts
function handleClaim(c) {
  const req = validateClaimRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { jobId, workerId, leaseSeconds } = req.value;
  let outcome;
  try {
    const collection = jobsCollection(Date.now());
    outcome = transact((tx) => {
      const rec = findJob(tx, collection, jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const decision = decideClaim(row, workerId, leaseSeconds, Date.now(), newLeaseToken);
      if (decision.kind === "win") {
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
      }
      return { row, decision };
    });
  } catch (e) {
    forgetJobsCollection();
    outcome = null;
  }
  return c.json(200, claimAnswer(outcome));
}
function claimAnswer(outcome) {
  var _a;
  if (outcome === null || outcome.decision.kind === "refused") return { claimed: false };
  const { row, decision } = outcome;
  if (decision.kind === "already_held") {
    return { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
  }
  return { claimed: true, job: jobView(row, decision.patch), leaseToken: (_a = decision.patch.lease_token) != null ? _a : "" };
}
return handleClaim(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/renew", (__context) => {
// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
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
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

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

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function requestBody(c) {
  return $apis.requestInfo(c).data;
}
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function findJob(dao, collection, jobId) {
  const rec = new Record();
  try {
    dao.recordQuery(collection).andWhere($dbx.hashExp({ id: jobId })).limit(1).one(rec);
    return rec;
  } catch (e) {
    return null;
  }
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}

// src/handlers/renew.ts
function handleRenew(c) {
  const req = validateRenewRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  let renewed;
  try {
    const collection = jobsCollection(Date.now());
    renewed = transact((tx) => {
      const rec = findJob(tx, collection, req.value.jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const patch = decideRenew(row, req.value, Date.now());
      if (patch === null) return null;
      writePatch(rec, patch);
      tx.saveRecord(rec);
      return { row, patch };
    });
  } catch (e) {
    forgetJobsCollection();
    renewed = null;
  }
  const answer = renewed === null ? { renewed: false } : { renewed: true, job: jobView(renewed.row, renewed.patch) };
  return c.json(200, answer);
}
return handleRenew(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/release", (__context) => {
// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
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
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

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

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function requestBody(c) {
  return $apis.requestInfo(c).data;
}
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function findJob(dao, collection, jobId) {
  const rec = new Record();
  try {
    dao.recordQuery(collection).andWhere($dbx.hashExp({ id: jobId })).limit(1).one(rec);
    return rec;
  } catch (e) {
    return null;
  }
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}

// src/handlers/release.ts
function handleRelease(c) {
  const req = validateReleaseRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  let outcome;
  try {
    const collection = jobsCollection(Date.now());
    outcome = transact((tx) => {
      const rec = findJob(tx, collection, req.value.jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const decision = decideRelease(row, req.value, Date.now());
      if (decision.kind === "release") {
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
      }
      return { row, decision };
    });
  } catch (e) {
    forgetJobsCollection();
    outcome = null;
  }
  let answer = { released: false, reason: "refused_not_holder" };
  if (outcome !== null) {
    const { row, decision } = outcome;
    answer = decision.kind === "refused" ? { released: false, reason: decision.reason } : { released: true, job: jobView(row, decision.patch) };
  }
  return c.json(200, answer);
}
return handleRelease(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/claim-next", (__context) => {
// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
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
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

// src/lib/queries.ts
function pendingWhere(probeKeyPrefix) {
  return withPrefix("status = 'pending'", {}, probeKeyPrefix);
}
var PB_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z";
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(
    `status IN ('claimed', 'running') AND (lease_expires_at < {:now} OR lease_expires_at NOT GLOB '${PB_DATE_GLOB}')`,
    { now: formatPbDate(nowMs) },
    probeKeyPrefix
  );
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

// src/lib/transitions.ts
function isHeldStatus(status) {
  return status === "claimed" || status === "running";
}
function isClaimable(row, nowMs) {
  return row.status === "pending" || isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs);
}
function decideClaim(row, workerId, leaseSeconds, nowMs, newLeaseToken2) {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
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
  return { kind: "win", patch, steal };
}
function leaseEnd(nowMs, leaseSeconds) {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1e3);
}

// src/lib/validate.ts
var MAX_CLAIM_NEXT_LIMIT = 100;
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

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function requestBody(c) {
  return $apis.requestInfo(c).data;
}
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}
function findJobs(dao, collection, where, order, limit) {
  const records = arrayOf(new Record());
  dao.recordQuery(collection).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function newLeaseToken() {
  return $security.randomString(24);
}

// src/handlers/claim-next.ts
function handleClaimNext(c) {
  const req = validateClaimNextRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { workerId, leaseSeconds, limit, probeKeyPrefix } = req.value;
  let won;
  try {
    const collection = jobsCollection(Date.now());
    won = transact((tx) => {
      const now = Date.now();
      const claimed = [];
      const candidates = findJobs(tx, collection, pendingWhere(probeKeyPrefix), CLAIM_ORDER, limit).concat(findJobs(tx, collection, expiredLeaseWhere(now, probeKeyPrefix), CLAIM_ORDER, limit)).map((rec) => ({ rec, id: rec.id, created: rec.getString("created") }));
      for (const { rec } of oldestFirst(candidates, limit)) {
        const row = readRow(rec);
        const decision = decideClaim(row, workerId, leaseSeconds, now, newLeaseToken);
        if (decision.kind !== "win") continue;
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        claimed.push({ row, patch: decision.patch });
      }
      return claimed;
    });
  } catch (e) {
    forgetJobsCollection();
    won = [];
  }
  const answer = {
    jobs: won.map(({ row, patch }) => {
      var _a;
      return { job: jobView(row, patch), leaseToken: (_a = patch.lease_token) != null ? _a : "" };
    })
  };
  return c.json(200, answer);
}
return handleClaimNext(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/sweep", (__context) => {
// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
var SWEEP_BATCH = 500;
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

// src/lib/queries.ts
var PB_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z";
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(
    `status IN ('claimed', 'running') AND (lease_expires_at < {:now} OR lease_expires_at NOT GLOB '${PB_DATE_GLOB}')`,
    { now: formatPbDate(nowMs) },
    probeKeyPrefix
  );
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

// src/lib/sweep.ts
var ORPHAN_CAP_REASON = "orphan_cap";
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return {
    kind: "give_up",
    patch: {
      status: "failed",
      // The sweeper, not the last worker, finished it (see SWEEPER_HOLDER);
      // the worker stays on record in result.lastHolder.
      claimed_by: SWEEPER_HOLDER,
      lease_token: "",
      finished_at: formatPbDate(nowMs),
      // consecutive_orphan_count is kept (not reset as by a worker's release):
      // it is the evidence, and what the stats count as "past the orphan cap".
      result: {
        error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
        reason: ORPHAN_CAP_REASON,
        lastHolder: row.claimed_by
      },
      version: row.version + 1
    }
  };
}

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

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function requestBody(c) {
  return $apis.requestInfo(c).data;
}
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}
function findJobs(dao, collection, where, order, limit) {
  const records = arrayOf(new Record());
  dao.recordQuery(collection).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function getenv(name) {
  return $os.getenv(name);
}

// src/handlers/sweep.ts
function sweepExpiredLeases(probeKeyPrefix) {
  const cap = orphanCap(getenv);
  const collection = jobsCollection(Date.now());
  try {
    return transact((tx) => {
      const outcome = { requeued: 0, gaveUp: 0 };
      const now = Date.now();
      const where = expiredLeaseWhere(now, probeKeyPrefix);
      for (const rec of findJobs(tx, collection, where, ["lease_expires_at ASC"], SWEEP_BATCH)) {
        const decision = decideSweep(readRow(rec), now, cap);
        if (decision.kind === "skip") continue;
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        if (decision.kind === "requeue") outcome.requeued++;
        else outcome.gaveUp++;
      }
      return outcome;
    });
  } catch (err) {
    forgetJobsCollection();
    throw err;
  }
}
function handleSweep(c) {
  const req = validateSweepRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  try {
    return c.json(200, sweepExpiredLeases(req.value.probeKeyPrefix));
  } catch (e) {
    return c.json(200, { requeued: 0, gaveUp: 0 });
  }
}
return handleSweep(__context);
}, $apis.requireAdminAuth());

routerAdd("GET", "/api/fleet/stats", (__context) => {
// src/lib/config.ts
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}

// src/lib/queries.ts
var PB_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z";
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
  COALESCE(SUM(status IN ('claimed', 'running') AND (lease_expires_at < {:now} OR lease_expires_at NOT GLOB '${PB_DATE_GLOB}')), 0) AS expired_leases,
  COALESCE(SUM(consecutive_orphan_count >= {:cap}), 0) AS past_orphan_cap
FROM probe_jobs
WHERE ${scope.sql}`,
    params: scope.params
  };
}

// src/lib/types.ts
var JOB_STATUSES = ["pending", "claimed", "running", "done", "failed"];

// src/lib/stats.ts
function buildStats(row, nowMs, orphanCap2) {
  const counts = {};
  for (const status of JOB_STATUSES) counts[status] = row[status];
  const oldest = parsePbDate(row.oldest_pending);
  return {
    counts,
    total: row.total,
    oldestPendingAgeSeconds: oldest === null ? null : Math.max(0, (nowMs - oldest) / 1e3),
    expiredLeases: row.expired_leases,
    pastOrphanCap: row.past_orphan_cap,
    orphanCap: orphanCap2
  };
}
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
  return lines.join("\n") + "\n";
}

// src/handlers/record.ts
function getenv(name) {
  return $os.getenv(name);
}

// src/handlers/stats.ts
function handleStats(c) {
  const format = parseStatsFormat(c.queryParam("format"));
  if (format === null) return c.json(400, { error: "format must be json or prometheus" });
  const now = Date.now();
  const cap = orphanCap(getenv);
  const query = statsQuery(now, cap, c.queryParam("probeKeyPrefix"));
  const row = new DynamicModel({
    pending: 0,
    claimed: 0,
    running: 0,
    done: 0,
    failed: 0,
    total: 0,
    oldest_pending: "",
    expired_leases: 0,
    past_orphan_cap: 0
  });
  try {
    $app.dao().db().newQuery(query.sql).bind(query.params).one(row);
  } catch (err) {
    return c.json(503, { error: "stats are unavailable: " + String(err) });
  }
  const stats = buildStats(row, now, cap);
  if (format === "prometheus") return c.string(200, formatPrometheus(stats));
  return c.json(200, stats);
}
return handleStats(__context);
}, $apis.requireAdminAuth());

cronAdd("pb-fleet-sweeper", (() => {
// src/lib/config.ts
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var DEFAULT_SWEEP_SCHEDULE = "* * * * *";
var SWEEP_OFF = "off";
function sweepSchedule(getenv2) {
  const raw = getenv2(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" || raw === SWEEP_OFF ? DEFAULT_SWEEP_SCHEDULE : raw;
}

// src/handlers/record.ts
function getenv(name) {
  return $os.getenv(name);
}

// src/handlers/sweep.ts
function scheduleFromEnv() {
  return sweepSchedule(getenv);
}
return scheduleFromEnv();
})(), () => {
// src/lib/config.ts
var SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
var SWEEP_OFF = "off";
var ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
var DEFAULT_ORPHAN_CAP = 5;
var SWEEPER_HOLDER = "pb-fleet-sweeper";
var SWEEP_BATCH = 500;
function isSweepOff(getenv2) {
  return getenv2(SWEEP_SCHEDULE_ENV).trim() === SWEEP_OFF;
}
function orphanCap(getenv2) {
  const n = Number(getenv2(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

// src/lib/lease.ts
function formatPbDate(ms) {
  return new Date(ms).toISOString().replace("T", " ");
}
var PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
function parsePbDate(text) {
  var _a;
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = Number((((_a = m[7]) != null ? _a : "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour || back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) {
    return null;
  }
  return t;
}
function isLeaseLive(leaseExpiresAt, nowMs) {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}

// src/lib/queries.ts
var PB_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z";
function expiredLeaseWhere(nowMs, probeKeyPrefix) {
  return withPrefix(
    `status IN ('claimed', 'running') AND (lease_expires_at < {:now} OR lease_expires_at NOT GLOB '${PB_DATE_GLOB}')`,
    { now: formatPbDate(nowMs) },
    probeKeyPrefix
  );
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

// src/lib/sweep.ts
var ORPHAN_CAP_REASON = "orphan_cap";
function decideSweep(row, nowMs, cap) {
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return {
    kind: "give_up",
    patch: {
      status: "failed",
      // The sweeper, not the last worker, finished it (see SWEEPER_HOLDER);
      // the worker stays on record in result.lastHolder.
      claimed_by: SWEEPER_HOLDER,
      lease_token: "",
      finished_at: formatPbDate(nowMs),
      // consecutive_orphan_count is kept (not reset as by a worker's release):
      // it is the evidence, and what the stats count as "past the orphan cap".
      result: {
        error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
        reason: ORPHAN_CAP_REASON,
        lastHolder: row.claimed_by
      },
      version: row.version + 1
    }
  };
}

// src/lib/job-row.ts
var JOB_ROW_TEXT_FIELDS = [
  "probe_key",
  "status",
  "claimed_by",
  "lease_expires_at",
  "lease_token"
];
var JOB_ROW_NUMBER_FIELDS = ["version", "reclaim_count", "consecutive_orphan_count"];

// src/handlers/record.ts
var JOBS_COLLECTION = "probe_jobs";
function transact(fn) {
  const result = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value;
}
var COLLECTION_CACHE_MS = 2e3;
function jobsCollection(nowMs) {
  const cache = globalThis;
  const hit = cache.pbFleetJobs;
  if (hit !== void 0 && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}
function forgetJobsCollection() {
  delete globalThis.pbFleetJobs;
}
function readRow(rec) {
  const row = { id: rec.id };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row;
}
function writePatch(rec, patch) {
  for (const field in patch) rec.set(field, patch[field]);
}
function findJobs(dao, collection, where, order, limit) {
  const records = arrayOf(new Record());
  dao.recordQuery(collection).andWhere($dbx.exp(where.sql, where.params)).orderBy(...order).limit(limit).all(records);
  return records;
}
function getenv(name) {
  return $os.getenv(name);
}

// src/handlers/sweep.ts
function sweepExpiredLeases(probeKeyPrefix) {
  const cap = orphanCap(getenv);
  const collection = jobsCollection(Date.now());
  try {
    return transact((tx) => {
      const outcome = { requeued: 0, gaveUp: 0 };
      const now = Date.now();
      const where = expiredLeaseWhere(now, probeKeyPrefix);
      for (const rec of findJobs(tx, collection, where, ["lease_expires_at ASC"], SWEEP_BATCH)) {
        const decision = decideSweep(readRow(rec), now, cap);
        if (decision.kind === "skip") continue;
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        if (decision.kind === "requeue") outcome.requeued++;
        else outcome.gaveUp++;
      }
      return outcome;
    });
  } catch (err) {
    forgetJobsCollection();
    throw err;
  }
}
function runScheduledSweep() {
  if (isSweepOff(getenv)) return;
  try {
    const outcome = sweepExpiredLeases("");
    if (outcome.requeued > 0 || outcome.gaveUp > 0) {
      $app.logger().info("pb-fleet sweep", "requeued", outcome.requeued, "gaveUp", outcome.gaveUp);
    }
  } catch (err) {
    $app.logger().error("pb-fleet sweep failed", "error", String(err));
  }
}
return runScheduledSweep();
});
