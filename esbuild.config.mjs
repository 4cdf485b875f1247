// `npm run build`: builds the hooks bundles, pb-fleet-enqueue.js beside each,
// the dashboard and openapi.json from src/ (`--check` only compares and exits 1
// when something committed is stale). A thin entry: the bundles are listed in
// scripts/build/bundles.mjs and built by scripts/build/build.mjs.
import { build } from "./scripts/build/build.mjs";

process.exitCode = await build({ checkOnly: process.argv.includes("--check") });
