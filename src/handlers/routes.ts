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
  { method: "GET", path: "/api/fleet/completions", module: "completions", handler: "handleCompletions" },
  { method: "POST", path: "/api/fleet/enqueue", module: "enqueue", handler: "handleEnqueue" },
  { method: "POST", path: "/api/fleet/cancel", module: "cancel", handler: "handleCancel" },
  { method: "POST", path: "/api/fleet/retry", module: "retry", handler: "handleRetry" },
  { method: "POST", path: "/api/fleet/maintenance", module: "maintenance", handler: "handleMaintenance" },
  { method: "POST", path: "/api/fleet/heartbeat", module: "heartbeat", handler: "handleHeartbeat" },
  { method: "POST", path: "/api/fleet/complete", module: "complete", handler: "handleComplete" },
];

/** A hook on every new probe_jobs record (each bundle registers it with its API's create hook). */
export interface JobCreateHookEntry {
  module: string;
  /** Its export: (event) => void, the adapter's stampDueTime. */
  handler: string;
}

export const JOB_CREATE_HOOKS: readonly JobCreateHookEntry[] = [
  { module: "job-created", handler: "stampDueTime" },
];

export const CRONS: readonly CronEntry[] = [
  { id: "pb-fleet-sweeper", module: "sweep", schedule: "sweeperScheduleAtLoad", job: "runScheduledSweep" },
  { id: "pb-fleet-maintenance", module: "maintenance", schedule: "maintenanceScheduleAtLoad", job: "runMaintenance" },
];
