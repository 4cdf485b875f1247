// Writes openapi.json at the repo root: src/lib/openapi.ts's document for
// src/handlers/routes.ts's route table, the same that GET
// /api/fleet/openapi.json answers. Committed and shipped in the package, like
// the hooks bundles; esbuild.config.mjs writes it (`--check` only compares).
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import * as esbuild from "esbuild";

import { root } from "./bundles.mjs";
import { committedIsStale } from "./committed.mjs";
export const OPENAPI_OUTPUT = join(root, "openapi.json");

/** The document as written: two-space JSON and a final newline (compiled in memory: Node 20 cannot import TypeScript). */
export async function buildOpenApi() {
  const contents = 'import { ROUTES } from "./src/handlers/routes.ts";\n' +
    'import { openApiDocument } from "./src/lib/openapi.ts";\n' +
    "export const document = openApiDocument(ROUTES);\n";
  const result = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: "ts", sourcefile: "openapi-entry.ts" },
    bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "silent",
  });
  const url = "data:text/javascript;base64," + Buffer.from(result.outputFiles[0].text).toString("base64");
  const { document } = await import(url);
  return JSON.stringify(document, null, 2) + "\n";
}

/** `node esbuild.config.mjs [--check]`'s openapi.json part; true when the committed file is stale (check only). */
export async function buildOrCheckOpenApi(checkOnly) {
  const text = await buildOpenApi();
  const name = relative(root, OPENAPI_OUTPUT);
  if (checkOnly) return committedIsStale(OPENAPI_OUTPUT, text, "src/lib/openapi.ts");
  writeFileSync(OPENAPI_OUTPUT, text);
  console.log(`wrote ${name} (the OpenAPI document of /api/fleet/*, ${Buffer.byteLength(text)} bytes)`);
  return false;
}
