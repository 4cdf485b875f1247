// Two projects: `unit` (pure code, no server) and `integration` (a real
// PocketBase of PB_VERSION, either hooks line, started once per run by the global
// setup). `npm test` runs both; `vitest run --project unit|integration` runs one.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Integration files run in parallel against one server; this machine class has 2 cores.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/integration/support/global-setup.ts"],
          // Real HTTP against a real server; races of hundreds of requests per round.
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
