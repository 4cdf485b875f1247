// `node esbuild.config.mjs --check`: whether a committed generated file is what
// the build makes now (generated files are never edited by hand, so a
// difference means someone forgot to build and commit).
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { root } from "./bundles.mjs";

/** Compares the file at `path` with `text` and says which it is; true when it is stale (or missing). `command` remakes it. */
export function committedIsStale(path, text, builtFrom, command = "npm run build") {
  const name = relative(root, path);
  let committed = "";
  try { committed = readFileSync(path, "utf8"); } catch { /* missing counts as stale */ }
  if (committed === text) {
    console.log(`${name} is up to date`);
    return false;
  }
  console.error(`${name} is not what ${builtFrom} builds: run \`${command}\` and commit the result.`);
  return true;
}
