/**
 * A stand-in for what PocketBase 0.22's JSVM gives a hook handler, enough to
 * run pb_hooks/fleet.pb.js the way PocketBase does (plugins/jsvm/binds.go):
 * the file is loaded once, each handler is taken as its source text, and every
 * request runs `{(<text>).apply(undefined, __args)}` in a runtime that never saw
 * the file. Here that runtime is a fresh node:vm context holding only these stubs.
 *
 * The stubs follow PocketBase where the handlers depend on it: records store
 * dates as `2006-01-02 15:04:05.000Z` text, findRecordById throws for an unknown
 * id, runInTransaction rolls back (copy-on-write) when its callback throws, and
 * query conditions are evaluated the way SQLite would for the few shapes
 * src/lib/queries.ts produces (any other shape throws, so a changed query is
 * noticed here instead of silently mis-evaluated).
 *
 * The database half (FakeDb, FakeDao, FakeRecord) is shared with the 0.23+
 * fake (./fake-pocketbase-modern.ts); FAKE_POCKETBASE_0_22 is the 0.22 face:
 * its globals, its request context and its admin middleware.
 */
import { randomInt } from "node:crypto";
import vm from "node:vm";
import type { JobRecord } from "../../../src/client/fleet-client";
import { isLeaseLive, parsePbDate } from "../../../src/lib/lease";
import { LEASE_AS_JUDGED_SQL } from "../../../src/lib/lease";
import { expiredLeaseWhere, jobByIdWhere, pendingWhere } from "../../../src/lib/queries";

const COLLECTION = "probe_jobs";
const DATE_FIELDS = new Set(["created", "updated", "lease_expires_at", "claimed_at", "finished_at", "requeued_at"]);
const NUMBER_FIELDS = new Set(["version", "reclaim_count", "consecutive_orphan_count"]);
const TEXT_FIELDS = new Set(["probe_key", "status", "claimed_by", "lease_token"]);
const JSON_FIELDS = new Set(["result"]);

/**
 * A probe_jobs row as stored: the client's JobRecord, but with any status text
 * (tests store odd ones), a lease_token always present, and result as JSON text ("" = null).
 */
export interface StoredRow extends Omit<JobRecord, "status" | "lease_token" | "result"> {
  status: string;
  lease_token: string;
  result: string;
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

/** models.Record: get/set/getString/getInt and `id`, with PocketBase's field normalisation on set. */
export class FakeRecord {
  id: string;
  readonly #data: Map<string, string | number>;

  constructor(row?: StoredRow) {
    this.id = row?.id ?? "";
    this.#data = new Map(row ? Object.entries(row).filter(([k]) => k !== "id") : []);
  }

  get(name: string): unknown {
    if (name === "id") return this.id;
    const value = this.#data.get(name);
    if (JSON_FIELDS.has(name)) return value ? JSON.parse(String(value)) : null;
    return value;
  }

  set(name: string, value: unknown): void {
    if (name === "id") this.id = String(value);
    else if (DATE_FIELDS.has(name)) this.#data.set(name, toPbDateText(value));
    else if (NUMBER_FIELDS.has(name)) this.#data.set(name, Number.isFinite(Number(value)) ? Number(value) : 0);
    else if (TEXT_FIELDS.has(name)) this.#data.set(name, value === null || value === undefined ? "" : String(value));
    else if (JSON_FIELDS.has(name)) this.#data.set(name, value === null || value === undefined ? "" : JSON.stringify(value));
    // PocketBase would keep an unknown key in memory and never save it: fail loudly instead.
    else throw new Error(`fake PocketBase: probe_jobs has no field ${JSON.stringify(name)}`);
  }

  getString(name: string): string {
    const value = this.get(name);
    if (value === undefined || value === null) return "";
    return typeof value === "object" ? JSON.stringify(value) : String(value);
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

/** What `findCollectionByNameOrId` returns: only the name matters to recordQuery. */
export interface FakeCollection {
  name: string;
}

const PREFIX_FROM = " AND probe_key >= {:prefix}";
const PREFIX_BELOW = " AND probe_key < {:prefixEnd}";
/** The conditions src/lib/queries.ts builds, without a prefix. */
const PENDING_SQL = pendingWhere("").sql;
const EXPIRED_SQL = expiredLeaseWhere(0, "").sql;
const BY_ID_SQL = jobByIdWhere("").sql;
/** The select list of the adapter's record queries: every column, the lease as the lease rule judges it. */
const JUDGED_SELECT = ["probe_jobs.*", LEASE_AS_JUDGED_SQL];

function isHeld(row: StoredRow): boolean {
  return row.status === "claimed" || row.status === "running";
}

/**
 * SQLite's answer to EXPIRED_SQL, by the JavaScript half of the one lease rule
 * (the integration suite checks that real SQLite agrees with it).
 */
function leaseExpired(row: StoredRow, params: Record<string, unknown>): boolean {
  const now = parsePbDate(String(params["now"]));
  if (now === null) throw new Error(`fake PocketBase: {:now} is not a PocketBase date: ${String(params["now"])}`);
  return isHeld(row) && !isLeaseLive(row.lease_expires_at, now);
}

function requireBound(sql: string, params: Record<string, unknown>): void {
  for (const [, name] of sql.matchAll(/\{:(\w+)\}/g)) {
    if (!(name! in params)) throw new Error(`fake PocketBase: {:${name}} is not bound`);
  }
}

/** SQLite's BINARY order of text: UTF-8 bytes (code points), not JavaScript's UTF-16 units. */
function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Splits `(<condition>) AND probe_key >= {:prefix}[ AND probe_key < {:prefixEnd}]` into the condition and a range test. */
function splitPrefix(sql: string, params: Record<string, unknown>): [string, (row: StoredRow) => boolean] {
  let rest = sql;
  const below = rest.endsWith(PREFIX_BELOW);
  if (below) rest = rest.slice(0, -PREFIX_BELOW.length);
  if (!rest.endsWith(PREFIX_FROM)) {
    if (below) throw new Error(`fake PocketBase: unexpected prefix clause in ${sql}`);
    return [sql, () => true];
  }
  const inner = rest.slice(0, -PREFIX_FROM.length);
  if (!inner.startsWith("(") || !inner.endsWith(")")) throw new Error(`fake PocketBase: unexpected prefix clause in ${sql}`);
  const from = String(params["prefix"]);
  const end = below ? String(params["prefixEnd"]) : null;
  return [
    inner.slice(1, -1),
    (row) => compareText(row.probe_key, from) >= 0 && (end === null || compareText(row.probe_key, end) < 0),
  ];
}

/** SQLite's answer for the WHERE shapes src/lib/queries.ts builds (text comparison of dates, as SQLite does). */
function matchesWhere(expression: DbxExpression, row: StoredRow): boolean {
  if ("hash" in expression) {
    return Object.entries(expression.hash).every(([column, value]) => row[column as keyof StoredRow] === value);
  }
  const { sql, params } = expression;
  requireBound(sql, params);
  const [condition, prefixMatches] = splitPrefix(sql, params);
  let matches: boolean;
  if (condition === PENDING_SQL) matches = row.status === "pending";
  else if (condition === BY_ID_SQL) matches = row.id === params["id"];
  else if (condition === EXPIRED_SQL) matches = leaseExpired(row, params);
  else throw new Error(`fake PocketBase: cannot evaluate WHERE ${sql}`);
  return matches && prefixMatches(row);
}

function compareBy(order: string[]): (a: StoredRow, b: StoredRow) => number {
  return (a, b) => {
    for (const term of order) {
      const m = /^(\w+) (ASC|DESC)$/.exec(term);
      if (!m) throw new Error(`fake PocketBase: cannot order by ${JSON.stringify(term)}`);
      const field = m[1] as keyof StoredRow;
      const [x, y] = [a[field], b[field]];
      if (x === y) continue;
      return (x < y ? -1 : 1) * (m[2] === "DESC" ? -1 : 1);
    }
    return 0;
  };
}

function clone(row: StoredRow): StoredRow {
  return { ...row };
}

/** The database behind the fake: rows, environment, logs, and switches to make it fail. */
export class FakeDb {
  rows = new Map<string, StoredRow>();
  env: Record<string, string> = {};
  logs: { level: "info" | "error"; message: string; attrs: unknown[] }[] = [];
  /** $app.store(): one per process, shared by the loader and every pooled runtime. */
  store = new Map<string, unknown>();
  /** saveRecord calls, committed or not. */
  saves = 0;
  /** Collection look-ups: handlers cache the model per runtime, so a burst should cost one. */
  collectionLookups = 0;
  /** When set, the saveRecord call with this number (1-based, counting from now) throws. */
  failSaveNumber: number | null = null;
  /** When true, every raw query (stats) throws. */
  failQueries = false;
  openTransaction = false;
  #created = Date.now() - 3_600_000;

  /** Adds a row; created times increase in insertion order. */
  insert(fields: Partial<StoredRow> = {}): StoredRow {
    this.#created += 1000;
    const row: StoredRow = {
      id: `job${String(this.rows.size + 1).padStart(12, "0")}`,
      probe_key: `probe-${this.rows.size + 1}`,
      status: "pending",
      claimed_by: "",
      lease_expires_at: "",
      version: 0,
      claimed_at: "",
      finished_at: "",
      requeued_at: "",
      reclaim_count: 0,
      consecutive_orphan_count: 0,
      lease_token: "",
      result: "",
      created: pbDate(this.#created),
      updated: pbDate(this.#created),
      ...fields,
    };
    this.rows.set(row.id, row);
    return clone(row);
  }

  row(id: string): StoredRow {
    const row = this.rows.get(id);
    if (!row) throw new Error(`no row ${id}`);
    return clone(row);
  }

  /** Arms a failure of the nth saveRecord call from now. */
  failSave(nth = 1): void {
    this.failSaveNumber = this.saves + nth;
  }
}

/** daos.Dao: the app's, or a transaction's working copy of the rows. */
export class FakeDao {
  readonly #db: FakeDb;
  readonly #txRows: Map<string, StoredRow> | null;

  constructor(db: FakeDb, txRows: Map<string, StoredRow> | null = null) {
    this.#db = db;
    this.#txRows = txRows;
  }

  #rows(): Map<string, StoredRow> {
    if (this.#txRows) return this.#txRows;
    // PocketBase has one writer connection: the app dao inside a transaction deadlocks (issue #4859).
    if (this.#db.openTransaction) throw new Error("fake PocketBase: $app.dao() used inside runInTransaction (deadlocks PocketBase)");
    return this.#db.rows;
  }

  findCollectionByNameOrId(name: string): FakeCollection {
    if (name !== COLLECTION) throw new Error(`fake PocketBase: no collection ${name}`);
    this.#db.collectionLookups++;
    return { name: COLLECTION };
  }

  saveRecord(record: FakeRecord): void {
    const rows = this.#rows();
    this.#db.saves++;
    if (this.#db.saves === this.#db.failSaveNumber) throw new Error("fake PocketBase: constraint failed (armed by the test)");
    if (!(record instanceof FakeRecord)) throw new Error("fake PocketBase: saveRecord wants a Record");
    const row = record.snapshot();
    row.updated = pbDate(Date.now());
    rows.set(row.id, row);
  }

  /** Like PocketBase 0.22: a collection model or its name. */
  recordQuery(collection: string | FakeCollection): FakeRecordQuery {
    const name = typeof collection === "string" ? collection : collection.name;
    if (name !== COLLECTION) throw new Error(`fake PocketBase: no collection ${name}`);
    return new FakeRecordQuery(() => this.#rows());
  }

  runInTransaction(fn: (tx: FakeDao) => void): void {
    if (this.#txRows || this.#db.openTransaction) throw new Error("fake PocketBase: nested runInTransaction");
    const working = new Map([...this.#db.rows].map(([id, row]) => [id, clone(row)]));
    this.#db.openTransaction = true;
    try {
      fn(new FakeDao(this.#db, working));
    } finally {
      this.#db.openTransaction = false;
    }
    this.#db.rows = working; // commit; a throw above left db.rows untouched (rollback)
  }

  db(): { newQuery(sql: string): { bind(params: Record<string, unknown>): { one(model: object): void } } } {
    const db = this.#db;
    return {
      newQuery: (sql) => ({
        bind: (params) => ({
          one: (model) => {
            if (db.failQueries) throw new Error("fake PocketBase: database is locked (armed by the test)");
            Object.assign(model, answerStatsQuery(sql, params, [...this.#rows().values()]));
          },
        }),
      }),
    };
  }
}

class FakeRecordQuery {
  readonly #rows: () => Map<string, StoredRow>;
  readonly #where: DbxExpression[] = [];
  readonly #order: string[] = [];
  #limit = Number.POSITIVE_INFINITY;
  #judgedLease = false;

  constructor(rows: () => Map<string, StoredRow>) {
    this.#rows = rows;
  }
  /** Only the adapter's select list is understood: anything else throws, so a changed query is noticed. */
  select(...columns: string[]): this {
    if (JSON.stringify(columns) !== JSON.stringify(JUDGED_SELECT)) {
      throw new Error(`fake PocketBase: cannot select ${JSON.stringify(columns)}`);
    }
    this.#judgedLease = true;
    return this;
  }
  andWhere(expression: DbxExpression): this {
    this.#where.push(expression);
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
    for (const row of this.#select()) out.push(new FakeRecord(clone(row)));
  }
  one(record: FakeRecord): void {
    const row = this.#select()[0];
    if (row === undefined) throw new Error("sql: no rows in result set");
    record.load(clone(row));
  }
  #select(): StoredRow[] {
    return [...this.#rows().values()]
      .filter((row) => this.#where.every((w) => matchesWhere(w, row)))
      .sort(compareBy(this.#order))
      .slice(0, this.#limit)
      .map((row) => (this.#judgedLease ? { ...row, lease_expires_at: judgedLease(row.lease_expires_at) } : row));
  }
}

/** LEASE_AS_JUDGED_SQL, by the JavaScript half of the lease rule: the text when readable, else "". */
function judgedLease(text: string): string {
  return parsePbDate(text) === null ? "" : text;
}

/** SQLite's answer to statsQuery (src/lib/queries.ts), computed over the rows. */
function answerStatsQuery(sql: string, params: Record<string, unknown>, all: StoredRow[]): Record<string, unknown> {
  requireBound(sql, params);
  const where = /\n\s*FROM probe_jobs\n\s*WHERE (.*)$/s.exec(sql);
  if (!sql.startsWith("SELECT") || !where) throw new Error(`fake PocketBase: cannot answer ${sql}`);
  const [condition, prefixMatches] = splitPrefix(where[1]!, params);
  if (condition !== "1 = 1") throw new Error(`fake PocketBase: cannot evaluate WHERE ${where[1]}`);
  const rows = all.filter(prefixMatches);
  const count = (test: (row: StoredRow) => boolean) => rows.filter(test).length;
  const waits = rows
    .filter((r) => r.status === "pending")
    .map((r) => (r.created > r.requeued_at ? r.created : r.requeued_at))
    .sort();
  return {
    pending: count((r) => r.status === "pending"),
    claimed: count((r) => r.status === "claimed"),
    running: count((r) => r.status === "running"),
    done: count((r) => r.status === "done"),
    failed: count((r) => r.status === "failed"),
    total: rows.length,
    oldest_pending: waits[0] ?? "",
    expired_leases: count((r) => leaseExpired(r, params)),
    past_orphan_cap: count((r) => r.consecutive_orphan_count >= Number(params["cap"])),
  };
}

/** What PocketBase could not parse as a request body (invalid JSON, another content type, ...). */
export const UNPARSEABLE_BODY: unique symbol = Symbol("a body PocketBase cannot parse");

/** Who sends a request: a superuser (0.22: an admin), an auth record of another collection, or no valid token. */
export type Caller = "superuser" | "user" | "none";

export interface FakeRequest {
  /** The JSON body as PocketBase parsed it, or UNPARSEABLE_BODY. */
  body?: unknown;
  query?: Record<string, string>;
  /** Default "superuser". */
  caller?: Caller;
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
  ) {}

  get response(): FakeResponse | null {
    return this.#answer.response;
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
  check(caller: Caller): FakeResponse | null;
}

/**
 * What `$apis.requireAdminAuth()` returns while the file loads; 0.22 routes must
 * carry it. Like PocketBase 0.22 (apis/middlewares.go), anyone but an admin gets
 * 401 with this body.
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
    arrayOf: (_model: unknown) => [] as unknown[],
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
  const appDao = new FakeDao(db);
  const { logger, store, ...globals } = runtimeBasics(db);
  return {
    ...globals,
    $app: { dao: () => appDao, logger, store },
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

export interface LoadedHooks {
  routes: CapturedRoute[];
  crons: CapturedCron[];
}

function sourceText(handler: unknown, what: string): string {
  if (typeof handler !== "function") throw new Error(`${what}: the handler is not a function`);
  return handler.toString();
}

/**
 * Loads a hooks file as PocketBase's loader runtime does: registrations are
 * captured, each handler kept only as its text. `loaderGlobals` are what the
 * loader has besides the registrars (the cron schedule reads $os.getenv and
 * records the sweeper's state in the app's store).
 */
export function loadHooksWith(source: string, loaderGlobals: Record<string, unknown>): LoadedHooks {
  const routes: CapturedRoute[] = [];
  const crons: CapturedCron[] = [];
  const loader = vm.createContext({
    ...loaderGlobals,
    routerAdd: (method: string, path: string, handler: unknown, ...middlewares: unknown[]) => {
      routes.push({ method, path, text: sourceText(handler, `routerAdd ${path}`), middlewares });
    },
    cronAdd: (id: string, schedule: unknown, handler: unknown) => {
      if (typeof schedule !== "string") throw new Error(`cronAdd ${id}: the schedule is not a string`);
      crons.push({ id, schedule, text: sourceText(handler, `cronAdd ${id}`) });
    },
  });
  vm.runInContext(source, loader, { filename: "fleet.pb.js" });
  return { routes, crons };
}

/**
 * One request as PocketBase runs it: the route's middlewares, then the
 * handler's text alone, `{(<text>).apply(undefined, __args)}`, in the given
 * runtime (a fresh one per request unless a pooled one is passed).
 */
export function runRouteWith(
  route: CapturedRoute,
  caller: Caller,
  context: { response: FakeResponse | null },
  runtime: vm.Context,
): FakeResponse {
  for (const middleware of route.middlewares) {
    const stopped = (middleware as FakeMiddleware).check(caller);
    if (stopped !== null) return stopped;
  }
  runtime["__args"] = [context];
  vm.runInContext(`{(${route.text}).apply(undefined, __args)}`, runtime, { filename: `${route.method} ${route.path}` });
  if (!context.response) throw new Error(`${route.method} ${route.path} gave no answer`);
  return context.response;
}

/** One cron tick, as cronAdd runs it: `{(<text>).apply(undefined)}` in a fresh context. */
export function runCronWith(cron: CapturedCron, runtime: vm.Context): void {
  vm.runInContext(`{(${cron.text}).apply(undefined)}`, runtime, { filename: `cron ${cron.id}` });
}

/** One hooks API's fake: how it loads a hooks file and runs its routes and cron jobs over a FakeDb. */
export interface FakePocketBase {
  /** The hooks API, as esbuild.config.mjs's HOOKS_BUNDLES name it. */
  api: string;
  /** What every route registration of the bundle must carry. */
  routeMiddlewares: readonly FakeMiddleware[];
  /** Pass a FakeDb to share its store and logs with the requests that follow. */
  loadHooks(source: string, env?: Record<string, string>, db?: FakeDb): LoadedHooks;
  /** A runtime of PocketBase's pool: one context that serves request after request. */
  pooledRuntime(db: FakeDb): vm.Context;
  runRoute(route: CapturedRoute, db: FakeDb, request?: FakeRequest, runtime?: vm.Context): FakeResponse;
  runCron(cron: CapturedCron, db: FakeDb): void;
}

/** PocketBase 0.22: `(c) => ...` handlers on an echo.Context, admin auth by middleware. */
export const FAKE_POCKETBASE_0_22: FakePocketBase = {
  api: "0.22",
  routeMiddlewares: [ADMIN_AUTH],
  loadHooks(source, env = {}, db = new FakeDb()) {
    const { logger, store } = runtimeBasics(db);
    return loadHooksWith(source, {
      $apis: { requireAdminAuth: () => ADMIN_AUTH },
      $os: { getenv: (name: string) => env[name] ?? "" },
      $app: { logger, store },
    });
  },
  pooledRuntime: (db) => vm.createContext(pocketBaseGlobals(db)),
  runRoute(route, db, request = {}, runtime = vm.createContext(pocketBaseGlobals(db))) {
    // PocketBase 0.22 reads a body it cannot parse as {}.
    const data = request.body === UNPARSEABLE_BODY ? {} : request.body ?? {};
    return runRouteWith(route, request.caller ?? "superuser", new FakeContext(data, request.query ?? {}), runtime);
  },
  runCron(cron, db) {
    runCronWith(cron, this.pooledRuntime(db));
  },
};
