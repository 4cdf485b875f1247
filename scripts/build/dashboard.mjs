// Builds the fleet dashboard (src/dashboard) into pb_public/fleet/, the page
// PocketBase serves at /fleet/ from its public dir. The output is committed,
// like the hooks bundles, so `npx pb-fleet install` and the Docker image need
// no build step; esbuild.config.mjs writes it (`--check` only compares).
//
// Files: index.html, dashboard.js, dashboard.css, and one SDK file per
// PocketBase line (sdk-0.22.js: pocketbase@0.21; sdk-0.23.js: pocketbase@0.28),
// of which the page loads only its server's. Names stay fixed so an install
// over an older one leaves nothing behind; each reference carries a content
// hash (`?v=`), so a browser never mixes a cached old file with a new one.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import * as esbuild from "esbuild";

import { root } from "./bundles.mjs";
const SOURCE = join(root, "src", "dashboard");
/** Where the page is written: PocketBase's public dir layout, served at /fleet/. */
export const DASHBOARD_OUTPUT = join(root, "pb_public", "fleet");
/** The folder to pass as PocketBase's --publicDir (npm start) or to copy into <pb_dir>/pb_public (install). */
export const PUBLIC_DIR = dirname(DASHBOARD_OUTPUT);

const BANNER = "GENERATED FILE - DO NOT EDIT. Built by esbuild.config.mjs from src/dashboard (npm run build).";

const hashOf = (text) => createHash("sha256").update(text).digest("hex").slice(0, 10);

async function bundle(entry, define = {}) {
  const result = await esbuild.build({
    entryPoints: [join(SOURCE, entry)],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome109", "firefox115", "safari16"],
    minify: true,
    define,
    banner: { js: `/* ${BANNER} */`, css: `/* ${BANNER} */` },
    charset: "utf8",
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/** Every file of the page: name -> content. */
export async function buildDashboard() {
  const files = new Map();
  const sdkFiles = {};
  for (const line of ["0.22", "0.23"]) {
    const name = `sdk-${line}.js`;
    const text = await bundle(name.replace(/\.js$/, ".ts"));
    files.set(name, text);
    sdkFiles[line] = `${name}?v=${hashOf(text)}`;
  }
  const script = await bundle("main.ts", { PB_FLEET_SDK_FILES: JSON.stringify(sdkFiles) });
  files.set("dashboard.js", script);
  const styles = await bundle("styles.css");
  files.set("dashboard.css", styles);
  const template = readFileSync(join(SOURCE, "index.html"), "utf8");
  const html = template
    .replace(/^<!doctype html>\n/i, (doctype) => `${doctype}<!-- ${BANNER} -->\n`)
    .replace('href="dashboard.css"', `href="dashboard.css?v=${hashOf(styles)}"`)
    .replace('src="dashboard.js"', `src="dashboard.js?v=${hashOf(script)}"`);
  if (!html.includes(BANNER) || !html.includes("dashboard.js?v=") || !html.includes("dashboard.css?v=")) {
    throw new Error("src/dashboard/index.html lost its doctype line or its dashboard.js/dashboard.css references");
  }
  files.set("index.html", html);
  return files;
}

/** Names of committed files that differ from the build, are missing, or are left over. */
export function staleDashboardFiles(files, dir = DASHBOARD_OUTPUT) {
  const present = existsSync(dir) ? readdirSync(dir) : [];
  const stale = present.filter((name) => !files.has(name));
  for (const [name, text] of files) {
    const path = join(dir, name);
    if (!existsSync(path) || readFileSync(path, "utf8") !== text) stale.push(name);
  }
  return stale.sort();
}

export function writeDashboard(files, dir = DASHBOARD_OUTPUT) {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) if (!files.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
}

/** `node esbuild.config.mjs [--check]`'s dashboard part; true when the committed page is stale (check only). */
export async function buildOrCheckDashboard(checkOnly) {
  const files = await buildDashboard();
  const name = relative(root, DASHBOARD_OUTPUT);
  if (checkOnly) {
    const stale = staleDashboardFiles(files);
    if (stale.length === 0) console.log(`${name}/ is up to date`);
    else console.error(`${name}/ is not what src/dashboard builds (${stale.join(", ")}): run \`npm run build\` and commit the result.`);
    return stale.length > 0;
  }
  writeDashboard(files);
  const sizes = [...files].map(([file, text]) => `${file} ${Buffer.byteLength(text)} bytes`).join(", ");
  console.log(`wrote ${name}/ (the dashboard, served at /fleet/): ${sizes}`);
  return false;
}
