/** PocketBase's email change, password reset and verification requests of a fleet_workers record: refused (routes.ts WORKER_ACCOUNT_HOOK). */
export { refuseAccountRequest } from "@pb-fleet/adapter";
