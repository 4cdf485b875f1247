/**
 * pb_migrations/ (PocketBase 0.22) and pb_migrations_0.23/ (0.23 to 0.40)
 * must build the same probe_jobs collection. Both sets run here in node:vm over
 * small stand-ins of each line's migration API (the calls the files make, as
 * PocketBase names them), up, down and up again; the collections they leave are
 * compared field by field. The files were also run on real binaries (0.22.21,
 * 0.23.12, 0.40.4: up, down, up), which this cannot replace.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";

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
  fields: Record<string, Record<string, unknown>>;
  indexes: string[];
  rules: unknown[];
}

// ---- PocketBase 0.22: new Dao(db), collection.schema, SchemaField ------------------------

interface Collection022 {
  name: string;
  schema: { fields: Record<string, unknown>[] };
  indexes: string[];
  [rule: string]: unknown;
}

function migrations022(): { run(direction: "up" | "down"): void; shape(): Shape | null } {
  const store: { collection: Collection022 | null } = { collection: null };
  class Schema {
    constructor(readonly fields: Record<string, unknown>[]) {}
    getFieldByName(name: string) {
      return this.fields.find((f) => f["name"] === name) ?? null;
    }
    addField(field: Record<string, unknown>) {
      this.fields.push({ ...field, id: `f${this.fields.length}` });
    }
    removeField(id: string) {
      this.fields.splice(this.fields.findIndex((f) => f["id"] === id), 1);
    }
  }
  class Dao {
    findCollectionByNameOrId(name: string): Collection022 {
      if (store.collection === null || store.collection.name !== name) throw new Error("sql: no rows in result set");
      return store.collection;
    }
    saveCollection(collection: Collection022) {
      store.collection = collection;
    }
    deleteCollection() {
      store.collection = null;
    }
  }
  const migrations = loadMigrations("pb_migrations", {
    Dao,
    Collection: function Collection(this: Collection022, data: Record<string, unknown>) {
      Object.assign(this, data, {
        schema: new Schema((data["schema"] as Record<string, unknown>[]).map((f, i) => ({ ...f, id: `f${i}` }))),
      });
    },
    SchemaField: function SchemaField(this: object, data: object) {
      Object.assign(this, data);
    },
  });
  return {
    run(direction) {
      const ordered = direction === "up" ? migrations : [...migrations].reverse();
      for (const m of ordered) m[direction]({});
    },
    shape() {
      const c = store.collection;
      if (c === null) return null;
      const fields: Shape["fields"] = {};
      // 0.22 gives every collection id, created and updated.
      fields["created"] = { type: "autodate", onCreate: true, onUpdate: false };
      fields["updated"] = { type: "autodate", onCreate: true, onUpdate: true };
      for (const f of c.schema.fields) {
        const o = f["options"] as Record<string, unknown>;
        const required = f["required"] === true;
        switch (f["type"]) {
          case "text": fields[f["name"] as string] = { type: "text", required, max: o["max"] === null ? NO_LIMIT : o["max"] }; break;
          case "date": fields[f["name"] as string] = { type: "date", required }; break;
          case "number": fields[f["name"] as string] = { type: "number", required, min: o["min"], onlyInt: o["noDecimal"] }; break;
          case "select": fields[f["name"] as string] = { type: "select", required, maxSelect: o["maxSelect"], values: o["values"] }; break;
          case "json": fields[f["name"] as string] = { type: "json", required, maxSize: o["maxSize"] }; break;
          default: throw new Error(`unexpected 0.22 field type ${String(f["type"])}`);
        }
      }
      return { fields, indexes: [...c.indexes], rules: ["listRule", "viewRule", "createRule", "updateRule", "deleteRule"].map((r) => c[r]) };
    },
  };
}

// ---- PocketBase 0.23+: migrate((app) => ...), typed fields, addIndex ----------------------

interface Field023 {
  name: string;
  type(): string;
  [option: string]: unknown;
}

function migrations023(): { run(direction: "up" | "down"): void; shape(): Shape | null; collection(): Record<string, unknown> | null } {
  const store: { collection: (Record<string, unknown> & { name: string; fields: FieldsList; indexes: string[] }) | null } = { collection: null };
  const indexName = (index: string) => /INDEX `([^`]+)`/.exec(index)?.[1];
  /** A field as PocketBase 0.23 exposes it: its options as properties, its type as type(). */
  const field = (data: Record<string, unknown>, type = data["type"] as string): Field023 => {
    const { type: _type, ...options } = data;
    return Object.assign({ type: () => type, max: 0 }, options) as unknown as Field023;
  };
  class FieldsList {
    constructor(readonly list: Field023[]) {}
    getByName(name: string) {
      return this.list.find((f) => f.name === name) ?? null;
    }
    add(f: Field023) {
      this.list.push(f);
    }
    removeByName(name: string) {
      this.list.splice(this.list.findIndex((f) => f.name === name), 1);
    }
  }
  const app = {
    findCollectionByNameOrId(name: string) {
      if (store.collection === null || store.collection.name !== name) throw new Error("sql: no rows in result set");
      return store.collection;
    },
    save(collection: NonNullable<typeof store.collection>) {
      store.collection = collection;
    },
    delete() {
      store.collection = null;
    },
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
          this.indexes.push(`CREATE ${unique ? "UNIQUE " : ""}INDEX \`${name}\` ON \`${this.name}\` (${columns})${where ? ` WHERE ${where}` : ""}`);
        },
        removeIndex(this: { indexes: string[] }, name: string) {
          this.indexes = this.indexes.filter((i) => indexName(i) !== name);
        },
      });
    },
    TextField: function TextField(data: Record<string, unknown>) {
      return field(data, "text");
    },
  });
  return {
    run(direction) {
      const ordered = direction === "up" ? migrations : [...migrations].reverse();
      for (const m of ordered) m[direction](app);
    },
    collection: () => store.collection,
    shape() {
      const c = store.collection;
      if (c === null) return null;
      const fields: Shape["fields"] = {};
      for (const f of c.fields.list) {
        const required = f["required"] === true;
        switch (f.type()) {
          case "text": fields[f.name] = { type: "text", required, max: f["max"] }; break;
          case "date": fields[f.name] = { type: "date", required }; break;
          case "number": fields[f.name] = { type: "number", required, min: f["min"], onlyInt: f["onlyInt"] }; break;
          case "select": fields[f.name] = { type: "select", required, maxSelect: f["maxSelect"], values: f["values"] }; break;
          case "json": fields[f.name] = { type: "json", required, maxSize: f["maxSize"] }; break;
          case "autodate": fields[f.name] = { type: "autodate", onCreate: f["onCreate"], onUpdate: f["onUpdate"] }; break;
          default: throw new Error(`unexpected 0.23 field type ${f.type()}`);
        }
      }
      return { fields, indexes: [...c.indexes], rules: ["listRule", "viewRule", "createRule", "updateRule", "deleteRule"].map((r) => c[r]) };
    },
  };
}

describe("the probe_jobs migrations of both PocketBase lines", () => {
  it("carry the same steps under the same file names, plus 0.23's lift of the 5000-character text limit", () => {
    const names = (folder: string) => readdirSync(join(REPO, folder)).filter((f) => f.endsWith(".js")).sort();
    expect(names("pb_migrations_0.23")).toEqual([...names("pb_migrations"), "1764460803_lifted_probe_jobs_text_limit.js"]);
  });

  it("build the same collection: fields, options, indexes, superuser-only rules", () => {
    const [old, modern] = [migrations022(), migrations023()];
    old.run("up");
    modern.run("up");
    const expected = old.shape();
    expect(expected).not.toBeNull();
    expect(modern.shape()).toEqual(expected);
    expect(expected!.rules).toEqual([null, null, null, null, null]);
    expect(Object.keys(expected!.fields)).toContain("lease_token");
    expect(expected!.indexes).toHaveLength(4);
  });

  it("are idempotent (0.23): applied again, they leave the collection as it is", () => {
    const modern = migrations023();
    modern.run("up");
    const first = modern.collection();
    const shape = modern.shape();
    modern.run("up");
    expect(modern.collection()).toBe(first);
    expect(modern.shape()).toEqual(shape);
  });

  it("go down to nothing and up again to the same collection (0.23)", () => {
    const modern = migrations023();
    modern.run("up");
    const shape = modern.shape();
    modern.run("down");
    expect(modern.shape()).toBeNull();
    modern.run("up");
    expect(modern.shape()).toEqual(shape);
  });

  it("lift the 5000-character default of a probe_jobs carried over by PocketBase's own 0.23 upgrade", () => {
    const modern = migrations023();
    modern.run("up");
    const fields = (modern.collection()!["fields"] as { list: Field023[] }).list;
    // What the upgrade makes of 0.22's `max: null`: 0, which 0.23+ reads as 5000.
    for (const f of fields) if (f.type() === "text" && f.name !== "id") f["max"] = 0;
    modern.run("up");
    for (const name of ["probe_key", "claimed_by", "lease_token"]) {
      expect(fields.find((f) => f.name === name)?.["max"]).toBe(NO_LIMIT);
    }
  });
});
