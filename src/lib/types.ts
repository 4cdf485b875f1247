/**
 * Wire types of the fleet protocol (../PROTOCOL.md): what the hooks answer and
 * what the client sends. Shared by the handlers and the client as types only.
 */

export const JOB_STATUSES = ["pending", "claimed", "running", "done", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses in which a row has a holder and a lease. */
export type HeldStatus = "claimed" | "running";
export type TerminalStatus = "done" | "failed";

export const RELEASE_TARGETS = ["done", "failed", "pending"] as const;
export type ReleaseTarget = (typeof RELEASE_TARGETS)[number];

export type ReleaseRefusal =
  | "refused_terminal_same_holder"
  | "refused_not_holder"
  | "refused_lease_live";

/** The `job` object in every successful answer. Dates use PocketBase's text form. */
export interface JobView {
  id: string;
  probe_key: string;
  status: JobStatus;
  claimed_by: string;
  /** `2006-01-02 15:04:05.000Z`, or `""` when the row has no lease. */
  lease_expires_at: string;
  version: number;
}

export interface ClaimRequest {
  jobId: string;
  workerId: string;
  leaseSeconds?: number;
}
export type RenewRequest = ClaimRequest;
export interface ReleaseRequest {
  jobId: string;
  workerId: string;
  status: ReleaseTarget;
}

export type ClaimResponse =
  | { claimed: true; job: JobView; alreadyHeld?: true }
  | { claimed: false };
export type RenewResponse = { renewed: true; job: JobView } | { renewed: false };
export type ReleaseResponse =
  | { released: true; job: JobView }
  | { released: false; reason: ReleaseRefusal };

/** Body of every HTTP 400. */
export interface ErrorResponse {
  error: string;
}
