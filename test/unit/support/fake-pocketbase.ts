/**
 * A stand-in for what PocketBase 0.22's JSVM gives a hook handler, enough to
 * run pb_hooks/fleet.pb.js the way PocketBase does (plugins/jsvm/binds.go):
 * the file is loaded once, each handler is taken as its source text, and every
 * request runs `{(<text>).apply(undefined, __args)}` in a runtime that never saw
 * the file. Here that runtime is a fresh node:vm context holding only these stubs.
 *
 * The stubs follow PocketBase where the handlers depend on it: records store
 * dates as `2006-01-02 15:04:05.000Z` text and JSON fields as JSON text (a
 * string set on a json field is re-parsed when it is valid JSON, as
 * PocketBase's normalisation does), a new record gets its id and `created` on
 * save and runs the bundle's create hook, findRecordById throws for an unknown
 * id, and raw queries fill DynamicModels by their shape. The database itself
 * is real SQLite (sql.js, the line's schema: ./sql-tables.ts): every query and
 * statement src/lib builds runs there as written, record queries run as the
 * SQL dbx would build, runInTransaction is a savepoint rolled back when its
 * callback throws, and the schema's unique indexes and triggers hold.
 *
 * The database half (FakeDb, FakeDao, FakeRecord) is shared with the 0.23+ fake
 * (./fake-pocketbase-modern.ts); FAKE_POCKETBASE_0_22 is the 0.22 face: its
 * globals, its request context (with what its auth loader stored: the admin
 * or the auth record, see FakeContext.get) and its create hook. fleet_workers
 * is kept only as far as the hooks write it (FakeDb.workers: the last-seen
 * stamp); a request's worker record comes with the request (Caller).
 */
import { randomInt } from "node:crypto";
import vm from "node:vm";
import { JOB_EVENTS_COLLECTION } from "../../../src/lib/job-events";
import { jobColumnsOfKind, JOBS_COLLECTION, type JobStoredFields } from "../../../src/lib/job-schema";
import { WORKERS_COLLECTION } from "../../../src/lib/identity";
import { formatPbDate } from "../../../src/lib/lease";
import { FLOW_CLAIMS_TABLE, FLOW_COLLECTION, type FlowRow, type ScopeKind } from "../../../src/lib/flow";
import { HOOKS_BUNDLES } from "../../../scripts/build/bundles.mjs";
import type { HooksLine } from "./sqlite-db";
import { SqlTables } from "./sql-tables";

const SCHEDULES_COLLECTION = "probe_schedules";
const COLLECTION = JOBS_COLLECTION;

/** The fields of each collection a record can be made of, by type. */
interface FieldTypes {
  date: Set<string>;
  number: Set<string>;
  text: Set<string>;
  json: Set<string>;
}
const FIELDS: Record<string, FieldTypes> = {
  // The schema's columns (src/lib/job-schema.ts): a select is text, an autodate a date.
  [COLLECTION]: {
    date: new Set(jobColumnsOfKind("date", "autodate")),
    number: new Set(jobColumnsOfKind("number")),
    text: new Set(jobColumnsOfKind("text", "select")),
    json: new Set(jobColumnsOfKind("json")),
  },
  // What the batch endpoints save once per transaction (src/lib/bulk.ts).
  [JOB_EVENTS_COLLECTION]: {
    date: new Set(["created", "updated"]),
    number: new Set(),
    text: new Set(["source"]),
    json: new Set(["changes"]),
  },
};

function fieldsOf(collection: string): FieldTypes {
  const fields = FIELDS[collection];
  if (fields === undefined) throw new Error(`fake PocketBase: no collection ${collection}`);
  return fields;
}

/**
 * A probe_jobs row as stored: every column of src/lib/job-schema.ts, dates as
 * PocketBase's text ("" when empty), JSON fields as their JSON text ("" for a
 * NULL column), any status text (tests store odd ones). queue is "default"
 * after the migration's backfill, "" on a row written around enqueue and the
 * create hook; flow control's columns "" / 0 when unset.
 */
export type StoredRow = JobStoredFields;

/** A probe_job_events row as stored (changes: JSON text). */
export interface StoredEvent {
  id: string;
  created: string;
  updated: string;
  source: string;
  changes: string;
}

/** A probe_schedules row as stored (payload: JSON text, "" for NULL). */
export interface StoredSchedule {
  id: string;
  name: string;
  probe_key: string;
  cron: string;
  payload: string;
  priority: number;
  max_attempts: number;
  enabled: boolean;
  last_enqueued_for: string;
  /** Flow control's columns (docs/flow-control.md): "" when unset. */
  queue: string;
  group_key: string;
}

/**
 * A probe_flow row as stored (docs/flow-control.md: one per scope). Written only through
 * the raw statements of src/lib/flow.ts here; a column such an INSERT does not
 * name takes the collection's default (0, "").
 */
export interface StoredFlow extends FlowRow {
  id: string;
  created: string;
  updated: string;
}

/** A probe_flow_claims row (the rate window's log): epoch milliseconds. */
export interface StoredFlowClaim {
  scope: string;
  name: string;
  at: number;
  expires: number;
}

/** PocketBase's text form of a date, from the forms the handlers write (ISO `T` or PocketBase's space form). */
export function toPbDateText(value: unknown): string {
  if (value === "" || value === null || value === undefined) return "";
  const text = String(value);
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)Z$/.exec(text);
  const ms = m ? Date.parse(`${m[1]}T${m[2]}Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw new Error(`fake PocketBase: ${JSON.stringify(text)} is not a date this fake stores`);
  return new Date(ms).toISOString().replace("T", " ");
}

export function pbDate(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ");
}

/**
 * What a json field stores for a value set on it: a string that is valid JSON
 * is taken as that JSON (PocketBase 0.22 and 0.23+ normalise `"123"` to the
 * number 123, `"null"` to null), any other string is stored as a JSON string,
 * anything else is serialized.
 */
export function jsonFieldText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") {
    try {
      JSON.parse(value);
      return value;
    } catch {
      return JSON.stringify(value);
    }
  }
  return JSON.stringify(value);
}

/** A new record's values before anything is set (PocketBase's zero values; a json field is NULL). */
function blankRecord(collection: string): Record<string, string | number> {
  const fields = fieldsOf(collection);
  const blank: Record<string, string | number> = {};
  for (const name of [...fields.date, ...fields.text, ...fields.json]) blank[name] = "";
  for (const name of fields.number) blank[name] = 0;
  return blank;
}

function blankRow(): Omit<StoredRow, "id"> {
  return blankRecord(COLLECTION) as Omit<StoredRow, "id">;
}

/** What `findCollectionByNameOrId` returns: only the name matters to recordQuery and `new Record`. */
export interface FakeCollection {
  name: string;
}

function isCollection(value: unknown): value is FakeCollection {
  return typeof value === "object" && value !== null && "name" in value && !("probe_key" in value);
}

/** models.Record (core.Record on 0.23+): get/set/getString/getInt and `id`, with PocketBase's field normalisation on set. */
export class FakeRecord {
  id: string;
  /** Its collection's name (probe_jobs unless made by `new Record(collection)` of another). */
  readonly collection: string;
  /** Made by `new Record(collection)` and not saved yet: its save is an insert. */
  isNew: boolean;
  readonly #data: Map<string, string | number>;
  readonly #fields: FieldTypes;

  constructor(source?: StoredRow | FakeCollection) {
    if (isCollection(source)) {
      this.collection = source.name;
      this.#fields = fieldsOf(source.name);
      this.id = "";
      this.isNew = true;
      this.#data = new Map(Object.entries(blankRecord(source.name)));
      return;
    }
    this.collection = COLLECTION;
    this.#fields = fieldsOf(COLLECTION);
    this.id = source?.id ?? "";
    this.isNew = false;
    this.#data = new Map(source ? Object.entries(source).filter(([k]) => k !== "id") : []);
  }

  get(name: string): unknown {
    if (name === "id") return this.id;
    const value = this.#data.get(name);
    if (this.#fields.json.has(name)) return value ? JSON.parse(String(value)) : null;
    return value;
  }

  set(name: string, value: unknown): void {
    const fields = this.#fields;
    if (name === "id") this.id = String(value);
    else if (fields.date.has(name)) this.#data.set(name, toPbDateText(value));
    else if (fields.number.has(name)) this.#data.set(name, Number.isFinite(Number(value)) ? Number(value) : 0);
    else if (fields.text.has(name)) this.#data.set(name, value === null || value === undefined ? "" : String(value));
    else if (fields.json.has(name)) this.#data.set(name, jsonFieldText(value));
    // PocketBase would keep an unknown key in memory and never save it: fail loudly instead.
    else throw new Error(`fake PocketBase: ${this.collection} has no field ${JSON.stringify(name)}`);
  }

  /** A json field's JSON text as stored (PocketBase's JsonRaw.String()); other fields as text. */
  getString(name: string): string {
    if (this.#fields.json.has(name)) return String(this.#data.get(name) ?? "");
    const value = this.get(name);
    return value === undefined || value === null ? "" : String(value);
  }

  getInt(name: string): number {
    const n = Number(this.#data.get(name) ?? 0);
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }

  /** What a query's one(record) does: the record becomes the row. */
  load(row: StoredRow): void {
    this.id = row.id;
    this.#data.clear();
    for (const [k, v] of Object.entries(row)) if (k !== "id") this.#data.set(k, v);
  }

  snapshot(): StoredRow {
    return { id: this.id, ...Object.fromEntries(this.#data) } as unknown as StoredRow;
  }
}

/** What `$dbx.exp(sql, params)` returns, or `$dbx.hashExp({ column: value })`. */
type DbxExpression = { sql: string; params: Record<string, unknown> } | { hash: Record<string, unknown> };
type Params = Record<string, unknown>;

/**
 * A raw query's row as a DynamicModel of `shape` reads it: every column of the
 * shape must be answered, and takes the shape's type (SQLite's 0/1 for a
 * boolean shape; NULL cannot be read into text).
 */
export function shaped<T extends object>(shape: T, answer: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [column, example] of Object.entries(shape)) {
    if (!(column in answer)) throw new Error(`fake PocketBase: the query answers no column ${column}`);
    const value = answer[column];
    if (typeof example === "number") {
      if (typeof value !== "number" && typeof value !== "boolean") throw new Error(`fake PocketBase: column ${column} is not a number: ${String(value)}`);
      out[column] = Number(value);
    } else if (typeof example === "string") {
      if (value === null || value === undefined) throw new Error(`fake PocketBase: converting NULL to string is unsupported (column ${column})`);
      out[column] = String(value);
    } else if (typeof example === "boolean") {
      out[column] = Boolean(value);
    } else {
      out[column] = value;
    }
  }
  return out as T;
}

/** A PocketBase record id: 15 characters of [a-z0-9]. */
function newRecordId(): string {
  return Array.from({ length: 15 }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[randomInt(36)]).join("");
}

/** The columns of fleet_workers the hooks read and write (the rest are PocketBase's auth fields). */
const WORKER_COLUMNS = "id, queues, can_enqueue, disabled, last_seen_at";

/**
 * The database behind the fake: pb-fleet's tables in real SQLite (the schema
 * of `line`, ./sql-tables.ts), the environment, logs, and switches to make it
 * fail. The table getters are snapshots, in insertion order.
 */
export class FakeDb {
  readonly #line: HooksLine;
  #tables: SqlTables | null = null;
  /** Opened on first use: many a FakeDb (a middleware's runtime, a hook's) never reads a table. */
  get tables(): SqlTables {
    this.#tables ??= new SqlTables(this.#line);
    return this.#tables;
  }
  env: Record<string, string> = {};
  logs: { level: "info" | "error"; message: string; attrs: unknown[] }[] = [];
  /** $app.store(): one per process, shared by the loader and every pooled runtime. */
  store = new Map<string, unknown>();
  /** saveRecord calls, committed or not. */
  saves = 0;
  /** probe_jobs collection look-ups: handlers cache the model per runtime, so a burst should cost one. */
  collectionLookups = 0;
  /** Look-ups per collection name. */
  lookupsOf: Record<string, number> = {};
  /** When set, the saveRecord call with this number (1-based, counting from now) throws. */
  failSaveNumber: number | null = null;
  /** When true, every raw query (stats, queryOne/queryAll, statements) throws. */
  failQueries = false;
  /** Statements executed (raw writes: the batch endpoints' UPDATE, retention's DELETE), committed or not. */
  executes = 0;
  /** When set, the statement with this number (1-based, counting from now) throws. */
  failExecuteNumber: number | null = null;
  openTransaction = false;
  /**
   * The bundle's probe_jobs create hooks, as the fake of its API runs them
   * (installHooks): false when the insert must not happen (a 0.23+ hook that
   * did not call e.next()). null: no hooks registered.
   */
  onCreate: ((record: FakeRecord) => boolean) | null = null;
  /** The fields of a worker's collection an admin removed (not columns: kept beside the table). */
  readonly #missing = new Map<string, string[]>();
  #created = Date.now() - 3_600_000;

  /** `line`: the schema of the hooks line whose face runs over it (FakePocketBase.line). */
  constructor(line: HooksLine = "0.22") {
    this.#line = line;
  }

  get line(): HooksLine {
    return this.#line;
  }

  /** probe_jobs, by id. */
  get rows(): Map<string, StoredRow> {
    return new Map(this.all().map((row) => [row.id, row]));
  }
  get schedules(): Map<string, StoredSchedule> {
    return byId(this.tables.select(SCHEDULES_COLLECTION) as unknown as StoredSchedule[]);
  }
  /** probe_job_events, in insertion order. */
  get events(): Map<string, StoredEvent> {
    return byId(this.tables.select(JOB_EVENTS_COLLECTION) as unknown as StoredEvent[]);
  }
  /** probe_flow (docs/flow-control.md: a scope's settings), by id. */
  get flow(): Map<string, StoredFlow> {
    return byId(this.tables.select(FLOW_COLLECTION) as unknown as StoredFlow[]);
  }
  /** probe_flow_claims (the rate window's log), in insertion order. */
  get flowClaims(): StoredFlowClaim[] {
    return this.tables.select(FLOW_CLAIMS_TABLE, "scope, name, at, expires") as unknown as StoredFlowClaim[];
  }
  /** fleet_workers: only what the hooks read and write (the adapters get a request's record from PocketBase, as FakeWorker). */
  get workers(): Map<string, StoredWorker> {
    return new Map(this.tables.select(WORKERS_COLLECTION, WORKER_COLUMNS).map((row) => {
      const worker = this.#worker(row);
      return [worker.id, worker];
    }));
  }

  #worker(row: Record<string, unknown>): StoredWorker {
    const worker = row as unknown as StoredWorker;
    const missing = this.#missing.get(worker.id);
    return missing === undefined ? worker : { ...worker, missing: [...missing] };
  }

  /** Adds a row as if it had been there all along (no hooks); created times increase in insertion order. */
  insert(fields: Partial<StoredRow> = {}): StoredRow {
    this.#created += 1000;
    const created = pbDate(this.#created);
    const n = this.tables.count(COLLECTION) + 1;
    const row: StoredRow = {
      ...blankRow(),
      id: `job${String(n).padStart(12, "0")}`,
      probe_key: `probe-${n}`,
      status: "pending",
      created,
      updated: created,
      // The create hook stamps a row's due time at its creation.
      run_at: fields.created ?? created,
      // As the migration backfilled it, enqueue writes it and the create hook stamps it.
      queue: "default",
      ...fields,
    };
    this.tables.insert(COLLECTION, row);
    return this.row(row.id);
  }

  /**
   * A fleet_workers record as an admin made it (fields as stored; last seen
   * now unless given, so no stamp is due). Pass it (or worker(id) later) as a
   * request's caller: PocketBase loads the token's record for each request.
   */
  addWorker(fields: Partial<StoredWorker> = {}): StoredWorker {
    const { missing, ...columns } = fields;
    const worker = {
      id: `wrk${String(this.tables.count(WORKERS_COLLECTION) + 1).padStart(12, "0")}`,
      queues: "", can_enqueue: false, disabled: false, last_seen_at: formatPbDate(Date.now()),
      ...columns,
    };
    // The auth fields PocketBase requires, unique per record.
    const auth = this.#line === "0.22" ? { passwordHash: "" } : {};
    this.tables.insert(WORKERS_COLLECTION, { ...worker, username: worker.id, tokenKey: worker.id, ...auth });
    if (missing !== undefined) this.#missing.set(worker.id, [...missing]);
    return this.worker(worker.id);
  }

  worker(id: string): StoredWorker {
    const row = this.tables.select(WORKERS_COLLECTION, WORKER_COLUMNS, "id = {:id}", { id })[0];
    if (!row) throw new Error(`no worker ${id}`);
    return this.#worker(row);
  }

  addSchedule(fields: Partial<StoredSchedule> & { name: string }): StoredSchedule {
    const schedule: StoredSchedule = {
      id: `sch${String(this.tables.count(SCHEDULES_COLLECTION) + 1).padStart(12, "0")}`,
      probe_key: `scheduled-${fields.name}`, cron: "* * * * *", payload: "", priority: 0, max_attempts: 0,
      enabled: true, last_enqueued_for: "", queue: "", group_key: "",
      ...fields,
    };
    this.tables.insert(SCHEDULES_COLLECTION, schedule);
    return this.schedule(schedule.id);
  }

  schedule(id: string): StoredSchedule {
    const schedule = this.tables.select(SCHEDULES_COLLECTION, "*", "id = {:id}", { id })[0];
    if (!schedule) throw new Error(`no schedule ${id}`);
    return schedule as unknown as StoredSchedule;
  }

  /** A probe_flow row as an earlier POST /api/fleet/flow (or a park) left it; unset settings 0 and "". */
  addFlow(fields: Partial<StoredFlow> & { scope: ScopeKind; name: string }): StoredFlow {
    const stamp = pbDate(Date.now());
    const row: StoredFlow = {
      id: newRecordId(), paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "", created: stamp, updated: stamp,
      ...fields,
    };
    this.tables.insert(FLOW_COLLECTION, row);
    return this.tables.select(FLOW_COLLECTION, "*", "id = {:id}", { id: row.id })[0] as unknown as StoredFlow;
  }

  /** A scope's probe_flow row, or undefined when it has none. */
  flowOf(scope: ScopeKind, name: string): StoredFlow | undefined {
    return this.tables.select(FLOW_COLLECTION, "*", "scope = {:scope} AND name = {:name}", { scope, name })[0] as unknown as StoredFlow | undefined;
  }

  /** A record created through PocketBase's record API (or the admin UI): saved by the app, the create hooks run. */
  createRecord(fields: Partial<Omit<StoredRow, "id" | "created" | "updated">>): StoredRow {
    const record = new FakeRecord({ name: COLLECTION });
    for (const [field, value] of Object.entries(fields)) record.set(field, value);
    new FakeDao(this).saveRecord(record);
    return this.row(record.id);
  }

  row(id: string): StoredRow {
    const row = this.tables.select(COLLECTION, "*", "id = {:id}", { id })[0];
    if (!row) throw new Error(`no row ${id}`);
    return row as unknown as StoredRow;
  }

  /** Every row, in insertion order. */
  all(): StoredRow[] {
    return this.tables.select(COLLECTION) as unknown as StoredRow[];
  }

  /** Arms a failure of the nth saveRecord call from now. */
  failSave(nth = 1): void {
    this.failSaveNumber = this.saves + nth;
  }

  /** Arms a failure of the nth executed statement from now. */
  failExecute(nth = 1): void {
    this.failExecuteNumber = this.executes + nth;
  }
}

function byId<T extends { id: string }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((row) => [row.id, row]));
}

/** The statement builder of `dao.db()` / `app.db()`: raw queries into DynamicModels. */
export interface FakeBuilder {
  newQuery(sql: string): {
    bind(params: Params): {
      one(model: object): void;
      all(rows: object[]): void;
      execute(): { rowsAffected(): number };
    };
  };
}

/** What `arrayOf(model)` returns here: an array that remembers the model a raw query fills it with. */
const ARRAY_MODEL = Symbol("arrayOf model");

/** daos.Dao: the app's, or a transaction's (the same database, inside a savepoint). */
export class FakeDao {
  readonly #db: FakeDb;
  readonly #inTransaction: boolean;

  constructor(db: FakeDb, inTransaction = false) {
    this.#db = db;
    this.#inTransaction = inTransaction;
  }

  #tables(): SqlTables {
    // PocketBase has one writer connection: the app dao inside a transaction deadlocks (issue #4859).
    if (!this.#inTransaction && this.#db.openTransaction) {
      throw new Error("fake PocketBase: $app.dao() used inside runInTransaction (deadlocks PocketBase)");
    }
    return this.#db.tables;
  }

  findCollectionByNameOrId(name: string): FakeCollection {
    fieldsOf(name); // throws for a collection this fake does not have
    if (name === COLLECTION) this.#db.collectionLookups++;
    this.#db.lookupsOf[name] = (this.#db.lookupsOf[name] ?? 0) + 1;
    return { name };
  }

  saveRecord(record: FakeRecord): void {
    const tables = this.#tables();
    this.#db.saves++;
    if (this.#db.saves === this.#db.failSaveNumber) throw new Error("fake PocketBase: constraint failed (armed by the test)");
    if (!(record instanceof FakeRecord)) throw new Error("fake PocketBase: saveRecord wants a Record");
    const now = pbDate(Date.now());
    if (record.collection !== COLLECTION) {
      if (!record.isNew) throw new Error(`fake PocketBase: ${record.collection} records are only inserted here`);
      record.id = newRecordId();
      record.set("created", now);
      record.set("updated", now);
      tables.insert(record.collection, record.snapshot());
      record.isNew = false;
      return;
    }
    if (record.isNew) {
      // As dao.create: id and created are set before the before-create hooks run.
      record.id = newRecordId();
      record.set("created", now);
      record.set("updated", now);
      if (this.#db.onCreate !== null && !this.#db.onCreate(record)) return;
      tables.insert(COLLECTION, { ...record.snapshot(), updated: now });
    } else if (tables.update(COLLECTION, record.id, { ...record.snapshot(), updated: now }) === 0) {
      throw new Error(`fake PocketBase: no record ${record.id} to update`);
    }
    record.isNew = false;
  }

  /** Like PocketBase 0.22: a collection model or its name. */
  recordQuery(collection: string | FakeCollection): FakeRecordQuery {
    const name = typeof collection === "string" ? collection : collection.name;
    if (name !== COLLECTION) throw new Error(`fake PocketBase: no collection ${name}`);
    return new FakeRecordQuery(() => this.#tables());
  }

  runInTransaction(fn: (tx: FakeDao) => void): void {
    if (this.#inTransaction || this.#db.openTransaction) throw new Error("fake PocketBase: nested runInTransaction");
    this.#db.openTransaction = true;
    try {
      // Committed when fn returns; a throw rolls every write of it back.
      this.#db.tables.transaction(() => fn(new FakeDao(this.#db, true)));
    } finally {
      this.#db.openTransaction = false;
    }
  }

  /**
   * 0.22's db() outside a transaction is the concurrent pool: a write there
   * beside an open transaction makes that transaction fail on a real server
   * ("database is locked"), so this fake refuses it; nonconcurrentDB() is the
   * single writer. (0.23+'s $app.db() routes writes to the writer itself.)
   */
  db(): FakeBuilder {
    return this.#builder(!this.#inTransaction && this.#concurrentWritesRefused);
  }

  nonconcurrentDB(): FakeBuilder {
    return this.#builder(false);
  }

  /** Set by the 0.22 fake: its app dao's db() is the concurrent pool. */
  #concurrentWritesRefused = false;
  refuseConcurrentWrites(): this {
    this.#concurrentWritesRefused = true;
    return this;
  }

  #builder(writesRefused: boolean): FakeBuilder {
    const db = this.#db;
    const failing = () => {
      if (db.failQueries) throw new Error("fake PocketBase: database is locked (armed by the test)");
    };
    return {
      newQuery: (sql) => ({
        bind: (params) => {
          const writing = (): void => {
            if (writesRefused) throw new Error("fake PocketBase: a write through the concurrent pool (0.22's $app.dao().db(), 0.23's $app.db()): use nonconcurrentDB()");
            // The hooks stamp last_seen_at outside every transaction (a stamp inside one would hold the writer for it).
            if (this.#inTransaction && /\bfleet_workers\b/.test(sql)) {
              throw new Error(`fake PocketBase: ${WORKERS_COLLECTION} written inside a transaction (the hooks stamp it outside)`);
            }
            db.executes++;
            if (db.executes === db.failExecuteNumber) throw new Error("fake PocketBase: database is locked (armed by the test)");
          };
          return {
            one: (model) => {
              failing();
              const row = this.#tables().sql.one(sql, params);
              if (row === null) throw new Error("sql: no rows in result set");
              Object.assign(model, shaped(model, row));
            },
            all: (rows) => {
              failing();
              const model = (rows as { [ARRAY_MODEL]?: object })[ARRAY_MODEL];
              if (model === undefined) throw new Error("fake PocketBase: all() wants an arrayOf(model)");
              const answered = this.#tables().sql.all(sql, params);
              // A statement whose RETURNING is read (claim-next's round) and that changed rows is a write: it counts, and
              // may fail, as one (a failure throws, so the transaction rolls it back).
              if (answered.length > 0 && /\bRETURNING\b/.test(sql)) writing();
              for (const row of answered) {
                rows.push(Object.assign(Object.create(Object.getPrototypeOf(model) as object), shaped(model, row)));
              }
            },
            execute: () => {
              failing();
              writing();
              const changed = this.#tables().sql.execute(sql, params);
              return { rowsAffected: () => changed };
            },
          };
        },
      }),
    };
  }
}

/**
 * dbx's select query over probe_jobs, as SQL: each andWhere expression's
 * placeholders are renamed apart (two expressions may bind the same name).
 */
class FakeRecordQuery {
  readonly #tables: () => SqlTables;
  readonly #where: string[] = [];
  readonly #params: Params = {};
  readonly #order: string[] = [];
  #limit: number | null = null;
  #select = "*";

  constructor(tables: () => SqlTables) {
    this.#tables = tables;
  }
  select(...columns: string[]): this {
    this.#select = columns.join(", ");
    return this;
  }
  andWhere(expression: DbxExpression): this {
    const n = this.#where.length;
    if ("hash" in expression) {
      const terms = Object.entries(expression.hash).map(([column, value], i) => {
        this.#params[`h${n}_${i}`] = value;
        return `\`${column}\` = {:h${n}_${i}}`;
      });
      this.#where.push(terms.length === 0 ? "1" : terms.join(" AND "));
    } else {
      this.#where.push(expression.sql.replace(/\{:(\w+)\}/g, (_, name: string) => {
        if (!(name in expression.params)) throw new Error(`fake PocketBase: {:${name}} is not bound`);
        this.#params[`w${n}_${name}`] = expression.params[name];
        return `{:w${n}_${name}}`;
      }));
    }
    return this;
  }
  orderBy(...terms: string[]): this {
    this.#order.push(...terms);
    return this;
  }
  limit(n: number): this {
    this.#limit = n;
    return this;
  }
  all(out: FakeRecord[]): void {
    for (const row of this.#rows()) out.push(new FakeRecord(row));
  }
  one(record: FakeRecord): void {
    const row = this.#rows()[0];
    if (row === undefined) throw new Error("sql: no rows in result set");
    record.load(row);
  }
  #rows(): StoredRow[] {
    const where = this.#where.length === 0 ? "" : ` WHERE ${this.#where.map((w) => `(${w})`).join(" AND ")}`;
    const order = this.#order.length === 0 ? "" : ` ORDER BY ${this.#order.join(", ")}`;
    const limit = this.#limit === null ? "" : ` LIMIT ${this.#limit}`;
    const tables = this.#tables();
    return tables.sql.all(`SELECT ${this.#select} FROM \`${COLLECTION}\`${where}${order}${limit}`, this.#params)
      .map((row) => tables.read(COLLECTION, row) as unknown as StoredRow);
  }
}


/** What PocketBase could not parse as a request body (invalid JSON, another content type, ...). */
export const UNPARSEABLE_BODY: unique symbol = Symbol("a body PocketBase cannot parse");

/**
 * Who sends a request: a superuser (0.22: an admin), an auth record of another
 * collection, no valid token, or a fleet_workers record (its fields as stored).
 */
export type Caller = "superuser" | "user" | "none" | FakeWorker;

export interface FakeWorker {
  id: string;
  /** The json field's text as PocketBase reads it ("" when empty). */
  queues?: string;
  can_enqueue?: boolean;
  disabled?: boolean;
  /** Default: now (so no last-seen stamp is due). */
  last_seen_at?: string;
  /** Fields the collection lacks (an admin removed them): callerAuth must fail closed. */
  missing?: string[];
}

/** A fleet_workers row as FakeDb keeps it: the fields identity.ts reads, and last_seen_at the hooks stamp. */
export type StoredWorker = Required<Omit<FakeWorker, "missing">> & Pick<FakeWorker, "missing">;

/**
 * The request's auth record as both APIs offer it (models.Record on 0.22,
 * core.Record on 0.23+): its collection, id and typed getters; a json field's
 * getString is its JSON text, a date's is PocketBase's text ("" when empty).
 * `superuser`: what 0.23+ loads for a superuser's token (a _superusers
 * record); 0.22 keeps admins apart (c.get("admin")), so its authRecord is null.
 */
export function fakeAuthRecord(caller: Caller, superuser: "record" | "none" = "none"): object | null {
  if (caller === "none" || (caller === "superuser" && superuser === "none")) return null;
  const collection = caller === "superuser" ? "_superusers" : caller === "user" ? "users" : WORKERS_COLLECTION;
  const fields: Record<string, unknown> = typeof caller === "string" ? {} : {
    queues: "", can_enqueue: false, disabled: false, last_seen_at: formatPbDate(Date.now()), ...caller,
  };
  return {
    id: caller === "superuser" ? "sup000000000001" : caller === "user" ? "user00000000001" : caller.id,
    tableName: () => collection,
    // The collection model, as far as callerAuth reads it (0.22: schema; 0.23+: fields): which fields it has.
    collection: () => {
      const has = (name: string) => (name in fields || name === "id") && !(typeof caller === "object" && caller.missing?.includes(name));
      return { name: collection, schema: { getFieldByName: (n: string) => (has(n) ? { name: n } : null) }, fields: { getByName: (n: string) => (has(n) ? { name: n } : null) } };
    },
    getString: (field: string) => String(fields[field] ?? ""),
    getBool: (field: string) => fields[field] === true,
  };
}

export interface FakeRequest {
  /** The JSON body as PocketBase parsed it, or UNPARSEABLE_BODY. */
  body?: unknown;
  query?: Record<string, string>;
  /** Default "superuser". */
  caller?: Caller;
  /** The declared body length (default 0). */
  contentLength?: number;
}

export interface FakeResponse {
  status: number;
  body?: unknown;
  text?: string;
}

/** Collects the one answer a handler (or a middleware) gives. */
export class Answer {
  response: FakeResponse | null = null;

  json(status: number, body: unknown): void {
    this.#answer({ status, body: JSON.parse(JSON.stringify(body)) as unknown });
  }
  string(status: number, text: string): void {
    this.#answer({ status, text: String(text) });
  }
  #answer(response: FakeResponse): void {
    if (this.response) throw new Error("fake PocketBase: the handler answered twice");
    this.response = response;
  }
}

/** echo.Context: the request's query and the one answer the handler gives; `$apis.requestInfo(c).data` reads `data`. */
export class FakeContext {
  readonly #answer = new Answer();

  constructor(
    readonly data: unknown = {},
    readonly query: Record<string, string> = {},
    /** The request's declared body length (http.Request.ContentLength). */
    readonly contentLength = 0,
    readonly caller: Caller = "superuser",
  ) {}

  /** What 0.22's LoadAuthContext middleware stored: `admin` (a models.Admin) or `authRecord`. */
  get(key: string): unknown {
    if (key === "admin") return this.caller === "superuser" ? { id: "admin0000000001" } : null;
    if (key === "authRecord") return fakeAuthRecord(this.caller);
    return null;
  }

  /** The one answer the handler gave (null: none yet). */
  get answered(): FakeResponse | null {
    return this.#answer.response;
  }
  request(): { contentLength: number } {
    return { contentLength: this.contentLength };
  }
  json(status: number, body: unknown): void {
    this.#answer.json(status, body);
  }
  string(status: number, text: string): void {
    this.#answer.string(status, text);
  }
  queryParam(name: string): string {
    return this.query[name] ?? "";
  }
}

/** A route middleware PocketBase runs before the handler: it answers, or lets the request through (null). */
export interface FakeMiddleware {
  readonly middleware: string;
  check(caller: Caller, contentLength?: number): FakeResponse | null;
}

/**
 * What `$apis.requireAdminAuth()` returns while the file loads. The bundle no
 * longer adds it (a worker identity must get past it: serve decides), so a
 * route registered with it shows up in the bundle test's middleware check.
 * Like PocketBase 0.22 (apis/middlewares.go), anyone but an admin gets 401
 * with this body, which serve answers word for word (ADMIN_ONLY_ANSWER).
 */
export const ADMIN_AUTH: FakeMiddleware = Object.freeze({
  middleware: "requireAdminAuth",
  check: (caller: Caller) =>
    caller === "superuser" ? null : { status: 401, body: ADMIN_ONLY_ANSWER },
});

/** PocketBase 0.22's answer to a request without an admin token (apis.RequireAdminAuth). */
export const ADMIN_ONLY_ANSWER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `$security`, `$os`, the logger and the store: the same on every PocketBase version. */
export function runtimeBasics(db: FakeDb) {
  const log = (level: "info" | "error") => (message: string, ...attrs: unknown[]) => {
    db.logs.push({ level, message, attrs });
  };
  return {
    logger: () => ({ info: log("info"), error: log("error") }),
    store: () => fakeStore(db.store),
    $security: {
      randomString: (n: number) => Array.from({ length: n }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join(""),
    },
    $os: { getenv: (name: string) => db.env[name] ?? "" },
    /** An empty array that remembers its model: a raw query's all() fills it with rows of the model's shape. */
    arrayOf: (model: object) => Object.defineProperty([] as unknown[], ARRAY_MODEL, { value: model }),
    DynamicModel: class DynamicModel {
      constructor(shape: object) {
        Object.assign(this, shape);
      }
    },
    $dbx: {
      exp: (sql: string, params: Record<string, unknown> = {}): DbxExpression => ({ sql, params }),
      hashExp: (hash: Record<string, unknown>): DbxExpression => ({ hash }),
    },
    Record: FakeRecord,
  };
}

/** The only globals a 0.22 handler's runtime has here: PocketBase's, stubbed over one FakeDb. */
export function pocketBaseGlobals(db: FakeDb): Record<string, unknown> {
  const appDao = new FakeDao(db).refuseConcurrentWrites();
  const { logger, store, ...globals } = runtimeBasics(db);
  return {
    ...globals,
    $app: { dao: () => appDao, logger, store },
    ForbiddenError: FakeForbiddenError,
    $apis: {
      requestInfo: (c: FakeContext) => ({ data: c.data }),
      requireAdminAuth: () => ADMIN_AUTH,
    },
  };
}

/** $app.store(): get answers null for a missing key, as PocketBase's store does. */
function fakeStore(store: Map<string, unknown>) {
  return {
    get: (key: string) => (store.has(key) ? store.get(key) : null),
    set: (key: string, value: unknown) => void store.set(key, value),
    has: (key: string) => store.has(key),
  };
}

export interface CapturedRoute {
  method: string;
  path: string;
  /** The handler's source text, as PocketBase takes it (`handler.String()`). */
  text: string;
  middlewares: unknown[];
}

export interface CapturedCron {
  id: string;
  schedule: string;
  text: string;
}

/** A record create hook (0.22's onModelBeforeCreate, 0.23+'s onRecordCreate) and the collections it is for. */
export interface CapturedCreateHook {
  registrar: string;
  /** The tags it was registered with (collection names); none: every collection. */
  collections: string[];
  text: string;
}

export interface LoadedHooks {
  routes: CapturedRoute[];
  crons: CapturedCron[];
  createHooks: CapturedCreateHook[];
  /** The account request hooks (scripts/build/bundles.mjs accountRequestHooks), with the collections they are for. */
  accountHooks: CapturedCreateHook[];
}

/** PocketBase's ForbiddenError (apis.NewForbiddenError), as both hooks APIs construct it. */
export class FakeForbiddenError extends Error {
  readonly status = 403;
}

/** A bundle's account request hook names, as esbuild.config.mjs registers them for its API. */
export function accountRequestHooksOf(api: string): readonly string[] {
  const bundle = (HOOKS_BUNDLES as { api: string; accountRequestHooks: string[] }[]).find((b) => b.api === api);
  if (!bundle) throw new Error(`no hooks bundle for API ${api}`);
  return bundle.accountRequestHooks;
}

function sourceText(handler: unknown, what: string): string {
  if (typeof handler !== "function") throw new Error(`${what}: the handler is not a function`);
  return handler.toString();
}

/**
 * Loads a hooks file as PocketBase's loader runtime does: registrations are
 * captured, each handler kept only as its text. `loaderGlobals` are what the
 * loader has besides the registrars (the cron schedule reads $os.getenv and
 * records the sweeper's state in the app's store). `createRegistrar` is the
 * API's record create hook: the only one its loader defines, so a bundle using
 * the other API's fails to load, as it would on that PocketBase.
 */
export function loadHooksWith(
  source: string, loaderGlobals: Record<string, unknown>, createRegistrar: string, accountRegistrars: readonly string[] = [],
): LoadedHooks {
  const routes: CapturedRoute[] = [];
  const crons: CapturedCron[] = [];
  const createHooks: CapturedCreateHook[] = [];
  const accountHooks: CapturedCreateHook[] = [];
  const loader = vm.createContext({
    ...loaderGlobals,
    ...Object.fromEntries(accountRegistrars.map((registrar) => [registrar, (handler: unknown, ...collections: unknown[]) => {
      accountHooks.push({ registrar, collections: collections.map(String), text: sourceText(handler, registrar) });
    }])),
    [createRegistrar]: (handler: unknown, ...collections: unknown[]) => {
      createHooks.push({ registrar: createRegistrar, collections: collections.map(String), text: sourceText(handler, createRegistrar) });
    },
    routerAdd: (method: string, path: string, handler: unknown, ...middlewares: unknown[]) => {
      routes.push({ method, path, text: sourceText(handler, `routerAdd ${path}`), middlewares });
    },
    cronAdd: (id: string, schedule: unknown, handler: unknown) => {
      if (typeof schedule !== "string") throw new Error(`cronAdd ${id}: the schedule is not a string`);
      crons.push({ id, schedule, text: sourceText(handler, `cronAdd ${id}`) });
    },
  });
  vm.runInContext(source, loader, { filename: "fleet.pb.js" });
  return { routes, crons, createHooks, accountHooks };
}

/** The create hooks that fire for a probe_jobs record. */
export function jobCreateHooks(hooks: LoadedHooks): CapturedCreateHook[] {
  return hooks.createHooks.filter((h) => h.collections.length === 0 || h.collections.includes(COLLECTION));
}

/** One hook call, as PocketBase runs it: `{(<text>).apply(undefined, __args)}` in a runtime of the pool. */
export function runHookWith(hook: CapturedCreateHook, runtime: vm.Context, event: unknown): void {
  runtime["__args"] = [event];
  vm.runInContext(`{(${hook.text}).apply(undefined, __args)}`, runtime, { filename: `${hook.registrar} ${hook.collections.join(",")}` });
}

/**
 * One request as PocketBase runs it: the route's middlewares, then the
 * handler's text alone, `{(<text>).apply(undefined, __args)}`, in the given
 * runtime (a fresh one per request unless a pooled one is passed).
 */
export function runRouteWith(
  route: CapturedRoute,
  caller: Caller,
  context: { answered: FakeResponse | null },
  runtime: vm.Context,
  contentLength = 0,
): FakeResponse {
  for (const middleware of route.middlewares) {
    const stopped = (middleware as FakeMiddleware).check(caller, contentLength);
    if (stopped !== null) return stopped;
  }
  runtime["__args"] = [context];
  vm.runInContext(`{(${route.text}).apply(undefined, __args)}`, runtime, { filename: `${route.method} ${route.path}` });
  if (!context.answered) throw new Error(`${route.method} ${route.path} gave no answer`);
  return context.answered;
}

/** One cron tick, as cronAdd runs it: `{(<text>).apply(undefined)}` in a fresh context. */
export function runCronWith(cron: CapturedCron, runtime: vm.Context): void {
  vm.runInContext(`{(${cron.text}).apply(undefined)}`, runtime, { filename: `cron ${cron.id}` });
}

/** One hooks API's fake: how it loads a hooks file and runs its routes and cron jobs over a FakeDb. */
export interface FakePocketBase {
  /** The hooks API, as scripts/build/bundles.mjs's HOOKS_BUNDLES name it. */
  api: string;
  /** The schema its FakeDb needs: the tables that line's migrations make (`new FakeDb(fake.line)`). */
  line: HooksLine;
  /** What every route registration of the bundle must carry. */
  routeMiddlewares: readonly FakeMiddleware[];
  /** Pass a FakeDb to share its store and logs with the requests that follow. */
  loadHooks(source: string, env?: Record<string, string>, db?: FakeDb): LoadedHooks;
  /** A runtime of PocketBase's pool: one context that serves request after request. */
  pooledRuntime(db: FakeDb): vm.Context;
  runRoute(route: CapturedRoute, db: FakeDb, request?: FakeRequest, runtime?: vm.Context): FakeResponse;
  runCron(cron: CapturedCron, db: FakeDb): void;
  /** Makes the db run the bundle's probe_jobs create hooks on every insert, as this API calls them. */
  installHooks(hooks: LoadedHooks, db: FakeDb): void;
}

/** PocketBase 0.22: `(c) => ...` handlers on an echo.Context; who may call is the bundle's own check (serve). */
export const FAKE_POCKETBASE_0_22: FakePocketBase = {
  api: "0.22",
  line: "0.22",
  // None: serve() decides who may call (esbuild.config.mjs).
  routeMiddlewares: [],
  loadHooks(source, env = {}, db = new FakeDb("0.22")) {
    const { logger, store } = runtimeBasics(db);
    return loadHooksWith(source, {
      $apis: { requireAdminAuth: () => ADMIN_AUTH },
      $os: { getenv: (name: string) => env[name] ?? "" },
      $app: { logger, store },
    }, "onModelBeforeCreate", accountRequestHooksOf("0.22"));
  },
  pooledRuntime: (db) => vm.createContext(pocketBaseGlobals(db)),
  runRoute(route, db, request = {}, runtime = vm.createContext(pocketBaseGlobals(db))) {
    // PocketBase 0.22 reads a body it cannot parse as {}.
    const data = request.body === UNPARSEABLE_BODY ? {} : request.body ?? {};
    const caller = request.caller ?? "superuser";
    return runRouteWith(route, caller, new FakeContext(data, request.query ?? {}, request.contentLength ?? 0, caller),
      runtime, request.contentLength ?? 0);
  },
  runCron(cron, db) {
    runCronWith(cron, this.pooledRuntime(db));
  },
  installHooks(hooks, db) {
    if (db.line !== this.line) throw new Error(`fake PocketBase ${this.api}: a FakeDb of the ${db.line} schema`);
    // Hooks run in a runtime of the pool, not the request's.
    const runtime = vm.createContext(pocketBaseGlobals(db));
    const fired = jobCreateHooks(hooks);
    db.onCreate = (record) => {
      // core.ModelEvent: the record about to be inserted, its id and created already set.
      for (const hook of fired) runHookWith(hook, runtime, { model: record });
      return true;
    };
  },
};
