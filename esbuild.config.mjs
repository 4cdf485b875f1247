// Builds pb_hooks/fleet.pb.js from src/handlers: one self-contained closure per
// route. PocketBase 0.22 compiles each handler from its own text in a pooled
// runtime that never sees the file's top level, so each handler is bundled on
// its own (esbuild tree-shakes it down to what it uses) and the bundle becomes
// the body of the closure. Run: `npm run build` (`--check` only compares).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { checkSelfContained } from "./scripts/lib/self-contained.mjs";

const root = dirname(fileURLToPath(import.meta.url));
export const OUTPUT = join(root, "pb_hooks", "fleet.pb.js");

/** Every route the bundle registers. All of them require an admin token. */
export const ROUTES = [
  { method: "POST", path: "/api/fleet/claim", module: "./src/handlers/claim.ts", handler: "handleClaim" },
  { method: "POST", path: "/api/fleet/renew", module: "./src/handlers/renew.ts", handler: "handleRenew" },
  { method: "POST", path: "/api/fleet/release", module: "./src/handlers/release.ts", handler: "handleRelease" },
  { method: "POST", path: "/api/fleet/claim-next", module: "./src/handlers/claim-next.ts", handler: "handleClaimNext" },
  { method: "POST", path: "/api/fleet/sweep", module: "./src/handlers/sweep.ts", handler: "handleSweep" },
  { method: "GET", path: "/api/fleet/stats", module: "./src/handlers/stats.ts", handler: "handleStats" },
];

/** Cron jobs (cronAdd ids); each schedule is read when PocketBase loads the file. */
export const CRONS = [
  {
    id: "pb-fleet-sweeper",
    schedule: { module: "./src/handlers/sweep.ts", handler: "scheduleFromEnv" },
    job: { module: "./src/handlers/sweep.ts", handler: "runScheduledSweep" },
  },
];

const BANNER = `// GENERATED FILE - DO NOT EDIT.
// Built by esbuild.config.mjs from src/handlers and src/lib (npm run build).
// Each handler below is self-contained on purpose: PocketBase 0.22 runs every
// handler from its own text in a pooled runtime that cannot see this file's
// top level, so helpers are repeated inside each closure.
`;

const CONTEXT_PARAM = "__context";

/** One exported function, bundled alone with what it uses, as the body of a closure that calls it. */
async function bundleFunction({ module, handler }, callArgs) {
  const result = await esbuild.build({
    stdin: { contents: `export { ${handler} as default } from ${JSON.stringify(module)};`, resolveDir: root, loader: "ts", sourcefile: "entry.ts" },
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
  if (!match) throw new Error(`esbuild output for ${module} has no default export line to turn into a call`);
  if (new RegExp(`\\b${CONTEXT_PARAM}\\b`).test(text)) throw new Error(`${module} uses the reserved name ${CONTEXT_PARAM}`);
  // Not re-indented: that would change the text inside multi-line template literals.
  return text.replace(exportLine, `return ${match[1]}(${callArgs});`).trim();
}

export async function buildHooks() {
  const parts = [BANNER];
  for (const route of ROUTES) {
    const body = await bundleFunction(route, CONTEXT_PARAM);
    parts.push(
      `routerAdd(${JSON.stringify(route.method)}, ${JSON.stringify(route.path)}, (${CONTEXT_PARAM}) => {\n${body}\n}, $apis.requireAdminAuth());\n`,
    );
  }
  for (const cron of CRONS) {
    const schedule = await bundleFunction(cron.schedule, "");
    const job = await bundleFunction(cron.job, "");
    parts.push(`cronAdd(${JSON.stringify(cron.id)}, (() => {\n${schedule}\n})(), () => {\n${job}\n});\n`);
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
