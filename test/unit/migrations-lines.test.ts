/**
 * pb_migrations/ (PocketBase 0.22) and pb_migrations_0.23/ (0.23 to 0.40)
 * must build the same collections (probe_jobs, probe_schedules, probe_job_events,
 * probe_flow, and the auth collection fleet_workers). Both sets run
 * here in node:vm over small stand-ins of each line's migration API (the calls
 * the files make, as PocketBase names them), up, down and up again; the
 * collections they leave are compared field by field, and the raw SQL they run
 * (the backfills, the job counts' triggers, flow control's claims table)
 * statement by statement. The files are also run
 * on real binaries (test/integration/migration-queue-fields.test.ts), which
 * this cannot replace.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { WORKER_FIELDS, WORKER_NAME_PATTERN, WORKERS_COLLECTION } from "../../src/lib/identity";
import { FIRST_MIGRATION_COLUMNS, JOB_COLUMNS, JOBS_COLLECTION } from "../../src/lib/job-schema";
import { JOB_STATUSES } from "../../src/lib/types";
import { JOB_COUNTS_REBUILD, JOB_COUNTS_SETUP, JOB_COUNTS_TEARDOWN } from "../../src/lib/job-counts";
import { FINISHED_SQL, ORPHANED_SQL, UNREADABLE_LEASE_INDEX_NAME, UNREADABLE_LEASE_INDEX_SETUP } from "../../src/lib/queries";

const REPO = join(import.meta.dirname, "..", "..");
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

type Migration = { file: string; up: (arg: unknown) => void; down: (arg: unknown) => void };

/** The migration files of a folder, in the order PocketBase runs them (by file name). */
function loadMigrations(folder: string, globals: Record<string, unknown>): Migration[] {
  const files = readdirSync(join(REPO, folder)).filter((f) => f.endsWith(".js")).sort();
  return files.map((file) => {
    let found: Migration | null = null;
    const context = vm.createContext({
      ...globals,
      migrate: (up: Migration["up"], down: Migration["down"]) => {
        found = { file, up, down };
      },
    });
    vm.runInContext(readFileSync(join(REPO, folder, file), "utf8"), context, { filename: file });
    if (found === null) throw new Error(`${folder}/${file} registers no migration`);
    return found;
  });
}

/** What both lines' collections are compared as. */
interface Shape {
  type: string;
  fields: Record<string, Record<string, unknown>>;
  indexes: string[];
  rules: unknown[];
  /** An auth collection's options that both lines have, in one form; null for a base collection. */
  auth: AuthShape | null;
}

interface AuthShape {
  /** Who may manage other records of the collection besides admins (null: admins only). */
  manageRule: unknown;
  /** The fields an identity signs in with its password by; [] when password auth is off. */
  passwordIdentities: string[];
  oauth2: boolean;
}

/**
 * PocketBase 0.22's built-in username of every auth collection (forms/record_upsert.go:
 * 3 to 150 characters of `^[\w][\w\.\-]*$`, unique, made up when none is given),
 * written as 0.23+ declares it: 0.23 has no built-in username, so its migration
 * declares this field and its unique index.
 */
const USERNAME_022 = { type: "text", required: true, min: 3, max: 150, pattern: "^[\\w][\\w\\.\\-]*$" };
/** 0.22's own unique index on that username (its name is 0.22's affair: `_<collection id>_username_idx`), as 0.23's migration declares it. */
const usernameIndex022 = (collection: string) => `CREATE UNIQUE INDEX \`idx_${collection}_username\` ON \`${collection}\` (\`username\`)`;

/** The steps of this change; everything before them is the schema the queue fields were added to. */
const QUEUE_STEPS_FROM = "1764460900";
const isQueueStep = (file: string) => file >= QUEUE_STEPS_FROM;
const RULES = ["listRule", "viewRule", "createRule", "updateRule", "deleteRule"];

interface Line {
  /** Runs the migrations (those `only` keeps) up in file order or down in reverse order. */
  run(direction: "up" | "down", only?: (file: string) => boolean): void;
  /** The collections as compared, by name. */
  shapes(): Record<string, Shape>;
  shape(name?: string): Shape | null;
  collection(name?: string): Record<string, unknown> | null;
  /** Raw SQL the migrations ran through the db/app (db.newQuery / app.db().newQuery), in order. */
  sql: string[];
}

function runner(migrations: Migration[], arg: () => unknown) {
  return (direction: "up" | "down", only: (file: string) => boolean = () => true) => {
    const ordered = (direction === "up" ? migrations : [...migrations].reverse()).filter((m) => only(m.file));
    for (const m of ordered) m[direction](arg());
  };
}

/** A dbx query builder's stand-in: newQuery(sql).execute() records the statement. */
function sqlRecorder(sql: string[]) {
  return {
    newQuery(statement: string) {
      return {
        execute() {
          sql.push(statement);
        },
      };
    },
  };
}

// ---- PocketBase 0.22: new Dao(db), collection.schema, SchemaField ------------------------

interface Collection022 {
  name: string;
  schema: { fields: Record<string, unknown>[] };
  indexes: string[];
  [rule: string]: unknown;
}

function migrations022(): Line {
  const store = new Map<string, Collection022>();
  const sql: string[] = [];
  let nextId = 0;
  class Schema {
    readonly fields: Record<string, unknown>[];
    constructor(fields: Record<string, unknown>[]) {
      this.fields = fields.map((f) => ({ ...f, id: `f${nextId++}` }));
    }
    getFieldByName(name: string) {
      return this.fields.find((f) => f["name"] === name) ?? null;
    }
    // Schema.AddField: a field with an existing id replaces that field in place.
    addField(field: Record<string, unknown>) {
      const at = field["id"] ? this.fields.findIndex((f) => f["id"] === field["id"]) : -1;
      if (at >= 0) this.fields[at] = { ...field };
      else this.fields.push({ ...field, id: field["id"] ?? `f${nextId++}` });
    }
    removeField(id: string) {
      this.fields.splice(this.fields.findIndex((f) => f["id"] === id), 1);
    }
  }
  class Dao {
    findCollectionByNameOrId(name: string): Collection022 {
      const found = store.get(name);
      if (found === undefined) throw new Error("sql: no rows in result set");
      return found;
    }
    saveCollection(collection: Collection022) {
      store.set(collection.name, collection);
    }
    deleteCollection(collection: Collection022) {
      store.delete(collection.name);
    }
  }
  const migrations = loadMigrations("pb_migrations", {
    Dao,
    Collection: function Collection(this: Collection022, data: Record<string, unknown>) {
      Object.assign(this, data, { schema: new Schema(data["schema"] as Record<string, unknown>[]) });
    },
    SchemaField: function SchemaField(this: object, data: object) {
      Object.assign(this, data);
    },
  });
  const shape = (c: Collection022): Shape => {
    const fields: Shape["fields"] = {};
    const indexes = [...c.indexes];
    // 0.22 gives every collection id, created and updated.
    fields["created"] = { type: "autodate", onCreate: true, onUpdate: false };
    fields["updated"] = { type: "autodate", onCreate: true, onUpdate: true };
    let auth: AuthShape | null = null;
    if (c["type"] === "auth") {
      const o = c["options"] as Record<string, unknown>;
      // 0.22 builds username and email into every auth collection (and a unique
      // index on username of its own); 0.23+ declares them. So they are compared
      // as 0.23 declares them: username by 0.22's fixed rule, email by the
      // collection's email options.
      fields["username"] = { ...USERNAME_022 };
      fields["email"] = {
        type: "email", required: o["requireEmail"] === true,
        exceptDomains: o["exceptEmailDomains"] ?? null, onlyDomains: o["onlyEmailDomains"] ?? null,
      };
      indexes.unshift(usernameIndex022(c.name));
      auth = {
        manageRule: o["manageRule"],
        passwordIdentities: [...(o["allowUsernameAuth"] === true ? ["username"] : []), ...(o["allowEmailAuth"] === true ? ["email"] : [])],
        oauth2: o["allowOAuth2Auth"] === true,
      };
    }
    for (const f of c.schema.fields) {
      const o = f["options"] as Record<string, unknown>;
      const required = f["required"] === true;
      switch (f["type"]) {
        case "text": fields[f["name"] as string] = {
          type: "text", required, min: o["min"] ?? 0, max: o["max"] === null ? NO_LIMIT : o["max"], pattern: o["pattern"] ?? "",
        }; break;
        case "date": fields[f["name"] as string] = { type: "date", required }; break;
        case "number": fields[f["name"] as string] = { type: "number", required, min: o["min"] ?? null, max: o["max"] ?? null, onlyInt: o["noDecimal"] }; break;
        case "bool": fields[f["name"] as string] = { type: "bool", required }; break;
        case "select": fields[f["name"] as string] = { type: "select", required, maxSelect: o["maxSelect"], values: [...(o["values"] as string[])] }; break;
        case "json": fields[f["name"] as string] = { type: "json", required, maxSize: o["maxSize"] }; break;
        default: throw new Error(`unexpected 0.22 field type ${String(f["type"])}`);
      }
    }
    return { type: String(c["type"]), fields, indexes, rules: RULES.map((r) => c[r]), auth };
  };
  const line: Line = {
    // The migration's db is the transaction's query builder.
    run: runner(migrations, () => sqlRecorder(sql)),
    shapes: () => Object.fromEntries([...store.values()].map((c) => [c.name, shape(c)])),
    shape: (name = "probe_jobs") => (store.has(name) ? shape(store.get(name)!) : null),
    collection: (name = "probe_jobs") => store.get(name) ?? null,
    sql,
  };
  return line;
}

// ---- PocketBase 0.23+: migrate((app) => ...), typed fields, addIndex ----------------------

interface Field023 {
  name: string;
  type(): string;
  [option: string]: unknown;
}

type Collection023 = Record<string, unknown> & { name: string; fields: FieldsList; indexes: string[] };

class FieldsList {
  constructor(readonly list: Field023[]) {}
  getByName(name: string) {
    return this.list.find((f) => f.name === name) ?? null;
  }
  // FieldsList.Add: a field without an id replaces the field of its name in place.
  add(f: Field023) {
    const at = this.list.findIndex((g) => g.name === f.name);
    if (at >= 0) this.list[at] = f;
    else this.list.push(f);
  }
  removeByName(name: string) {
    this.list.splice(this.list.findIndex((f) => f.name === name), 1);
  }
}

function migrations023(): Line {
  const store = new Map<string, Collection023>();
  const sql: string[] = [];
  const indexName = (index: string) => /INDEX `([^`]+)`/.exec(index)?.[1];
  /**
   * A field as PocketBase 0.23 exposes it: its options as properties, its type
   * as type(). A text field's max defaults to 0 (5000 characters); a number's
   * min/max to nil.
   */
  const field = (data: Record<string, unknown>, type = data["type"] as string): Field023 => {
    const { type: _type, ...options } = data;
    return Object.assign({ type: () => type }, type === "text" ? { max: 0 } : {}, options) as unknown as Field023;
  };
  const typed = (type: string) =>
    function TypedField(data: Record<string, unknown>) {
      return field(data, type);
    };
  const app = {
    findCollectionByNameOrId(name: string) {
      const found = store.get(name);
      if (found === undefined) throw new Error("sql: no rows in result set");
      return found;
    },
    save(collection: Collection023) {
      store.set(collection.name, collection);
    },
    delete(collection: Collection023) {
      store.delete(collection.name);
    },
    db: () => sqlRecorder(sql),
  };
  const migrations = loadMigrations("pb_migrations_0.23", {
    Collection: function Collection(this: Record<string, unknown>, data: Record<string, unknown>) {
      Object.assign(this, data, {
        fields: new FieldsList((data["fields"] as Record<string, unknown>[]).map((f) => field(f))),
        indexes: [...(data["indexes"] as string[])],
        getIndex(this: { indexes: string[] }, name: string) {
          return this.indexes.find((i) => indexName(i) === name) ?? "";
        },
        // Collection.AddIndex's text (core/collection_model.go).
        addIndex(this: { name: string; indexes: string[] }, name: string, unique: boolean, columns: string, where: string) {
          this.indexes = this.indexes.filter((i) => indexName(i) !== name);
          this.indexes.push(`CREATE ${unique ? "UNIQUE " : ""}INDEX \`${name}\` ON \`${this.name}\` (${columns})${where ? ` WHERE ${where}` : ""}`);
        },
        removeIndex(this: { indexes: string[] }, name: string) {
          this.indexes = this.indexes.filter((i) => indexName(i) !== name);
        },
      });
    },
    TextField: typed("text"),
    EmailField: typed("email"),
    NumberField: typed("number"),
    DateField: typed("date"),
    JSONField: typed("json"),
    BoolField: typed("bool"),
    SelectField: typed("select"),
  });
  const shape = (c: Collection023): Shape => {
    const fields: Shape["fields"] = {};
    // Only the declared fields: PocketBase adds an auth collection's id, password,
    // tokenKey, emailVisibility and verified itself (as 0.22 has them built in).
    for (const f of c.fields.list) {
      const required = f["required"] === true;
      switch (f.type()) {
        case "text": fields[f.name] = { type: "text", required, min: f["min"] ?? 0, max: f["max"], pattern: f["pattern"] ?? "" }; break;
        case "email": fields[f.name] = { type: "email", required, exceptDomains: f["exceptDomains"] ?? null, onlyDomains: f["onlyDomains"] ?? null }; break;
        case "date": fields[f.name] = { type: "date", required }; break;
        case "number": fields[f.name] = { type: "number", required, min: f["min"] ?? null, max: f["max"] ?? null, onlyInt: f["onlyInt"] }; break;
        case "bool": fields[f.name] = { type: "bool", required }; break;
        case "select": fields[f.name] = { type: "select", required, maxSelect: f["maxSelect"], values: [...(f["values"] as string[])] }; break;
        case "json": fields[f.name] = { type: "json", required, maxSize: f["maxSize"] }; break;
        case "autodate": fields[f.name] = { type: "autodate", onCreate: f["onCreate"], onUpdate: f["onUpdate"] }; break;
        // Built in on 0.22 (options.minPasswordLength); declared on 0.23+ for its minimum, compared in its own test.
        case "password": break;
        default: throw new Error(`unexpected 0.23 field type ${f.type()}`);
      }
    }
    const password = c["passwordAuth"] as { enabled: boolean; identityFields: string[] } | undefined;
    const auth: AuthShape | null = c["type"] !== "auth" ? null : {
      manageRule: c["manageRule"],
      passwordIdentities: password?.enabled === true ? [...password.identityFields] : [],
      oauth2: (c["oauth2"] as { enabled?: boolean } | undefined)?.enabled === true,
    };
    return { type: String(c["type"]), fields, indexes: [...c.indexes], rules: RULES.map((r) => c[r]), auth };
  };
  return {
    run: runner(migrations, () => app),
    shapes: () => Object.fromEntries([...store.values()].map((c) => [c.name, shape(c)])),
    shape: (name = "probe_jobs") => (store.has(name) ? shape(store.get(name)!) : null),
    collection: (name = "probe_jobs") => store.get(name) ?? null,
    sql,
  };
}

const lines = { "0.22": migrations022, "0.23": migrations023 };

const QUEUE_FIELDS = ["payload", "run_at", "priority", "attempts", "max_attempts", "last_error", "dead_lettered_at", "unique_key", "progress", "enqueue_index"];
const UNIQUE_KEY_INDEX =
  "CREATE UNIQUE INDEX `idx_probe_jobs_unique_key` ON `probe_jobs` (`unique_key`) " +
  "WHERE unique_key != '' AND status != 'done' AND status != 'failed' AND status != 'cancelled'";
const CLAIM_ORDER_INDEX =
  "CREATE INDEX `idx_probe_jobs_claim_order` ON `probe_jobs` (`status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)";
const BACKFILL = "UPDATE `probe_jobs` SET `run_at` = `created` WHERE `run_at` = '' OR `run_at` IS NULL";
const QUEUE_CLAIM_INDEX =
  "CREATE INDEX `idx_probe_jobs_queue_claim` ON `probe_jobs` (`queue`, `status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)";
const QUEUE_BACKFILL = "UPDATE `probe_jobs` SET `queue` = 'default' WHERE `queue` = '' OR `queue` IS NULL";
/** A text field without a length limit (0.22's max null; 0.23's max lifted to NO_LIMIT). */
const TEXT = (required: boolean) => ({ type: "text", required, min: 0, max: NO_LIMIT, pattern: "" });
/** The step that creates fleet_workers (worker identities). */
const WORKERS_STEP = "1764461101_created_fleet_workers.js";
const FINISHED_INDEX = "CREATE INDEX `idx_probe_jobs_finished` ON `probe_jobs` (`status`, `finished_at`) WHERE " + FINISHED_SQL;
const ORPHANED_INDEX =
  "CREATE INDEX `idx_probe_jobs_orphaned` ON `probe_jobs` (`consecutive_orphan_count`) WHERE " + ORPHANED_SQL;
/** Flow control's (docs/flow-control.md): a group's held and due counts, and the tick's start_by failures. */
const GROUP_INDEX = "CREATE INDEX `idx_probe_jobs_group` ON `probe_jobs` (`group_key`, `status`, `lease_expires_at`) WHERE group_key != ''";
const START_BY_INDEX = "CREATE INDEX `idx_probe_jobs_start_by` ON `probe_jobs` (`status`, `start_by`) WHERE start_by != ''";
const PENDING_GROUP_INDEX =
  "CREATE INDEX `idx_probe_jobs_pending_group` ON `probe_jobs` (`queue`, `group_key`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`) WHERE status = 'pending'";
/** The rate window's log: a plain table (src/lib/flow.ts FLOW_CLAIMS_TABLE), made and dropped by raw SQL. */
const FLOW_CLAIMS_SETUP = [
  "CREATE TABLE IF NOT EXISTS probe_flow_claims (scope TEXT NOT NULL, name TEXT NOT NULL, at INTEGER NOT NULL, expires INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_scope ON probe_flow_claims (scope, name, at)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_expires ON probe_flow_claims (expires)",
];
const FLOW_CLAIMS_TEARDOWN = "DROP TABLE IF EXISTS probe_flow_claims";
/** The step that adds flow control. */
const FLOW_STEP = "1764461200_added_flow_control.js";
/** A number field of 0 and up, integers only, no maximum. */
const COUNT = { type: "number", required: false, min: 0, max: null, onlyInt: true };

describe("the migrations of both PocketBase lines", () => {
  it("carry the same steps under the same file names, plus 0.23's lifts of the 5000-character text limit", () => {
    const names = (folder: string) => readdirSync(join(REPO, folder)).filter((f) => f.endsWith(".js")).sort();
    expect(names("pb_migrations_0.23")).toEqual(
      [...names("pb_migrations"), "1764460803_lifted_probe_jobs_text_limit.js", "1764460902_lifted_queue_text_limits.js"].sort(),
    );
  });

  // src/lib/job-schema.ts is what the code derives its columns from: a column
  // added to the schema and not to a line (or to a line and not to the schema,
  // or with another kind) fails here.
  for (const [name, make] of Object.entries(lines)) {
    it(`build probe_jobs with the schema's columns, each of its kind (${name})`, () => {
      const line = make();
      line.run("up");
      const kinds = Object.fromEntries(Object.entries(line.shape(JOBS_COLLECTION)!.fields).map(([column, f]) => [column, f["type"]]));
      expect(kinds).toEqual(Object.fromEntries(Object.entries(JOB_COLUMNS).map(([column, c]) => [column, c.kind])));
    });
  }

  // The client's JobRecord requires these and makes the rest optional (an old server answers without them).
  for (const [name, make] of Object.entries(lines)) {
    it(`create probe_jobs in their first step with FIRST_MIGRATION_COLUMNS (${name})`, () => {
      const line = make();
      line.run("up", (file) => file.startsWith("1764460800_"));
      expect(Object.keys(line.shape(JOBS_COLLECTION)!.fields).sort()).toEqual([...FIRST_MIGRATION_COLUMNS].sort());
    });
  }

  it("build the same collections: fields, options, indexes, superuser-only rules", () => {
    const [old, modern] = [migrations022(), migrations023()];
    old.run("up");
    modern.run("up");
    const expected = old.shapes();
    expect(Object.keys(expected).sort()).toEqual([WORKERS_COLLECTION, "probe_flow", "probe_job_events", "probe_jobs", "probe_schedules"]);
    expect(modern.shapes()).toEqual(expected);

    const jobs = expected["probe_jobs"]!;
    expect(jobs.type).toBe("base");
    expect(jobs.auth).toBeNull();
    expect(jobs.rules).toEqual([null, null, null, null, null]);
    expect(Object.keys(jobs.fields)).toEqual(expect.arrayContaining(["lease_token", "queue", ...QUEUE_FIELDS]));
    expect(jobs.fields["status"]!["values"]).toEqual(JOB_STATUSES);
    expect(jobs.fields["priority"]).toEqual({ type: "number", required: false, min: -1000, max: 1000, onlyInt: true });
    for (const name of ["attempts", "max_attempts", "enqueue_index"]) {
      expect(jobs.fields[name]).toEqual({ type: "number", required: false, min: 0, max: null, onlyInt: true });
    }
    for (const name of ["last_error", "unique_key", "queue", "group_key"]) expect(jobs.fields[name]).toEqual(TEXT(false));
    // Flow control's (docs/flow-control.md): 0 is no timeout, an empty start_by none.
    expect(jobs.fields["timeout_seconds"]).toEqual(COUNT);
    expect(jobs.fields["start_by"]).toEqual({ type: "date", required: false });
    for (const name of ["payload", "progress"]) expect(jobs.fields[name]).toEqual({ type: "json", required: false, maxSize: 2000000 });
    expect(jobs.indexes).toEqual([
      "CREATE INDEX `idx_probe_jobs_status_lease` ON `probe_jobs` (`status`, `lease_expires_at`)",
      "CREATE INDEX `idx_probe_jobs_probe_key` ON `probe_jobs` (`probe_key`)",
      "CREATE INDEX `idx_probe_jobs_status_key` ON `probe_jobs` (`status`, `probe_key`)",
      CLAIM_ORDER_INDEX,
      UNIQUE_KEY_INDEX,
      FINISHED_INDEX,
      ORPHANED_INDEX,
      QUEUE_CLAIM_INDEX,
      GROUP_INDEX,
      START_BY_INDEX,
      PENDING_GROUP_INDEX,
    ]);
    // PocketBase 0.22's index parser cuts a WHERE at its first parenthesis.
    for (const index of [UNIQUE_KEY_INDEX, GROUP_INDEX, START_BY_INDEX, PENDING_GROUP_INDEX]) expect(index.slice(index.indexOf("WHERE"))).not.toMatch(/[()]/);

    const events = expected["probe_job_events"]!;
    expect([events.type, events.auth]).toEqual(["base", null]);
    expect(events.rules).toEqual([null, null, null, null, null]);
    expect(events.indexes).toEqual(["CREATE INDEX `idx_probe_job_events_created` ON `probe_job_events` (`created`)"]);
    expect(Object.keys(events.fields).sort()).toEqual(["changes", "created", "source", "updated"]);
    expect(events.fields["changes"]).toEqual({ type: "json", required: false, maxSize: 2000000 });

    const schedules = expected["probe_schedules"]!;
    expect([schedules.type, schedules.auth]).toEqual(["base", null]);
    expect(schedules.rules).toEqual([null, null, null, null, null]);
    expect(schedules.indexes).toEqual(["CREATE UNIQUE INDEX `idx_probe_schedules_name` ON `probe_schedules` (`name`)"]);
    expect(schedules.fields).toEqual({
      created: { type: "autodate", onCreate: true, onUpdate: false },
      updated: { type: "autodate", onCreate: true, onUpdate: true },
      name: TEXT(true),
      probe_key: TEXT(true),
      cron: TEXT(true),
      payload: { type: "json", required: false, maxSize: 2000000 },
      priority: { type: "number", required: false, min: -1000, max: 1000, onlyInt: true },
      max_attempts: { type: "number", required: false, min: 0, max: null, onlyInt: true },
      enabled: { type: "bool", required: false },
      last_enqueued_for: { type: "date", required: false },
      // docs/flow-control.md: a schedule's queue and group ("": the default queue, no group).
      queue: TEXT(false),
      group_key: TEXT(false),
    });

    // Flow control's settings, one row per scope: admins (superusers) only, like probe_jobs.
    const flow = expected["probe_flow"]!;
    expect([flow.type, flow.auth]).toEqual(["base", null]);
    expect(flow.rules).toEqual([null, null, null, null, null]);
    expect(flow.indexes).toEqual([
      "CREATE UNIQUE INDEX `idx_probe_flow_scope` ON `probe_flow` (`scope`, `name`)",
      "CREATE INDEX `idx_probe_flow_parked` ON `probe_flow` (`parked_until`) WHERE parked_until != ''",
      "CREATE INDEX `idx_probe_flow_paused` ON `probe_flow` (`scope`, `name`) WHERE paused = 1",
    ]);
    expect(flow.fields).toEqual({
      created: { type: "autodate", onCreate: true, onUpdate: false },
      updated: { type: "autodate", onCreate: true, onUpdate: true },
      scope: TEXT(true),
      name: TEXT(true),
      paused: { type: "bool", required: false },
      concurrency: COUNT,
      rate_limit: COUNT,
      rate_period: COUNT,
      parked_until: { type: "date", required: false },
    });

    // Worker identities: admins (superusers) alone list, view, create, change
    // and delete them, and no identity manages another (manageRule null).
    const workers = expected[WORKERS_COLLECTION]!;
    expect(workers.type).toBe("auth");
    expect(workers.rules).toEqual([null, null, null, null, null]);
    expect(workers.auth).toEqual({ manageRule: null, passwordIdentities: ["username"], oauth2: false });
    expect(workers.indexes).toEqual(["CREATE UNIQUE INDEX `idx_fleet_workers_username` ON `fleet_workers` (`username`)"]);
    expect(workers.fields).toEqual({
      created: { type: "autodate", onCreate: true, onUpdate: false },
      updated: { type: "autodate", onCreate: true, onUpdate: true },
      username: USERNAME_022,
      email: { type: "email", required: false, exceptDomains: null, onlyDomains: null },
      [WORKER_FIELDS.queues]: { type: "json", required: false, maxSize: 65536 },
      [WORKER_FIELDS.canEnqueue]: { type: "bool", required: false },
      [WORKER_FIELDS.disabled]: { type: "bool", required: false },
      [WORKER_FIELDS.lastSeenAt]: { type: "date", required: false },
    });
    expect(WORKER_FIELDS.name).toBe("username");
  });

  it("give fleet_workers each line's own sign-in settings: a password by username, nothing else", () => {
    const [old, modern] = [migrations022(), migrations023()];
    old.run("up");
    modern.run("up");
    // 0.22: username and password only, no email needed, no verification (a machine has no mailbox).
    expect(old.collection(WORKERS_COLLECTION)!["options"]).toMatchObject({
      allowEmailAuth: false, allowOAuth2Auth: false, allowUsernameAuth: true, manageRule: null, onlyVerified: false, requireEmail: false,
    });
    // 0.23+: what 0.22 does not have is off (OTP, MFA, login alerts), and authRule
    // keeps a disabled identity from signing in or refreshing its token, which
    // 0.22 cannot (there, the hooks answer its every call 401).
    expect(modern.collection(WORKERS_COLLECTION)).toMatchObject({
      manageRule: null,
      authRule: "disabled = false",
      passwordAuth: { enabled: true, identityFields: ["username"] },
      oauth2: { enabled: false },
      otp: { enabled: false },
      mfa: { enabled: false },
      authAlert: { enabled: false },
    });
  });

  it("name identities by the rule identity.ts and the CLI check (WORKER_NAME_PATTERN): 0.22's username rule", () => {
    const rule = new RegExp(USERNAME_022.pattern);
    const byPocketBase = (name: string) => name.length >= USERNAME_022.min && name.length <= USERNAME_022.max && rule.test(name);
    for (const name of ["abc", "ab", "w_1", "w.1-a", "_x.", "a".repeat(150), "a".repeat(151), "-ab", ".ab", "a b", "ab/c", "é12", "AB9"]) {
      expect(WORKER_NAME_PATTERN.test(name), name).toBe(byPocketBase(name));
    }
  });

  // 0.22 requires 12-character passwords (options.minPasswordLength); 0.23's
  // migration declares the password field with the same minimum (PocketBase's
  // own would be 8).
  it("keep 0.22's minimum password length on 0.23+", () => {
    const [old, modern] = [migrations022(), migrations023()];
    old.run("up");
    modern.run("up");
    const declared = (modern.collection(WORKERS_COLLECTION)!["fields"] as FieldsList).getByName("password");
    // PocketBase 0.23 adds `password` with min 8 when the collection does not declare one.
    const min023 = declared === null ? 8 : declared["min"];
    expect(min023).toBe((old.collection(WORKERS_COLLECTION)!["options"] as Record<string, unknown>)["minPasswordLength"]);
  });

  it("run the same raw SQL: the due-time backfill, the job counts (src/lib/job-counts.ts word for word), the queue backfill, the rate window's table and the expired-lease index (src/lib/queries.ts word for word) up; each undone down", () => {
    const [old, modern] = [migrations022(), migrations023()];
    for (const line of [old, modern]) {
      line.run("up");
      line.run("down");
    }
    expect(old.sql).toEqual([
      BACKFILL, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD, QUEUE_BACKFILL, ...FLOW_CLAIMS_SETUP, UNREADABLE_LEASE_INDEX_SETUP,
      // Down, in reverse: the lease index, then the rate window's table; the queue field goes with its values (no statement).
      `DROP INDEX IF EXISTS ${UNREADABLE_LEASE_INDEX_NAME}`, FLOW_CLAIMS_TEARDOWN, ...JOB_COUNTS_TEARDOWN, "UPDATE `probe_jobs` SET `status` = 'failed' WHERE `status` = 'cancelled'",
    ]);
    expect(modern.sql).toEqual(old.sql);
  });

  for (const [name, make] of Object.entries(lines)) {
    it(`are idempotent (${name}): applied again, they leave the collections as they are`, () => {
      const line = make();
      line.run("up");
      const [jobs, schedules, workers] = [line.collection("probe_jobs"), line.collection("probe_schedules"), line.collection(WORKERS_COLLECTION)];
      const flow = line.collection("probe_flow");
      const shapes = line.shapes();
      line.run("up");
      expect(line.collection("probe_jobs")).toBe(jobs);
      expect(line.collection("probe_schedules")).toBe(schedules);
      // An existing probe_flow is not made again (its rows, the scopes' settings, stay).
      expect(flow).not.toBeNull();
      expect(line.collection("probe_flow")).toBe(flow);
      // An existing fleet_workers is never saved again (its records and any admin's changes stay).
      expect(line.collection(WORKERS_COLLECTION)).toBe(workers);
      expect(line.shapes()).toEqual(shapes);
    });

    it(`go down to nothing and up again to the same collections, twice (${name})`, () => {
      const line = make();
      line.run("up");
      const shapes = line.shapes();
      for (let round = 0; round < 2; round++) {
        line.run("down");
        expect(line.shapes()).toEqual({});
        line.run("up");
        expect(line.shapes()).toEqual(shapes);
      }
    });

    it(`undo only the queue steps when only they go down (${name})`, () => {
      const line = make();
      line.run("up", (file) => !isQueueStep(file));
      const before = line.shapes();
      line.run("up");
      const after = line.shapes();
      for (let round = 0; round < 2; round++) {
        line.run("down", isQueueStep);
        const undone = line.shapes();
        expect(Object.keys(undone)).toEqual(["probe_jobs"]);
        // Same fields and index set; the restored index comes back at the end.
        expect({ ...undone["probe_jobs"], indexes: [...undone["probe_jobs"]!.indexes].sort() }).toEqual({
          ...before["probe_jobs"],
          indexes: [...before["probe_jobs"]!.indexes].sort(),
        });
        line.run("up", isQueueStep);
        expect(line.shapes()).toEqual(after);
      }
    });

    it(`undo only worker identities when only their step goes down, and named queues with theirs (${name})`, () => {
      const line = make();
      line.run("up");
      const all = line.shapes();
      line.run("down", (file) => file === WORKERS_STEP);
      const { [WORKERS_COLLECTION]: _workers, ...others } = all;
      expect(line.shapes()).toEqual(others);
      line.run("down", (file) => file === "1764461100_added_probe_jobs_queue.js");
      const jobs = line.shape("probe_jobs")!;
      expect(jobs.fields["queue"]).toBeUndefined();
      expect(jobs.indexes).not.toContain(QUEUE_CLAIM_INDEX);
      expect(jobs).toEqual({
        ...all["probe_jobs"],
        fields: Object.fromEntries(Object.entries(all["probe_jobs"]!.fields).filter(([field]) => field !== "queue")),
        indexes: all["probe_jobs"]!.indexes.filter((index) => index !== QUEUE_CLAIM_INDEX),
      });
      line.run("up");
      // The same collections; the restored queue index comes back at the end (after flow control's).
      const sortedIndexes = (shapes: Record<string, Shape>) =>
        Object.fromEntries(Object.entries(shapes).map(([n, shape]) => [n, { ...shape, indexes: [...shape.indexes].sort() }]));
      expect(sortedIndexes(line.shapes())).toEqual(sortedIndexes(all));
      expect(line.shape("probe_jobs")!.indexes.at(-1)).toBe(QUEUE_CLAIM_INDEX);
    });

    it(`undo only flow control when only its step goes down: probe_flow, the new fields and indexes, the claims table (${name})`, () => {
      const line = make();
      line.run("up", (file) => file !== FLOW_STEP);
      const before = line.shapes();
      line.run("up");
      const all = line.shapes();
      expect(Object.keys(all).sort()).toEqual([...Object.keys(before), "probe_flow"].sort());
      const sqlBefore = line.sql.length;
      for (let round = 0; round < 2; round++) {
        line.run("down", (file) => file === FLOW_STEP);
        expect(line.shapes()).toEqual(before);
        line.run("up", (file) => file === FLOW_STEP);
        expect(line.shapes()).toEqual(all);
      }
      expect(line.sql.slice(sqlBefore)).toEqual([FLOW_CLAIMS_TEARDOWN, ...FLOW_CLAIMS_SETUP, FLOW_CLAIMS_TEARDOWN, ...FLOW_CLAIMS_SETUP]);
    });
  }

  it("lift the 5000-character default of text fields carried over by PocketBase's own 0.23 upgrade", () => {
    const modern = migrations023();
    modern.run("up");
    // What the upgrade makes of 0.22's `max: null`: 0, which 0.23+ reads as 5000.
    for (const collection of ["probe_jobs", "probe_schedules"]) {
      for (const f of (modern.collection(collection)!["fields"] as FieldsList).list) if (f.type() === "text" && f.name !== "id") f["max"] = 0;
    }
    modern.run("up");
    const max = (collection: string, field: string) =>
      (modern.collection(collection)!["fields"] as FieldsList).getByName(field)?.["max"];
    for (const name of ["probe_key", "claimed_by", "lease_token", "last_error", "unique_key"]) expect(max("probe_jobs", name)).toBe(NO_LIMIT);
    for (const name of ["name", "probe_key", "cron"]) expect(max("probe_schedules", name)).toBe(NO_LIMIT);
  });
});
