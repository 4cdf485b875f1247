// Three projects: `unit` (pure code, no server), `integration` (a real
// PocketBase of PB_VERSION, either hooks line, started once per run by the global
// setup) and `conformance` (every language's Worker through the same scenarios,
// docs/client-conformance.md, on a server of its own started the same way).
// `npm test` runs all three; `vitest run --project NAME` runs one.
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
          // A page or server that answers "eventually": vitest's 1 s default is less than one request
          // takes on a loaded CI machine (a dashboard's cancel notice missed it on 0.40.4).
          expect: { poll: { timeout: 5_000 } },
        },
      },
      {
        extends: true,
        test: {
          name: "conformance",
          include: ["test/conformance/**/*.test.ts"],
          environment: "node",
          // The server, then each client's conformance worker built once (a venv, a Go binary).
          globalSetup: ["test/integration/support/global-setup.ts", "test/conformance/support/prepare-clients.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
