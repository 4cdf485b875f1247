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

/** Columns the rows' types hold as booleans (probe_flow.paused is a number there: 0/1, as the raw SQL writes it). */
const BOOLEAN_FIELDS: Record<string, readonly string[]> = {
  probe_schedules: ["enabled"],
  fleet_workers: ["can_enqueue", "disabled"],
};

export class SqlTables {
  readonly sql: SqliteDb;

  constructor(line: HooksLine) {
    this.sql = SqliteDb.openSync(line);
  }

  get line(): HooksLine {
    return this.sql.line;
  }

  #jsonColumns(table: string): Set<string> {
    return new Set([...this.sql.columnsOf(table)].filter(([, type]) => type === "JSON").map(([name]) => name));
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
    this.sql.db.run("SAVEPOINT fake_tx");
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.sql.db.run("ROLLBACK TO fake_tx");
      this.sql.db.run("RELEASE fake_tx");
      throw err;
    }
    this.sql.db.run("RELEASE fake_tx");
    return result;
  }
}
