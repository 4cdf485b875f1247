/**
 * The PocketBase 0.23+ face of the fake (./fake-pocketbase.ts has the shared
 * database half and the 0.22 face): enough of the 0.23 to 0.40 hooks API to run
 * pb_hooks_0.23/fleet.pb.js the way PocketBase does, each handler from its own
 * text in a runtime that never saw the file. It follows PocketBase where the
 * handlers depend on it (plugins/jsvm, core/event_request.go, apis/middlewares.go):
 * `e.requestInfo()` throws on a body it cannot parse, `$apis.requireSuperuserAuth()`
 * answers 401 without a token and 403 to another collection's token,
 * `$app.runInTransaction((txApp) => ...)` rolls back when its callback throws,
 * and `$app` used inside it is an error (on PocketBase it waits for the writer
 * the transaction holds). `onRecordCreate` hooks wrap the insert: it happens
 * only when the hook calls `e.next()`.
 */
import vm from "node:vm";
import {
  Answer,
  FakeDao,
  FakeDb,
  FakeRecord,
  accountRequestHooksOf,
  fakeAuthRecord,
  FakeForbiddenError,
  jobCreateHooks,
  loadHooksWith,
  runCronWith,
  runHookWith,
  runRouteWith,
  runtimeBasics,
  UNPARSEABLE_BODY,
  type Caller,
  type FakeCollection,
  type FakeMiddleware,
  type FakePocketBase,
  type FakeResponse,
} from "./fake-pocketbase";

/** core.App: the app, or a transaction's txApp (over the FakeDao of the same rows). */
export class FakeApp {
  readonly #db: FakeDb;
  readonly #dao: FakeDao;

  // The app's db() is the concurrent pool on 0.23.12 (0.40 routes writes to the writer itself): refuse writes there, as on 0.22.
  constructor(db: FakeDb, dao: FakeDao = new FakeDao(db).refuseConcurrentWrites()) {
    this.#db = db;
    this.#dao = dao;
  }

  runInTransaction(fn: (txApp: FakeApp) => void): void {
    this.#dao.runInTransaction((txDao) => fn(new FakeApp(this.#db, txDao)));
  }
  db(): ReturnType<FakeDao["db"]> {
    return this.#dao.db();
  }
  nonconcurrentDB(): ReturnType<FakeDao["db"]> {
    return this.#dao.nonconcurrentDB();
  }
  /** PocketBase 0.23+'s own collection cache: no query, so not counted as a look-up. */
  findCachedCollectionByNameOrId(name: string): FakeCollection {
    if (name !== "probe_jobs" && name !== "probe_job_events") throw new Error(`fake PocketBase: no collection ${name}`);
    return { name };
  }
  /** 0.23+ takes the collection's name (or model). */
  recordQuery(collection: string): ReturnType<FakeDao["recordQuery"]> {
    return this.#dao.recordQuery(collection);
  }
  /** The adapter saves without validation, as 0.22's saveRecord did (no `save` here, so a switch is noticed). */
  saveNoValidate(record: FakeRecord): void {
    this.#dao.saveRecord(record);
  }
  store() {
    return runtimeBasics(this.#db).store();
  }
  logger() {
    return runtimeBasics(this.#db).logger();
  }
}

/** core.RequestEvent: body and query as 0.23+ reads them, the caller's auth, and the one answer. */
export class FakeRequestEvent {
  readonly #answer = new Answer();
  readonly #body: unknown;
  readonly #caller: Caller;
  readonly request: { url: { query(): { get(name: string): string } }; contentLength: number };
  /** Set when a middleware called e.next(). */
  wentOn = false;

  constructor(body: unknown, query: Record<string, string>, caller: Caller, contentLength = 0) {
    this.#body = body;
    this.#caller = caller;
    this.request = { url: { query: () => ({ get: (name: string) => query[name] ?? "" }) }, contentLength };
  }
  next(): void {
    this.wentOn = true;
  }

  /** The one answer the handler gave (null: none yet). */
  get answered(): FakeResponse | null {
    return this.#answer.response;
  }
  /** The http.ResponseWriter: only its headers, which a string answer's Content-Type is read from. */
  readonly response = { header: () => this.#headers };
  readonly #headers = new FakeHeader();
  /** 0.23+ throws where 0.22 read `{}`: invalid JSON, a top-level array, another content type. */
  requestInfo(): { body: unknown } {
    if (this.#body === UNPARSEABLE_BODY) throw new Error("fake PocketBase: invalid character '}' looking for beginning of value");
    return { body: this.#body };
  }
  hasSuperuserAuth(): boolean {
    return this.#caller === "superuser";
  }
  /** The token's record (PocketBase loaded it for this request): a superuser's too on 0.23+, a _superusers record. */
  get auth(): object | null {
    return fakeAuthRecord(this.#caller, "record");
  }
  json(status: number, body: unknown): void {
    this.#answer.json(status, body);
  }
  /** A text answer; one sent as application/json is read as its JSON, as a client would read it. */
  string(status: number, text: string): void {
    if (this.#headers.get("Content-Type") === "application/json") this.#answer.json(status, JSON.parse(String(text)) as unknown);
    else this.#answer.string(status, text);
  }
}

/** http.Header, as far as the handlers use it. */
class FakeHeader {
  readonly #values = new Map<string, string>();
  set(name: string, value: string): void {
    this.#values.set(name.toLowerCase(), String(value));
  }
  get(name: string): string {
    return this.#values.get(name.toLowerCase()) ?? "";
  }
}

/** What `$apis.requireSuperuserAuth()` returns: PocketBase 0.23+'s answers, in its error shape. */
export const SUPERUSER_AUTH: FakeMiddleware = Object.freeze({
  middleware: "requireSuperuserAuth",
  check: (caller: Caller): FakeResponse | null => {
    if (caller === "none") return { status: 401, body: { status: 401, message: "The request requires valid record authorization token.", data: {} } };
    if (caller === "user") return { status: 403, body: { status: 403, message: "The authorized record is not allowed to perform this action.", data: {} } };
    return null;
  },
});

/**
 * `new Middleware(fn, priority, id)` while the file loads (plugins/jsvm):
 * kept as its text, run as PocketBase runs it, alone in a fresh runtime of
 * the handlers' globals, on an event of the request's caller.
 */
export class FakeRouteMiddleware implements FakeMiddleware {
  readonly middleware: string;
  readonly priority: number;
  readonly #text: string;

  constructor(fn: unknown, priority: unknown, id: unknown) {
    if (typeof fn !== "function") throw new Error("fake PocketBase: new Middleware() without a function");
    this.#text = fn.toString();
    this.priority = Number(priority);
    this.middleware = String(id);
  }
  check(caller: Caller, contentLength = 0): FakeResponse | null {
    const event = new FakeRequestEvent({}, {}, caller, contentLength);
    const runtime = vm.createContext(modernGlobals(new FakeDb("0.23")));
    runtime["__args"] = [event];
    vm.runInContext(`{(${this.#text}).apply(undefined, __args)}`, runtime, { filename: `middleware ${this.middleware}` });
    if (event.wentOn) return null;
    if (!event.answered) throw new Error(`middleware ${this.middleware} neither answered nor went on`);
    return event.answered;
  }
}

/** The only globals a 0.23+ handler's runtime has here. */
export function modernGlobals(db: FakeDb): Record<string, unknown> {
  const { logger: _logger, store: _store, ...globals } = runtimeBasics(db);
  return {
    ...globals,
    $app: new FakeApp(db),
    $apis: { requireSuperuserAuth: () => SUPERUSER_AUTH },
    ForbiddenError: FakeForbiddenError,
  };
}

/** PocketBase 0.23 to 0.40: `(e) => ...` handlers on a core.RequestEvent; the bundle checks auth itself. */
export const FAKE_POCKETBASE_0_23: FakePocketBase = {
  api: "0.23",
  line: "0.23",
  // pb-fleet's 413 before PocketBase's body limit (scripts/build/bundles.mjs's builtMiddlewares).
  routeMiddlewares: [{ middleware: "pbFleetBodyLimit", check: () => null }],
  loadHooks(source, env = {}, db = new FakeDb("0.23")) {
    return loadHooksWith(source, {
      Middleware: FakeRouteMiddleware,
      $apis: { requireSuperuserAuth: () => SUPERUSER_AUTH },
      $os: { getenv: (name: string) => env[name] ?? "" },
      $app: new FakeApp(db),
    }, "onRecordCreate", accountRequestHooksOf("0.23"));
  },
  pooledRuntime: (db) => vm.createContext(modernGlobals(db)),
  runRoute(route, db, request = {}, runtime = vm.createContext(modernGlobals(db))) {
    const event = new FakeRequestEvent(request.body ?? {}, request.query ?? {}, request.caller ?? "superuser", request.contentLength ?? 0);
    return runRouteWith(route, request.caller ?? "superuser", event, runtime, request.contentLength ?? 0);
  },
  runCron(cron, db) {
    runCronWith(cron, this.pooledRuntime(db));
  },
  installHooks(hooks, db) {
    if (db.line !== this.line) throw new Error(`fake PocketBase ${this.api}: a FakeDb of the ${db.line} schema`);
    const runtime = vm.createContext(modernGlobals(db));
    const fired = jobCreateHooks(hooks);
    db.onCreate = (record) => {
      // core.RecordEvent: each hook calls e.next() to go on; the last next() is the insert.
      let inserted = false;
      const run = (i: number): void => {
        const hook = fired[i];
        if (hook === undefined) {
          inserted = true;
          return;
        }
        let nexts = 0;
        runHookWith(hook, runtime, {
          record,
          next: () => {
            if (++nexts > 1) throw new Error("fake PocketBase: e.next() called twice");
            run(i + 1);
          },
        });
      };
      run(0);
      return inserted;
    };
  },
};
