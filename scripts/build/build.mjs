// Builds one hooks bundle per PocketBase hooks API from the same handlers:
// pb_hooks/fleet.pb.js for PocketBase 0.22, pb_hooks_0.23/fleet.pb.js for 0.23
// to 0.40. Each is one self-contained closure per route and cron job of
// src/handlers/routes.ts: PocketBase compiles each handler from its own text in
// a pooled runtime that never sees the file's top level, so each handler is
// bundled on its own (esbuild tree-shakes it down to what it uses) and the
// bundle becomes the body of the closure. Handlers import their adapter as
// `@pb-fleet/adapter`; the bundle's tsconfig maps that to the adapter of its
// API, for esbuild as for tsc. Also writes pb-fleet-enqueue.js beside each
// bundle (enqueue-module.mjs), the dashboard and openapi.json.
// The bundles are listed in bundles.mjs; esbuild.config.mjs (`npm run build`,
// `--check` only compares) calls build().
import { createHash } from "node:crypto";
import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import * as esbuild from "esbuild";
import { HOOKS_BUNDLES, root } from "./bundles.mjs";
import { checkSelfContained } from "./self-contained.mjs";
import { committedIsStale } from "./committed.mjs";
import { buildOrCheckDashboard } from "./dashboard.mjs";
import { buildOrCheckEnqueueModules } from "./enqueue-module.mjs";
import { GOJA_ESBUILD_OPTIONS } from "./goja-options.mjs";
import { buildOrCheckOpenApi } from "./openapi.mjs";

/** The route and cron table lives beside the handlers; the build only reads it. */
const ROUTE_TABLE = join(root, "src", "handlers", "routes.ts");
/** How handlers (and the route entries below) import the adapter the bundle's tsconfig picks. */
const ADAPTER = "@pb-fleet/adapter";

function banner(bundle) {
  return `// GENERATED FILE - DO NOT EDIT. For ${bundle.pocketbase}.
// Built by esbuild.config.mjs from src/handlers, src/adapter and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.
`;
}

const CONTEXT_PARAM = "__context";

/** src/handlers/routes.ts's ROUTES, CRONS and JOB_CREATE_HOOKS (compiled in memory: Node 20 cannot import TypeScript). */
export async function routeTable() {
  const result = await esbuild.build({ entryPoints: [ROUTE_TABLE], bundle: true, write: false, format: "esm", logLevel: "silent" });
  const url = "data:text/javascript;base64," + Buffer.from(result.outputFiles[0].text).toString("base64");
  const { ROUTES, CRONS, JOB_CREATE_HOOKS, WORKER_ACCOUNT_HOOK } = await import(url);
  return { ROUTES, CRONS, JOB_CREATE_HOOKS, WORKER_ACCOUNT_HOOK };
}

/** Where a route table's modules are, relative to the root: src/handlers for the bundles (a test's table names its own). */
const HANDLERS_DIR = "src/handlers";
const handlerModule = (name, dir = HANDLERS_DIR) => JSON.stringify(`./${dir}/${name}.ts`);

/** An entry module, bundled alone with what it uses, as the body of a closure that calls its default export. */
async function bundleEntry(bundle, contents) {
  const result = await esbuild.build({
    ...GOJA_ESBUILD_OPTIONS,
    stdin: { contents, resolveDir: root, loader: "ts", sourcefile: "entry.ts" },
    format: "esm",
    // Its `paths` resolve @pb-fleet/adapter to this bundle's adapter.
    tsconfig: bundle.tsconfig,
  });
  const text = result.outputFiles[0].text;
  const exportLine = /^export\s*\{\s*([\w$]+) as default\s*\};\s*$/m;
  const match = exportLine.exec(text);
  if (!match) throw new Error(`esbuild output for ${contents} has no default export line to turn into a call`);
  if (new RegExp(`\\b${CONTEXT_PARAM}\\b`).test(text)) throw new Error(`${contents} uses the reserved name ${CONTEXT_PARAM}`);
  // Not re-indented: that would change the text inside multi-line template literals.
  return text.replace(exportLine, `return ${match[1]};`).trim();
}

/**
 * A route's closure body: the bundle builds the route's function, kept in the
 * pooled runtime's globalThis and reused by the requests that runtime serves
 * after. PocketBase runs the closure text on every request, and building
 * every helper function of a bundle anew each time cost 5-8% of a renew's CPU
 * (measured on 0.22). A fresh runtime still builds from the closure's own text,
 * so each handler stays self-contained; the key carries a hash of that text so
 * a changed bundle never meets a stale build.
 */
function builtOncePerRuntime(name, body) {
  const key = JSON.stringify(`pbFleet ${name} ${createHash("sha256").update(body).digest("hex").slice(0, 12)}`);
  return `return (globalThis[${key}] || (globalThis[${key}] = (() => {\n${body}\n})()))`;
}

/** A route: the adapter's serve() running the handler on the request's context (echo.Context or core.RequestEvent). */
function routeEntry({ module, handler, access }, handlersDir) {
  return `import { serve } from ${JSON.stringify(ADAPTER)};\n` +
    `import { ${handler} } from ${handlerModule(module, handlersDir)};\n` +
    `export default function route(context: Parameters<typeof serve>[0]): void { return serve(context, ${handler}, ${JSON.stringify(access)}); }\n`;
}

/** One exported function of a handler module. */
function functionEntry(module, name) {
  return `export { ${name} as default } from ${handlerModule(module)};`;
}

/**
 * The routerAdd calls of a route table (RouteEntry of src/handlers/routes.ts,
 * modules in `handlersDir`), each route a self-contained closure with the
 * bundle's middlewares: what buildHooks writes for ROUTES, and what a test
 * builds for routes of its own (test/integration/support/adapter-conformance).
 */
export async function buildRoutes(bundle, routes, handlersDir = HANDLERS_DIR) {
  const built = [];
  for (const m of bundle.builtMiddlewares ?? []) {
    const fn = await bundleEntry(bundle, `export { ${m.export} as default } from ${JSON.stringify(ADAPTER)};`);
    // Called with the route's access too: who may call decides before the 413, as in serve.
    built.push((route) => `new Middleware((${CONTEXT_PARAM}) => {\nreturn (() => {\n${fn}\n})()(${CONTEXT_PARAM}, ${JSON.stringify(route.access)});\n}, ${m.priority}, ${JSON.stringify(m.id)})`);
  }
  const parts = [];
  for (const route of routes) {
    const middlewares = built.map((m) => m(route)).concat(bundle.routeMiddlewares).map((m) => `, ${m}`).join("");
    const body = builtOncePerRuntime(`${route.method} ${route.path}`, await bundleEntry(bundle, routeEntry(route, handlersDir)));
    parts.push(
      `routerAdd(${JSON.stringify(route.method)}, ${JSON.stringify(route.path)}, (${CONTEXT_PARAM}) => {\n${body}(${CONTEXT_PARAM});\n}${middlewares});\n`,
    );
  }
  return parts;
}

/** The hooks file of one bundle (HOOKS_BUNDLES; the 0.22 one by default). */
export async function buildHooks(bundle = HOOKS_BUNDLES[0]) {
  const { ROUTES, CRONS, JOB_CREATE_HOOKS, WORKER_ACCOUNT_HOOK } = await routeTable();
  const parts = [banner(bundle), ...await buildRoutes(bundle, ROUTES)];
  for (const hook of JOB_CREATE_HOOKS) {
    const body = builtOncePerRuntime(`${bundle.jobCreateHook} ${hook.module}`,
      await bundleEntry(bundle, functionEntry(hook.module, hook.handler)));
    parts.push(`${bundle.jobCreateHook}((${CONTEXT_PARAM}) => {\n${body}(${CONTEXT_PARAM});\n}, "probe_jobs");\n`);
  }
  for (const registrar of bundle.accountRequestHooks) {
    const { module, handler, collection } = WORKER_ACCOUNT_HOOK;
    const body = builtOncePerRuntime(`${registrar} ${module}`, await bundleEntry(bundle, functionEntry(module, handler)));
    parts.push(`${registrar}((${CONTEXT_PARAM}) => {\n${body}(${CONTEXT_PARAM});\n}, ${JSON.stringify(collection)});\n`);
  }
  for (const cron of CRONS) {
    const schedule = `(() => {\n${await bundleEntry(bundle, functionEntry(cron.module, cron.schedule))}\n})()()`;
    const job = `return (() => {\n${await bundleEntry(bundle, functionEntry(cron.module, cron.job))}\n})()();`;
    parts.push(`cronAdd(${JSON.stringify(cron.id)}, ${schedule}, () => {\n${job}\n});\n`);
  }
  return parts.join("\n");
}

/**
 * Builds (or with `checkOnly`, only compares) every bundle, the enqueue modules,
 * the dashboard and openapi.json; the process's exit code: 0, or 1 when a
 * bundle is not self-contained or (check only) something committed is stale.
 */
export async function build({ checkOnly = false } = {}) {
  let stale = false;
  for (const bundle of HOOKS_BUNDLES) {
    const name = relative(root, bundle.output);
    const source = await buildHooks(bundle);
    const { violations, handlers } = checkSelfContained(source, bundle.api);
    if (violations.length > 0) {
      for (const v of violations) console.error(`NOT SELF-CONTAINED (${name}): ${v}`);
      return 1;
    }
    if (checkOnly) {
      if (committedIsStale(bundle.output, source, "src/")) stale = true;
      continue;
    }
    mkdirSync(dirname(bundle.output), { recursive: true });
    writeFileSync(bundle.output, source);
    for (const h of handlers) console.log(`  ${h.name}: ${h.bytes} bytes`);
    console.log(`wrote ${name} for ${bundle.pocketbase} (${Buffer.byteLength(source)} bytes, ${handlers.length} self-contained handlers)`);
  }
  // pb-fleet-enqueue.js beside each bundle, for enqueueing in an app's own transaction: see scripts/build/enqueue-module.mjs.
  if (await buildOrCheckEnqueueModules(HOOKS_BUNDLES, checkOnly)) stale = true;
  // The dashboard page (pb_public/fleet/), built like the bundles: see scripts/build/dashboard.mjs.
  if (await buildOrCheckDashboard(checkOnly)) stale = true;
  // openapi.json, the document GET /api/fleet/openapi.json answers: see scripts/build/openapi.mjs.
  if (await buildOrCheckOpenApi(checkOnly)) stale = true;
  return stale ? 1 : 0;
}
