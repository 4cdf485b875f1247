import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HOOKS_BUNDLES, OUTPUT } from "../../scripts/build/bundles.mjs";
import { CRONS, JOB_CREATE_HOOKS, ROUTES } from "../../src/handlers/routes";
import {
  checkSelfContained,
  HOOKS_API_GLOBALS,
  JS_BUILTINS,
  PB_LOADER_ONLY_GLOBALS,
  PB_MODERN_LOADER_ONLY_GLOBALS,
  PB_MODERN_RUNTIME_GLOBALS,
  PB_RUNTIME_GLOBALS,
} from "../../scripts/build/self-contained.mjs";

const REPO = join(import.meta.dirname, "..", "..");

const LEAKED = `function helper() { return 1; }
routerAdd("POST", "/api/leak", (c) => {
  return c.json(200, { n: helper() });
}, $apis.requireAdminAuth());
`;

const route = (body: string) => `routerAdd("GET", "/api/x", (c) => {\n${body}\n}, $apis.requireAdminAuth());\n`;

describe("checkSelfContained", { timeout: 20_000 }, () => {
  it.each(HOOKS_BUNDLES.map((b) => [b.api, b.output, b.jobCreateHook, b.accountRequestHooks] as const))("passes the committed %s bundle, with one handler per route, create hook, account request hook and cron", (api, output, createHook, accountHooks) => {
    const { violations, handlers } = checkSelfContained(readFileSync(output, "utf8"), api);
    expect(violations).toEqual([]);
    expect(handlers.map((h) => h.name)).toEqual([
      ...ROUTES.map((r) => `routerAdd(${JSON.stringify(r.method)}, ${JSON.stringify(r.path)})`),
      // Each API's own create hook on probe_jobs: onModelBeforeCreate (0.22), onRecordCreate (0.23+).
      ...JOB_CREATE_HOOKS.map(() => `${createHook}("probe_jobs")`),
      // PocketBase's own account requests of a worker identity, refused (routes.ts WORKER_ACCOUNT_HOOK).
      ...accountHooks.map((hook: string) => `${hook}("fleet_workers")`),
      ...CRONS.map((c) => `cronAdd(${JSON.stringify(c.id)})`),
    ]);
    for (const h of handlers) {
      expect(h.bytes).toBeGreaterThan(0);
      for (const id of h.freeIdentifiers) expect([...JS_BUILTINS, ...HOOKS_API_GLOBALS[api]!.runtime]).toContain(id);
    }
  });

  it.each<[string, string, string]>([
    ["Buffer (goja_nodejs's, enabled from 0.23)", "Buffer", "0.22"],
    ["$tokens (gone at 0.23)", "$tokens", "0.23"],
    ["Dao (gone at 0.23)", "Dao", "0.23"],
    ["Timezone (0.40 has it, 0.23 not)", "Timezone", "0.23"],
  ])("checks each bundle against its own API's globals: flags %s on %s", (_what, name, api) => {
    const source = route(`  ${name}.x;\n  return c.json(200, {});`);
    expect(checkSelfContained(source, api).violations).toEqual([
      expect.stringContaining(`"${name}" is not declared inside the handler and is not a JS builtin or a PocketBase ${api} runtime global`),
    ]);
    const other = api === "0.22" ? "0.23" : "0.22";
    if (name === "Buffer" || name === "$tokens" || name === "Dao") expect(checkSelfContained(source, other).violations).toEqual([]);
  });

  it("refuses an unknown hooks API", () => {
    expect(() => checkSelfContained(route("  return c.json(200, {});"), "0.9")).toThrow(/unknown hooks API "0.9"/);
  });

  it("names both the top-level helper and the handler's free identifier", () => {
    const { violations, handlers } = checkSelfContained(LEAKED);
    expect(violations).toHaveLength(2);
    expect(violations[0]).toMatch(/^top-level code other than a route, cron or hook registration \("function helper\(\)/);
    expect(violations[1]).toMatch(/^routerAdd\("POST", "\/api\/leak"\): "helper" is not declared inside the handler/);
    expect(handlers.map((h) => h.freeIdentifiers)).toEqual([["helper"]]);
  });

  it.each(["fetch", "setTimeout", "setImmediate", "Buffer", "structuredClone", "window"])("flags %s, which goja does not define", (name) => {
    const { violations } = checkSelfContained(route(`  ${name}("x");\n  return c.json(200, {});`));
    expect(violations).toEqual([expect.stringContaining(`"${name}" is not declared inside the handler`)]);
  });

  it("flags a loader-only registrar used inside a handler", () => {
    const { violations } = checkSelfContained(route(`  routerAdd("GET", "/late", () => {});`));
    expect(violations).toEqual([expect.stringContaining(`"routerAdd" is not declared inside the handler`)]);
  });

  it("accepts a handler that uses only its own declarations, PocketBase's globals and JS builtins", () => {
    const source =
      route(`  const data = $apis.requestInfo(c).data;
  function own(x) { return Math.max(1, Number(x)); }
  const rows = arrayOf(new Record());
  $app.dao().recordQuery("probe_jobs").andWhere($dbx.exp("1 = 1", {})).all(rows);
  return c.json(200, { n: own(JSON.stringify(data).length), t: new Date(Date.now()).toISOString(), k: Object.keys(rows) });`) +
      `cronAdd("job", (() => $os.getenv("X") || "* * * * *")(), () => { $app.logger().info("tick"); });\n`;
    const { violations, handlers } = checkSelfContained(source);
    expect(violations).toEqual([]);
    expect(handlers).toHaveLength(2);
  });

  it("lets the file's own registration arguments use loader globals, but not unknown names", () => {
    expect(checkSelfContained(`cronAdd("j", "* * * * *", () => {});`).violations).toEqual([]);
    expect(checkSelfContained(`cronAdd("j", schedule, () => {});`).violations).toEqual([
      expect.stringContaining(`"schedule" is not declared inside the registration`),
    ]);
  });

  it("flags a file without any handler", () => {
    expect(checkSelfContained("// nothing here\n").violations).toEqual(["no routerAdd/cronAdd handler found"]);
  });

  it("keeps the registrars out of the runtime globals and fetch/setTimeout out of the builtins", () => {
    for (const name of PB_LOADER_ONLY_GLOBALS) expect(PB_RUNTIME_GLOBALS).not.toContain(name);
    for (const name of PB_MODERN_LOADER_ONLY_GLOBALS) expect(PB_MODERN_RUNTIME_GLOBALS).not.toContain(name);
    for (const name of ["fetch", "setTimeout", "setInterval", "Buffer", "window"]) {
      expect(JS_BUILTINS).not.toContain(name);
      expect(PB_RUNTIME_GLOBALS).not.toContain(name);
    }
    for (const name of ["fetch", "setTimeout", "setInterval", "window"]) expect(PB_MODERN_RUNTIME_GLOBALS).not.toContain(name);
    for (const name of ["$app", "$apis", "$dbx", "$os", "$security", "arrayOf", "Record", "DynamicModel"]) {
      expect(PB_RUNTIME_GLOBALS).toContain(name);
      expect(PB_MODERN_RUNTIME_GLOBALS).toContain(name);
    }
  });
});

// Spawns node and parses 40 kB: allow for a loaded 2-core machine.
describe("scripts/check-self-contained.mjs", { timeout: 20_000 }, () => {
  // Each line registers three account request hooks (scripts/build/bundles.mjs accountRequestHooks).
  const HANDLERS = ROUTES.length + JOB_CREATE_HOOKS.length + HOOKS_BUNDLES[0]!.accountRequestHooks.length + CRONS.length;
  const dir = mkdtempSync(join(tmpdir(), "pb-fleet-check-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (file: string) =>
    spawnSync(process.execPath, [join(REPO, "scripts", "check-self-contained.mjs"), file], { cwd: REPO, encoding: "utf8" });

  it("exits 0 on the committed bundle", () => {
    const run = cli(OUTPUT);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`${HANDLERS} handlers, all self-contained (PocketBase hooks API 0.22)`);
  });

  it("checks every committed bundle against its own hooks API when given no file", () => {
    const run = spawnSync(process.execPath, [join(REPO, "scripts", "check-self-contained.mjs")], { cwd: REPO, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    for (const bundle of HOOKS_BUNDLES) {
      expect(run.stdout).toContain(`${relative(REPO, bundle.output)}: ${HANDLERS} handlers, all self-contained (PocketBase hooks API ${bundle.api})`);
    }
  });

  it("exits 2 on an unknown --api", () => {
    const run = spawnSync(process.execPath, [join(REPO, "scripts", "check-self-contained.mjs"), "--api", "0.9", OUTPUT], { cwd: REPO, encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`unknown hooks API "0.9"`);
  });

  it("exits 1 on a leaked helper, naming it", () => {
    const file = join(dir, "leaked.pb.js");
    writeFileSync(file, LEAKED);
    const run = cli(file);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`NOT SELF-CONTAINED: routerAdd("POST", "/api/leak"): "helper" is not declared`);
  });

  it("exits 2 with what to do when the file is missing", () => {
    const run = cli(join(dir, "missing.pb.js"));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/cannot read .*missing\.pb\.js.*npm run build/);
  });
});
