// Every server setting src/lib/config.ts names reaches PocketBase as the
// README's "Configuration" table says: docker-compose.yml passes each one
// through, and the table lists each one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as config from "../../src/lib/config";

const repo = join(__dirname, "..", "..");
const settings = Object.entries(config)
  .filter(([name]) => name.endsWith("_ENV"))
  .map(([, value]) => value as string);

describe("the server's settings", () => {
  it("are found in src/lib/config.ts", () => {
    expect(settings).toContain("PB_FLEET_MAINTENANCE_CRON");
    expect(settings.length).toBeGreaterThanOrEqual(6);
  });

  it.each(settings)("docker-compose.yml passes %s through, and the README's table lists it", (name) => {
    const compose = readFileSync(join(repo, "docker-compose.yml"), "utf8");
    expect(compose.split("\n").map((line) => line.trim())).toContain(`- ${name}`);
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, "m"));
  });
});
