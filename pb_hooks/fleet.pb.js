// GENERATED FILE - DO NOT EDIT.
// Built by esbuild.config.mjs from src/handlers and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase 0.22 runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.

routerAdd("POST", "/api/fleet/claim", (__context) => {
  // src/lib/job-row.ts
  var JOB_ROW_TEXT_FIELDS = ["probe_key", "status", "claimed_by", "lease_expires_at"];
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
  function decideClaim(row, workerId, leaseSeconds, nowMs) {
    const held = isHeldStatus(row.status);
    const live = held && isLeaseLive(row.lease_expires_at, nowMs);
    if (row.status !== "pending" && !(held && !live)) {
      return live && row.claimed_by === workerId ? { kind: "already_held" } : { kind: "refused" };
    }
    const steal = held;
    const patch = {
      status: "claimed",
      claimed_by: workerId,
      lease_expires_at: leaseEnd(nowMs, leaseSeconds),
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
  function validateJobRequest(data) {
    const body = asBody(data);
    const { jobId, workerId } = body;
    if (!jobId || !workerId) return { ok: false, error: "jobId and workerId are required" };
    if (typeof workerId !== "string") return { ok: false, error: "workerId must be a string" };
    if (typeof jobId !== "string") return { ok: false, error: "jobId must be a string" };
    return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
  }

  // src/handlers/record.ts
  var JOBS_COLLECTION = "probe_jobs";
  function requestBody(c) {
    return $apis.requestInfo(c).data;
  }
  function findJob(dao, jobId) {
    try {
      return dao.findRecordById(JOBS_COLLECTION, jobId);
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

  // src/handlers/claim.ts
  function handleClaim(c) {
    const req = validateJobRequest(requestBody(c));
    if (!req.ok) return c.json(400, { error: req.error });
    const { jobId, workerId, leaseSeconds } = req.value;
    let answer = { claimed: false };
    try {
      $app.dao().runInTransaction((tx) => {
        const rec = findJob(tx, jobId);
        if (rec === null) return;
        const row = readRow(rec);
        const decision = decideClaim(row, workerId, leaseSeconds, Date.now());
        if (decision.kind === "refused") return;
        if (decision.kind === "already_held") {
          answer = { claimed: true, job: jobView(row), alreadyHeld: true };
          return;
        }
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        answer = { claimed: true, job: jobView(row, decision.patch) };
      });
    } catch (e) {
      answer = { claimed: false };
    }
    return c.json(200, answer);
  }
  return handleClaim(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/renew", (__context) => {
  // src/lib/job-row.ts
  var JOB_ROW_TEXT_FIELDS = ["probe_key", "status", "claimed_by", "lease_expires_at"];
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
  function decideRenew(row, workerId, leaseSeconds, nowMs) {
    if (!isHeldStatus(row.status)) return null;
    if (row.claimed_by !== workerId) return null;
    if (!isLeaseLive(row.lease_expires_at, nowMs)) return null;
    return {
      status: "running",
      lease_expires_at: leaseEnd(nowMs, leaseSeconds),
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
  function validateJobRequest(data) {
    const body = asBody(data);
    const { jobId, workerId } = body;
    if (!jobId || !workerId) return { ok: false, error: "jobId and workerId are required" };
    if (typeof workerId !== "string") return { ok: false, error: "workerId must be a string" };
    if (typeof jobId !== "string") return { ok: false, error: "jobId must be a string" };
    return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
  }

  // src/handlers/record.ts
  var JOBS_COLLECTION = "probe_jobs";
  function requestBody(c) {
    return $apis.requestInfo(c).data;
  }
  function findJob(dao, jobId) {
    try {
      return dao.findRecordById(JOBS_COLLECTION, jobId);
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
    const req = validateJobRequest(requestBody(c));
    if (!req.ok) return c.json(400, { error: req.error });
    const { jobId, workerId, leaseSeconds } = req.value;
    let answer = { renewed: false };
    try {
      $app.dao().runInTransaction((tx) => {
        const rec = findJob(tx, jobId);
        if (rec === null) return;
        const row = readRow(rec);
        const patch = decideRenew(row, workerId, leaseSeconds, Date.now());
        if (patch === null) return;
        writePatch(rec, patch);
        tx.saveRecord(rec);
        answer = { renewed: true, job: jobView(row, patch) };
      });
    } catch (e) {
      answer = { renewed: false };
    }
    return c.json(200, answer);
  }
  return handleRenew(__context);
}, $apis.requireAdminAuth());

routerAdd("POST", "/api/fleet/release", (__context) => {
  // src/lib/job-row.ts
  var JOB_ROW_TEXT_FIELDS = ["probe_key", "status", "claimed_by", "lease_expires_at"];
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
  function decideRelease(row, workerId, target, nowMs) {
    if (!isHeldStatus(row.status)) {
      const ownCommit = isTerminalStatus(row.status) && row.claimed_by === workerId;
      return refused(ownCommit ? "refused_terminal_same_holder" : "refused_not_holder");
    }
    if (row.claimed_by !== workerId) return refused("refused_not_holder");
    const live = isLeaseLive(row.lease_expires_at, nowMs);
    if (target === "pending") {
      if (live) return refused("refused_lease_live");
      return {
        kind: "release",
        patch: {
          status: "pending",
          claimed_by: "",
          // The expired lease stays as the row's "last in flight" marker.
          reclaim_count: row.reclaim_count + 1,
          consecutive_orphan_count: row.consecutive_orphan_count + 1,
          requeued_at: formatPbDate(nowMs),
          version: row.version + 1
        }
      };
    }
    if (!live) return refused("refused_not_holder");
    return {
      kind: "release",
      patch: {
        status: target,
        finished_at: formatPbDate(nowMs),
        // A finished job starts any later orphaning with a fresh budget.
        consecutive_orphan_count: 0,
        version: row.version + 1
      }
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
  function validateJobRequest(data) {
    const body = asBody(data);
    const { jobId, workerId } = body;
    if (!jobId || !workerId) return { ok: false, error: "jobId and workerId are required" };
    if (typeof workerId !== "string") return { ok: false, error: "workerId must be a string" };
    if (typeof jobId !== "string") return { ok: false, error: "jobId must be a string" };
    return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
  }
  function validateReleaseRequest(data) {
    const ids = validateJobRequest(data);
    if (!ids.ok) return ids;
    const target = asBody(data)["status"];
    if (!target) return { ok: false, error: "status is required (done|failed|pending)" };
    if (!isReleaseTarget(target)) return { ok: false, error: "status must be done|failed|pending" };
    return { ok: true, value: { jobId: ids.value.jobId, workerId: ids.value.workerId, target } };
  }
  function isReleaseTarget(value) {
    return RELEASE_TARGETS.indexOf(value) !== -1;
  }

  // src/handlers/record.ts
  var JOBS_COLLECTION = "probe_jobs";
  function requestBody(c) {
    return $apis.requestInfo(c).data;
  }
  function findJob(dao, jobId) {
    try {
      return dao.findRecordById(JOBS_COLLECTION, jobId);
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
    const { jobId, workerId, target } = req.value;
    let answer = { released: false, reason: "refused_not_holder" };
    try {
      $app.dao().runInTransaction((tx) => {
        const rec = findJob(tx, jobId);
        if (rec === null) return;
        const row = readRow(rec);
        const decision = decideRelease(row, workerId, target, Date.now());
        if (decision.kind === "refused") {
          answer = { released: false, reason: decision.reason };
          return;
        }
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        answer = { released: true, job: jobView(row, decision.patch) };
      });
    } catch (e) {
      answer = { released: false, reason: "refused_not_holder" };
    }
    return c.json(200, answer);
  }
  return handleRelease(__context);
}, $apis.requireAdminAuth());
