/**
 * Every route and cron job the hooks bundle registers, read by the build
 * (esbuild.config.mjs), `npm start`'s banner and the bundle tests. Each entry
 * names a module here and the function it exports; the build bundles that
 * function alone into its own closure. Every route takes an admin token; the
 * worker routes take a worker identity's token too (src/lib/identity.ts).
 */
import { WORKERS_COLLECTION, type RouteAccess } from "../lib/identity.js";

export interface RouteEntry {
  method: "GET" | "POST";
  path: string;
  /** A module of src/handlers, without extension. */
  module: string;
  /** Its export: (req: FleetRequest) => Reply. */
  handler: string;
  /** Who may call it besides an admin (the adapter's serve decides before the body is read). */
  access: RouteAccess;
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
  { method: "POST", path: "/api/fleet/claim", module: "claim", handler: "handleClaim", access: "worker" },
  { method: "POST", path: "/api/fleet/renew", module: "renew", handler: "handleRenew", access: "worker" },
  { method: "POST", path: "/api/fleet/release", module: "release", handler: "handleRelease", access: "worker" },
  { method: "POST", path: "/api/fleet/claim-next", module: "claim-next", handler: "handleClaimNext", access: "worker" },
  { method: "POST", path: "/api/fleet/sweep", module: "sweep", handler: "handleSweep", access: "admin" },
  { method: "GET", path: "/api/fleet/stats", module: "stats", handler: "handleStats", access: "admin" },
  { method: "GET", path: "/api/fleet/completions", module: "completions", handler: "handleCompletions", access: "admin" },
  { method: "POST", path: "/api/fleet/enqueue", module: "enqueue", handler: "handleEnqueue", access: "enqueue" },
  { method: "POST", path: "/api/fleet/cancel", module: "cancel", handler: "handleCancel", access: "admin" },
  { method: "POST", path: "/api/fleet/retry", module: "retry", handler: "handleRetry", access: "admin" },
  { method: "POST", path: "/api/fleet/maintenance", module: "maintenance", handler: "handleMaintenance", access: "admin" },
  { method: "POST", path: "/api/fleet/heartbeat", module: "heartbeat", handler: "handleHeartbeat", access: "worker" },
  { method: "POST", path: "/api/fleet/complete", module: "complete", handler: "handleComplete", access: "worker" },
  { method: "POST", path: "/api/fleet/flow", module: "flow", handler: "handleSetFlow", access: "admin" },
  { method: "GET", path: "/api/fleet/flow", module: "flow", handler: "handleGetFlow", access: "admin" },
  // "worker": anyone who may call some route may read how (src/handlers/openapi.ts says why it is not anonymous).
  { method: "GET", path: "/api/fleet/openapi.json", module: "openapi", handler: "handleOpenApi", access: "worker" },
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

/**
 * What PocketBase's own email change, password reset and verification
 * requests of a fleet_workers record run instead (each bundle registers it
 * with its API's request hooks): a refusal. An identity that put its own
 * address on its record could reset a password an admin has just rotated.
 */
export const WORKER_ACCOUNT_HOOK = { module: "worker-account", handler: "refuseAccountRequest", collection: WORKERS_COLLECTION } as const;

export const CRONS: readonly CronEntry[] = [
  { id: "pb-fleet-sweeper", module: "sweep", schedule: "sweeperScheduleAtLoad", job: "runScheduledSweep" },
  { id: "pb-fleet-maintenance", module: "maintenance", schedule: "maintenanceScheduleAtLoad", job: "runMaintenance" },
];
