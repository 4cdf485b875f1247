// Builds pb_hooks/fleet.pb.js: one self-contained closure per route and cron
// job of src/handlers/routes.ts. PocketBase 0.22 compiles each handler from its
// own text in a pooled runtime that never sees the file's top level, so each
// handler is bundled on its own (esbuild tree-shakes it down to what it uses)
// and the bundle becomes the body of the closure. Run: `npm run build`
// (`--check` only compares).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { checkSelfContained } from "./scripts/build/self-contained.mjs";

const root = dirname(fileURLToPath(import.meta.url));
export const OUTPUT = join(root, "pb_hooks", "fleet.pb.js");
/** The route and cron table lives beside the handlers; the build only reads it. */
const ROUTE_TABLE = join(root, "src", "handlers", "routes.ts");
/** The PocketBase-facing half of every route closure. */
const ADAPTER = "./src/adapter/pocketbase-0.22.ts";

const BANNER = `// GENERATED FILE - DO NOT EDIT.
// Built by esbuild.config.mjs from src/handlers, src/adapter and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase 0.22 runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.
`;

const CONTEXT_PARAM = "__context";

/** src/handlers/routes.ts's ROUTES and CRONS (compiled in memory: Node 20 cannot import TypeScript). */
export async function routeTable() {
  const result = await esbuild.build({ entryPoints: [ROUTE_TABLE], bundle: true, write: false, format: "esm", logLevel: "silent" });
  const url = "data:text/javascript;base64," + Buffer.from(result.outputFiles[0].text).toString("base64");
  const { ROUTES, CRONS } = await import(url);
  return { ROUTES, CRONS };
}

const handlerModule = (name) => JSON.stringify(`./src/handlers/${name}.ts`);

/**
 * An entry module, bundled alone with what it uses, as the body of a closure:
 * the text ends with `return <its default export>`.
 */
async function bundleEntry(contents) {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: "ts", sourcefile: "entry.ts" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    // goja implements ES5.1 plus most of ES2015+; lower everything newer
    // (optional catch binding, ??, ?.) rather than depend on its coverage.
    target: "es2017",
    treeShaking: true,
    legalComments: "none",
    charset: "utf8",
    logLevel: "silent",
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
 * every helper function of a bundle anew each time cost 7-10% of a claim's
 * CPU (measured). A fresh runtime still builds from the closure's own text, so
 * each handler stays self-contained; the key carries a hash of that text so a
 * changed bundle never meets a stale build.
 */
function builtOncePerRuntime(name, body) {
  const key = JSON.stringify(`pbFleet ${name} ${createHash("sha256").update(body).digest("hex").slice(0, 12)}`);
  return `return (globalThis[${key}] || (globalThis[${key}] = (() => {\n${body}\n})()))`;
}

/** A route: the adapter's serve() running the handler on the request's context. */
function routeEntry({ module, handler }) {
  return `import { serve } from ${JSON.stringify(ADAPTER)};\n` +
    `import { ${handler} } from ${handlerModule(module)};\n` +
    `export default function route(c: echo.Context): void { return serve(c, ${handler}); }\n`;
}

/** One exported function of a handler module, called with the closure's arguments. */
function functionEntry(module, name) {
  return `export { ${name} as default } from ${handlerModule(module)};`;
}

export async function buildHooks() {
  const { ROUTES, CRONS } = await routeTable();
  const parts = [BANNER];
  for (const route of ROUTES) {
    const body = await bundleEntry(routeEntry(route));
    parts.push(
      `routerAdd(${JSON.stringify(route.method)}, ${JSON.stringify(route.path)}, (${CONTEXT_PARAM}) => {\n` +
        `${builtOncePerRuntime(`${route.method} ${route.path}`, body)}(${CONTEXT_PARAM});\n}, $apis.requireAdminAuth());\n`,
    );
  }
  for (const cron of CRONS) {
    const schedule = `(() => {\n${await bundleEntry(functionEntry(cron.module, cron.schedule))}\n})()()`;
    const job = `return (() => {\n${await bundleEntry(functionEntry(cron.module, cron.job))}\n})()();`;
    parts.push(`cronAdd(${JSON.stringify(cron.id)}, ${schedule}, () => {\n${job}\n});\n`);
  }
  return parts.join("\n");
}

async function main() {
  const checkOnly = process.argv.includes("--check");
  const source = await buildHooks();
  const { violations, handlers } = checkSelfContained(source);
  if (violations.length > 0) {
    for (const v of violations) console.error(`NOT SELF-CONTAINED: ${v}`);
    process.exit(1);
  }
  if (checkOnly) {
    let committed = "";
    try { committed = readFileSync(OUTPUT, "utf8"); } catch { /* missing counts as stale */ }
    if (committed !== source) {
      console.error("pb_hooks/fleet.pb.js is not what src/ builds: run `npm run build` and commit the result.");
      process.exit(1);
    }
    console.log("pb_hooks/fleet.pb.js is up to date");
    return;
  }
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, source);
  for (const h of handlers) console.log(`  ${h.name}: ${h.bytes} bytes`);
  console.log(`wrote pb_hooks/fleet.pb.js (${Buffer.byteLength(source)} bytes, ${handlers.length} self-contained handlers)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
