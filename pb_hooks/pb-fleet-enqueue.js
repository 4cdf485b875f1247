// GENERATED FILE - DO NOT EDIT. For PocketBase 0.22.x.
// Built by esbuild.config.mjs from src/handlers/enqueue-in-transaction.ts, src/adapter and src/lib (npm run build).
// Not loaded by PocketBase on its own (not *.pb.js): an app's hook loads it with
//   const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
// and calls fleet.enqueue(tx, items) inside its transaction (docs/enqueue-in-transaction.md).
"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// src/handlers/enqueue-in-transaction.ts
var enqueue_in_transaction_exports = {};
__export(enqueue_in_transaction_exports, {
  enqueue: () => enqueue
});
module.exports = __toCommonJS(enqueue_in_transaction_exports);

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
var QUEUES_UNREADABLE = `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: an admin must correct it (nothing was written)`;

// src/adapter/contract.ts
function notInTransaction(handles) {
  return `pb-fleet enqueue: the handle passed is not inside a transaction, so its jobs could outlive a rolled-back write (nothing was written): pass ${handles}`;
}

// src/adapter/runtime.ts
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
function updateJobsWithin(store, tx, work) {
  return work(jobBatchOf(store, tx), Date.now());
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
var APP_TRANSACTION_HANDLES = "the txDao of $app.dao().runInTransaction((txDao) => ...), or the e.dao of onModelBeforeCreate/onModelBeforeUpdate for a save made through such a txDao";
function updateJobsInAppTransaction(dao, work) {
  if (!isTransactionDao(dao)) throw new Error(notInTransaction(APP_TRANSACTION_HANDLES));
  const now = Date.now();
  const tx = { dao, collection: cachedCollection(JOBS_COLLECTION, now, dao), events: cachedCollection(JOB_EVENTS_COLLECTION, now, dao) };
  return updateJobsWithin(RECORDS, tx, work);
}
function isTransactionDao(dao) {
  const candidate = dao;
  if (candidate === null || candidate === void 0 || typeof candidate.nonconcurrentDB !== "function") return false;
  const builder = candidate.nonconcurrentDB();
  return builder !== null && typeof builder.commit === "function";
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

// src/handlers/enqueue-in-transaction.ts
function enqueue(tx, items) {
  const valid = validateEnqueueRequest({ jobs: items }, Date.now());
  if (!valid.ok) throw new Error(valid.error);
  return updateJobsInAppTransaction(tx, (batch) => enqueueJobs(batch, valid.value));
}
