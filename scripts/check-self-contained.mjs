#!/usr/bin/env node
// Usage: node scripts/check-self-contained.mjs [--api 0.22|0.23] [hooks-file]
// Without a file: checks every bundle esbuild.config.mjs builds, each against
// its own PocketBase hooks API. A file is checked against --api, or else the
// API of the bundle at that path, or else 0.22. Exits 1 and names each
// identifier a handler uses but does not carry; 2 on bad usage or an unreadable file.
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { HOOKS_BUNDLES } from "./build/bundles.mjs";
import { checkSelfContained, HOOKS_API_GLOBALS } from "./build/self-contained.mjs";

const USAGE = "Usage: node scripts/check-self-contained.mjs [--api 0.22|0.23] [hooks-file]";

function usageError(message) {
  console.error(`check-self-contained: ${message}\n${USAGE}`);
  process.exit(2);
}

const args = process.argv.slice(2);
let api = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--api") {
    api = args[++i] ?? usageError("--api needs a value");
    if (!(api in HOOKS_API_GLOBALS)) usageError(`unknown hooks API ${JSON.stringify(api)} (one of ${Object.keys(HOOKS_API_GLOBALS).join(", ")})`);
  } else if (args[i].startsWith("--")) {
    usageError(`unknown option ${args[i]}`);
  } else {
    files.push(args[i]);
  }
}
if (files.length > 1) usageError("give at most one file");

/** The hooks API of the bundle esbuild.config.mjs writes at this path, if any. */
const apiOfPath = (file) => HOOKS_BUNDLES.find((b) => b.output === resolve(file))?.api;

const targets = files.length === 1
  ? [{ file: files[0], api: api ?? apiOfPath(files[0]) ?? "0.22" }]
  : HOOKS_BUNDLES.filter((b) => api === null || b.api === api).map((b) => ({ file: relative(process.cwd(), b.output), api: b.api }));

let failed = false;
for (const { file, api: targetApi } of targets) {
  let source;
  try {
    source = readFileSync(file, "utf8");
  } catch (err) {
    console.error(`check-self-contained: cannot read ${file} (${err.code ?? err.message}). Run \`npm run build\` first, or pass the hooks file to check.`);
    process.exit(2);
  }
  const { violations, handlers } = checkSelfContained(source, targetApi);
  for (const h of handlers) console.log(`${h.name}: ${h.bytes} bytes, uses ${h.freeIdentifiers.join(" ") || "no globals"}`);
  if (violations.length > 0) {
    for (const v of violations) console.error(`NOT SELF-CONTAINED: ${v}`);
    failed = true;
    continue;
  }
  console.log(`${file}: ${handlers.length} handlers, all self-contained (PocketBase hooks API ${targetApi})`);
}
if (failed) process.exit(1);
