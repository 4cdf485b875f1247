/**
 * Every route and cron job the hooks bundle registers, read by the build
 * (esbuild.config.mjs), `npm start`'s banner and the bundle tests. Each entry
 * names a module here and the function it exports; the build bundles that
 * function alone into its own closure. All routes require an admin token.
 */

export interface RouteEntry {
  method: "GET" | "POST";
  path: string;
  /** A module of src/handlers, without extension. */
  module: string;
  /** Its export: (req: FleetRequest) => Reply. */
  handler: string;
}

export interface CronEntry {
  /** cronAdd's job id. */
  id: string;
  module: string;
  /** Run once while PocketBase loads the file: returns the cron expression. */
  schedule: string;
  /** Run on every tick. */
  job: string;
}

export const ROUTES: readonly RouteEntry[] = [
  { method: "POST", path: "/api/fleet/claim", module: "claim", handler: "handleClaim" },
  { method: "POST", path: "/api/fleet/renew", module: "renew", handler: "handleRenew" },
  { method: "POST", path: "/api/fleet/release", module: "release", handler: "handleRelease" },
  { method: "POST", path: "/api/fleet/claim-next", module: "claim-next", handler: "handleClaimNext" },
  { method: "POST", path: "/api/fleet/sweep", module: "sweep", handler: "handleSweep" },
  { method: "GET", path: "/api/fleet/stats", module: "stats", handler: "handleStats" },
];

export const CRONS: readonly CronEntry[] = [
  { id: "pb-fleet-sweeper", module: "sweep", schedule: "sweeperScheduleAtLoad", job: "runScheduledSweep" },
];
