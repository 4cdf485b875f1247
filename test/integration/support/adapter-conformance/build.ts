/**
 * The conformance routes as a hooks file for one line, built the way the real
 * bundle is (scripts/build/build.mjs buildRoutes with the line's bundle entry
 * of scripts/build/bundles.mjs: its tsconfig picks the adapter, its
 * middlewares wrap every route) and checked self-contained the same way.
 */
import { buildRoutes } from "../../../../scripts/build/build.mjs";
import { HOOKS_BUNDLES } from "../../../../scripts/build/bundles.mjs";
import { checkSelfContained } from "../../../../scripts/build/self-contained.mjs";
import type { Line } from "../pocketbase-line";
import { ADAPTER_TEST_HANDLERS_DIR, ADAPTER_TEST_ROUTES } from "./routes";

export const ADAPTER_TEST_HOOKS_FILE = "adapter-conformance.pb.js";

export async function buildAdapterTestHooks(line: Line): Promise<string> {
  const bundle = HOOKS_BUNDLES.find((b) => b.api === line);
  if (bundle === undefined) throw new Error(`no hooks bundle for line ${line} in scripts/build/bundles.mjs`);
  const source = `// Built by test/integration/support/adapter-conformance/build.ts for ${bundle.pocketbase}; test only.\n` +
    (await buildRoutes(bundle, ADAPTER_TEST_ROUTES, ADAPTER_TEST_HANDLERS_DIR)).join("\n");
  const { violations } = checkSelfContained(source, bundle.api);
  if (violations.length > 0) throw new Error(`the conformance routes are not self-contained: ${violations.join("; ")}`);
  return source;
}
