// pb-fleet-enqueue.js, the module an app's hooks require to enqueue in their
// own transaction (scripts/build/enqueue-module.mjs): committed as built, free
// of `$app`, and refusing bad input or a handle outside a transaction before it
// touches the handle. Its behaviour on PocketBase itself is
// test/integration/enqueue-in-app-transaction.test.ts.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { HOOKS_BUNDLES } from "../../scripts/build/bundles.mjs";
import { buildEnqueueModule, enqueueModuleViolations } from "../../scripts/build/enqueue-module.mjs";
import { validateEnqueueRequest } from "../../src/lib/validate";

const REPO = new URL("../..", import.meta.url).pathname;

/** The committed module evaluated as goja_nodejs's require would: a script given `module` and `exports`. */
function loadModule(text: string): { enqueue(tx: unknown, items: unknown): unknown } {
  const module = { exports: {} as Record<string, unknown> };
  vm.runInNewContext(text, { module, exports: module.exports });
  return module.exports as unknown as { enqueue(tx: unknown, items: unknown): unknown };
}

/** A handle any use of which fails the test: the refusals must come before the handle is touched. */
const UNTOUCHABLE = new Proxy({}, {
  get(_target, name) {
    throw new Error(`the handle was used (${String(name)}) before the input was validated`);
  },
});

describe.each(HOOKS_BUNDLES.map((bundle) => ({ bundle, name: relative(REPO, bundle.enqueueModule) })))("$name", { timeout: 20_000 }, ({ bundle, name }) => {
  const committed = readFileSync(bundle.enqueueModule, "utf8");

  it("is exactly what src/ builds, with the GENERATED banner (run `npm run build` after changing src/)", async () => {
    expect((await buildEnqueueModule(bundle)) === committed, `${name} is stale: run \`npm run build\``).toBe(true);
    expect(committed.startsWith(`// GENERATED FILE - DO NOT EDIT. For ${bundle.pocketbase}.`)).toBe(true);
  });

  it("reads no $app and nothing the line's runtime lacks", () => {
    expect(enqueueModuleViolations(committed, bundle.api)).toEqual([]);
  });

  it("exports enqueue, which throws the endpoint's 400 message for bad input without touching the handle", () => {
    const fleet = loadModule(committed);
    expect(Object.keys(fleet)).toEqual(["enqueue"]);
    const badInputs: unknown[] = [undefined, [], {}, [{ probeKey: "a" }, { probeKey: "" }], [{ probeKey: "a", priority: 2000 }]];
    for (const items of badInputs) {
      const expected = validateEnqueueRequest({ jobs: items }, Date.now());
      expect(expected.ok).toBe(false);
      expect(() => fleet.enqueue(UNTOUCHABLE, items)).toThrow(new Error((expected as { error: string }).error));
    }
  });

  it("refuses a handle that is not inside a transaction, naming what to pass", () => {
    const fleet = loadModule(committed);
    const outside = bundle.api === "0.22"
      ? { nonconcurrentDB: () => ({ begin() {} }) } // a dao over the *dbx.DB pool: no commit()
      : { isTransactional: () => false };
    for (const handle of [outside, null, undefined, {}]) {
      expect(() => fleet.enqueue(handle, [{ probeKey: "a" }])).toThrow(/^pb-fleet enqueue: the handle passed is not inside a transaction/);
    }
    expect(() => fleet.enqueue(null, [{ probeKey: "a" }])).toThrow(bundle.api === "0.22" ? /runInTransaction\(\(txDao\)/ : /runInTransaction\(\(txApp\)/);
  });
});

describe("enqueueModuleViolations", () => {
  it("names $app, and globals neither JS nor PocketBase defines; a module's own top-level names are not globals", () => {
    const text = "var helper = 1; function f() { return helper + $app.dao() + notDefinedAnywhere + Record + module.exports; }";
    expect(enqueueModuleViolations(text, "0.22")).toEqual([
      "reads $app: inside the app's transaction only the handle it was given may be used",
      'reads "notDefinedAnywhere", which is neither a JS builtin nor a PocketBase 0.22 runtime global',
    ]);
    // 0.23+ has no SchemaField global.
    expect(enqueueModuleViolations("SchemaField();", "0.23")).toEqual([
      'reads "SchemaField", which is neither a JS builtin nor a PocketBase 0.23 runtime global',
    ]);
  });
});
