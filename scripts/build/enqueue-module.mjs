// Writes pb-fleet-enqueue.js next to each hooks bundle: the CommonJS module an
// app's own hooks load with require(`${__hooks}/pb-fleet-enqueue.js`) to enqueue
// inside their transaction (src/handlers/enqueue-in-transaction.ts, with the
// line's adapter). Unlike a handler it runs as a module, so it may keep helpers
// at its top level; what it may not do is reach `$app`, which inside the app's
// transaction would write outside it or wait for the writer it holds.
// esbuild.config.mjs calls this (`--check` only compares).
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import * as acorn from "acorn";
import * as eslintScope from "eslint-scope";
import * as esbuild from "esbuild";
import { root } from "./bundles.mjs";
import { committedIsStale } from "./committed.mjs";
import { GOJA_ESBUILD_OPTIONS } from "./goja-options.mjs";
import { HOOKS_API_GLOBALS, JS_BUILTINS } from "./self-contained.mjs";

const ENTRY = join(root, "src", "handlers", "enqueue-in-transaction.ts");
/** What goja_nodejs's require gives every module besides the runtime's globals. */
const MODULE_SCOPE = ["module", "exports"];
/** Globals the module must not read (see the file comment). */
const FORBIDDEN = ["$app"];

function banner(bundle) {
  return `// GENERATED FILE - DO NOT EDIT. For ${bundle.pocketbase}.
// Built by esbuild.config.mjs from src/handlers/enqueue-in-transaction.ts, src/adapter and src/lib (npm run build).
// Not loaded by PocketBase on its own (not *.pb.js): an app's hook loads it with
//   const fleet = require(\`\${__hooks}/pb-fleet-enqueue.js\`);
// and calls fleet.enqueue(tx, items) inside its transaction (docs/enqueue-in-transaction.md).
`;
}

/** The module's text for one bundle of scripts/build/bundles.mjs's HOOKS_BUNDLES (it has `tsconfig`, `api`, `pocketbase`). */
export async function buildEnqueueModule(bundle) {
  const result = await esbuild.build({
    ...GOJA_ESBUILD_OPTIONS,
    entryPoints: [ENTRY],
    format: "cjs",
    // Resolves @pb-fleet/adapter to the line's adapter, as for the bundle.
    tsconfig: bundle.tsconfig,
  });
  return banner(bundle) + result.outputFiles[0].text;
}

/** Sentences for each global the module reads that it must not, or that the line's runtime lacks. */
export function enqueueModuleViolations(source, api) {
  const allowed = new Set([...JS_BUILTINS, ...HOOKS_API_GLOBALS[api].runtime, ...MODULE_SCOPE]);
  const ast = acorn.parse(source, { ecmaVersion: 2022, sourceType: "script", ranges: true });
  const scopes = eslintScope.analyze(ast, { ecmaVersion: 2022, sourceType: "script" });
  // A script's top-level declarations are the global scope's own: only what it does not declare is read from outside.
  const declared = new Set(scopes.globalScope.variables.map((v) => v.name));
  const free = [...new Set(scopes.globalScope.through.map((ref) => ref.identifier.name))].filter((name) => !declared.has(name)).sort();
  return free.flatMap((name) => {
    if (FORBIDDEN.includes(name)) return [`reads ${name}: inside the app's transaction only the handle it was given may be used`];
    if (!allowed.has(name)) return [`reads "${name}", which is neither a JS builtin nor a PocketBase ${api} runtime global`];
    return [];
  });
}

/** `node esbuild.config.mjs [--check]`'s pb-fleet-enqueue.js part, for every bundle; true when a committed module is stale (check only). */
export async function buildOrCheckEnqueueModules(bundles, checkOnly) {
  let stale = false;
  for (const bundle of bundles) {
    const name = relative(root, bundle.enqueueModule);
    const text = await buildEnqueueModule(bundle);
    const violations = enqueueModuleViolations(text, bundle.api);
    if (violations.length > 0) throw new Error(`${name}: ${violations.join("; ")}`);
    if (checkOnly) {
      if (committedIsStale(bundle.enqueueModule, text, "src/handlers/enqueue-in-transaction.ts")) stale = true;
      continue;
    }
    writeFileSync(bundle.enqueueModule, text);
    console.log(`wrote ${name} for ${bundle.pocketbase} (the in-transaction enqueue module, ${Buffer.byteLength(text)} bytes)`);
  }
  return stale;
}
