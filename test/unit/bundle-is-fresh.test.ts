import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { buildHooks } from "../../scripts/build/build.mjs";
import { HOOKS_BUNDLES } from "../../scripts/build/bundles.mjs";
import { buildOpenApi, OPENAPI_OUTPUT } from "../../scripts/build/openapi.mjs";

const REPO = new URL("../..", import.meta.url).pathname;

// Runs esbuild seven times per build: allow for a loaded 2-core machine.
describe.each(HOOKS_BUNDLES.map((bundle) => ({ bundle, name: relative(REPO, bundle.output) })))("$name", { timeout: 20_000 }, ({ bundle, name }) => {
  it("is exactly what src/ builds (run `npm run build` after changing src/)", async () => {
    const built = await buildHooks(bundle);
    const committed = readFileSync(bundle.output, "utf8");
    // A length/first-difference message instead of a 40 kB diff.
    const firstDifference = [...built].findIndex((ch, i) => ch !== committed[i]);
    expect(
      built === committed,
      `${name} is stale (built ${built.length} chars, committed ${committed.length}, first difference at ${firstDifference}): run \`npm run build\``,
    ).toBe(true);
  });

  it("builds the same bytes twice", async () => {
    const [a, b] = [await buildHooks(bundle), await buildHooks(bundle)];
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });
});

// The OpenAPI document (src/lib/openapi.ts), written by the same build and answered by GET /api/fleet/openapi.json.
describe("openapi.json", { timeout: 20_000 }, () => {
  it("is exactly what src/ builds (run `npm run build` after changing src/lib/openapi.ts or the route table)", async () => {
    expect((await buildOpenApi()) === readFileSync(OPENAPI_OUTPUT, "utf8"), "openapi.json is stale: run `npm run build`").toBe(true);
  });

  it("builds the same bytes twice", async () => {
    expect(await buildOpenApi()).toBe(await buildOpenApi());
  });
});

describe("the bundles", () => {
  it("are one per hooks API, each in its own folder", () => {
    expect(HOOKS_BUNDLES.map((b) => [b.api, relative(REPO, b.output)])).toEqual([
      ["0.22", "pb_hooks/fleet.pb.js"],
      ["0.23", "pb_hooks_0.23/fleet.pb.js"],
    ]);
  });

  it("register probe_jobs' create hook with each API's own registrar", () => {
    // 0.22 has no onRecordCreate and 0.23+ no onModelBeforeCreate: the wrong one fails the file at load.
    expect(HOOKS_BUNDLES.map((b) => [b.api, b.jobCreateHook])).toEqual([
      ["0.22", "onModelBeforeCreate"],
      ["0.23", "onRecordCreate"],
    ]);
    for (const bundle of HOOKS_BUNDLES) {
      expect(readFileSync(bundle.output, "utf8")).toMatch(new RegExp(`^${bundle.jobCreateHook}\\(\\(__context\\) => \\{$`, "m"));
      expect(readFileSync(bundle.output, "utf8")).toMatch(/^\}, "probe_jobs"\);$/m);
    }
  });
});
