import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildHooks, OUTPUT } from "../../esbuild.config.mjs";

// Runs esbuild seven times per build: allow for a loaded 2-core machine.
describe("pb_hooks/fleet.pb.js", { timeout: 20_000 }, () => {
  it("is exactly what src/ builds (run `npm run build` after changing src/)", async () => {
    const built = await buildHooks();
    const committed = readFileSync(OUTPUT, "utf8");
    // A length/first-difference message instead of a 40 kB diff.
    const firstDifference = [...built].findIndex((ch, i) => ch !== committed[i]);
    expect(
      built === committed,
      `pb_hooks/fleet.pb.js is stale (built ${built.length} chars, committed ${committed.length}, first difference at ${firstDifference}): run \`npm run build\``,
    ).toBe(true);
  });

  it("builds the same bytes twice", async () => {
    const [a, b] = [await buildHooks(), await buildHooks()];
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });
});
