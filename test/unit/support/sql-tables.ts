/**
 * pb-fleet's tables in one sql.js database (./sqlite-db.ts, the schema of a
 * hooks line), read and written in the forms the unit tier's rows have: the
 * fake PocketBase (./fake-pocketbase.ts) and the pure tests' in-memory batch
 * (./rows.ts) keep their rows here, so every query src/lib builds runs as SQL
 * on SQLite, with the schema's own unique indexes and triggers.
 *
 * The forms: a JSON column's NULL reads as "" and its value as its JSON text
 * (PocketBase's JSON columns have NUMERIC affinity, so `123` comes back a
 * number: read back as text); the booleans the rows type as such
 * (BOOLEAN_FIELDS) read as true/false; every other column as stored.
 */
import { SqliteDb, type HooksLine, type SqliteRow } from "./sqlite-db";

type Params = Record<string, unknown>;

/**
 * One database per hooks line (per test file: each has its own module
 * registry), shared by every SqlTables of that line: a fresh database would
 * prepare src/lib's long statements again (about a ms each), which made the
 * bundle and claim-next files 3-6 times slower. The SqlTables that uses it
 * last holds it; the one it is taken from keeps its rows in memory (`saved`)
 * until it is used again. Tests never see the switch: each SqlTables reads
 * and writes its own rows, as if the database were its own.
 */
interface Shared {
  db: SqliteDb;
  owner: SqlTables | null;
  /** The tables, probe_jobs first: the tables its triggers write are put back after it. */
  tables: string[];
  /** Tables without a rowid (read back in their key's order, which is theirs anyway). */
  withoutRowid: Set<string>;
}
const shared = new Map<HooksLine, Shared>();
/** Each table's JSON columns (the same on both lines). */
const jsonColumns = new Map<string, Set<string>>();

function sharedOf(line: HooksLine): Shared {
  let s = shared.get(line);
  if (s === undefined) {
    const db = SqliteDb.openSync(line);
    const master = db.all("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const names = master.map((t) => String(t["name"]));
    s = {
      db,
      owner: null,
      tables: ["probe_jobs", ...names.filter((n) => n !== "probe_jobs")],
      withoutRowid: new Set(master.filter((t) => /WITHOUT ROWID/i.test(String(t["sql"]))).map((t) => String(t["name"]))),
    };
    shared.set(line, s);
  }
  return s;
}

/** Columns the rows' types hold as booleans (probe_flow.paused is a number there: 0/1, as the raw SQL writes it). */
const BOOLEAN_FIELDS: Record<string, readonly string[]> = {
  probe_schedules: ["enabled"],
  fleet_workers: ["can_enqueue", "disabled"],
};

export class SqlTables {
  readonly line: HooksLine;
  /** Its rows while another SqlTables holds the database (null: none saved, it is empty or holds it). */
  #saved: Map<string, SqliteRow[]> | null = null;
  #inTransaction = false;

  constructor(line: HooksLine) {
    this.line = line;
  }

  /** The line's database, holding this SqlTables' rows. */
  get sql(): SqliteDb {
    const s = sharedOf(this.line);
    if (s.owner !== this) this.#takeOver(s);
    return s.db;
  }

  #takeOver(s: Shared): void {
    const { db } = s;
    if (s.owner !== null) {
      if (s.owner.#inTransaction) throw new Error("sql-tables: another database used inside a transaction");
      s.owner.#saved = new Map(s.tables.map((t) => [t, db.all(`SELECT * FROM \`${t}\`${s.withoutRowid.has(t) ? "" : " ORDER BY rowid"}`)]));
    }
    db.clear();
    const saved = this.#saved;
    if (saved !== null) {
      // probe_jobs first, its triggers firing; each later table is emptied of what they wrote and gets its own rows back.
      for (const t of s.tables) {
        if (t !== "probe_jobs") db.execute(`DELETE FROM \`${t}\``);
        db.insert(t, saved.get(t) ?? []);
      }
      this.#saved = null;
    }
    s.owner = this;
  }

  #jsonColumns(table: string): Set<string> {
    let json = jsonColumns.get(table);
    if (json === undefined) {
      json = new Set([...this.sql.columnsOf(table)].filter(([, type]) => type === "JSON").map(([name]) => name));
      jsonColumns.set(table, json);
    }
    return json;
  }

  /** A stored row in the rows' forms (see the header). */
  read(table: string, row: SqliteRow): Record<string, unknown> {
    const json = this.#jsonColumns(table);
    const booleans = BOOLEAN_FIELDS[table] ?? [];
    const out: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      if (json.has(column)) out[column] = value === null ? "" : String(value);
      else if (booleans.includes(column)) out[column] = value === 1;
      else out[column] = value;
    }
    return out;
  }

  /** A table's rows (the columns named, or every one) in insertion order, in the rows' forms. */
  select(table: string, columns = "*", where = "", params: Params = {}): Record<string, unknown>[] {
    return this.sql.all(`SELECT ${columns} FROM \`${table}\`${where === "" ? "" : ` WHERE ${where}`} ORDER BY rowid`, params)
      .map((row) => this.read(table, row));
  }

  /** A row's stored values: a JSON column's "" is NULL; a column the table lacks throws (a fake's typo, not data). */
  #stored(table: string, row: object): Params {
    const columns = this.sql.columnsOf(table);
    const json = this.#jsonColumns(table);
    const out: Params = {};
    for (const [column, value] of Object.entries(row)) {
      if (value === undefined) continue;
      if (!columns.has(column)) throw new Error(`${table} has no column ${column}`);
      out[column] = json.has(column) && value === "" ? null : value;
    }
    return out;
  }

  insert(table: string, row: object): void {
    this.sql.insert(table, [this.#stored(table, row)]);
  }

  /** Sets the given columns of the row with this id; the rows changed (0 or 1). */
  update(table: string, id: string, fields: object): number {
    const values = this.#stored(table, fields);
    delete values["id"];
    const names = Object.keys(values);
    if (names.length === 0) return this.count(table, "id = {:id}", { id });
    const params: Params = { id };
    names.forEach((name, i) => {
      params[`v${i}`] = values[name];
    });
    const set = names.map((name, i) => `\`${name}\` = {:v${i}}`).join(", ");
    return this.sql.execute(`UPDATE \`${table}\` SET ${set} WHERE id = {:id}`, params);
  }

  count(table: string, where = "", params: Params = {}): number {
    const row = this.sql.one(`SELECT COUNT(*) AS n FROM \`${table}\`${where === "" ? "" : ` WHERE ${where}`}`, params);
    return Number(row?.["n"] ?? 0);
  }

  /**
   * A transaction as SQLite runs it (a savepoint, so it nests under nothing
   * else here): committed when `fn` returns, rolled back when it throws.
   */
  transaction<T>(fn: () => T): T {
    // Through the statement cache, as every other statement here.
    const db = this.sql;
    db.execute("SAVEPOINT fake_tx");
    this.#inTransaction = true;
    let result: T;
    try {
      result = fn();
    } catch (err) {
      db.execute("ROLLBACK TO fake_tx");
      db.execute("RELEASE fake_tx");
      throw err;
    } finally {
      this.#inTransaction = false;
    }
    db.execute("RELEASE fake_tx");
    return result;
  }
}
