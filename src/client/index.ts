/**
 * pb-fleet client: FleetClient (typed calls to the fleet endpoints, flow
 * control's included), Worker (claim, renew, report; per-queue handlers,
 * timeouts, rate limits) and Sweeper (re-queue the jobs of dead holders).
 */
export {
  FleetClient,
  DEFAULT_COLLECTION,
  DEFAULT_TIMEOUT_MS,
  MAX_LIST_LIMIT,
  AUTH_PATHS,
  WORKER_AUTH_PATHS,
  type AuthApi,
  type WorkerCredentials,
  type WorkerIdentity,
  type FleetApi,
  type FleetClientOptions,
  type RequestOptions,
  type JobRecord,
  type HeldJob,
  type ClaimResult,
  type ClaimedJobView,
  type ClaimNextOptions,
  type CompleteClaimOptions,
  type CompleteAndClaimResponse,
  type RenewOptions,
  type ReleaseOptions,
  type HeartbeatOptions,
  type EnqueueCallOptions,
  type EnqueueManyOptions,
  type ListOptions,
  type JobQuery,
} from "./fleet-client.js";
/** PocketBase's stored text form of an instant (what filters compare against); toPbDate is its older name. */
export { formatPbDate, formatPbDate as toPbDate } from "../lib/lease.js";
export {
  Worker,
  identityWorkerId,
  LeaseLostError,
  JobTimeoutError,
  WorkerStoppingError,
  COMPLETE_FLUSH_DELAY_MS,
  PROGRESS_FLUSH_MS,
  type WorkerJob,
  type JobContext,
  type JobHandler,
  type WorkerOptions,
  type StopMode,
} from "./worker.js";
export { Sweeper, type SweeperOptions, type SweepCounts } from "./sweeper.js";
export {
  FleetError,
  FleetHttpError,
  FleetAuthError,
  FleetForbiddenError,
  FleetTimeoutError,
  FleetNetworkError,
  FleetProtocolError,
  FleetAbortError,
  PermanentJobError,
  isPermanentJobError,
  RateLimitedError,
  isRateLimitedError,
  isMissingEndpoint,
  isTransientError,
} from "./errors.js";
export type { EnqueueOptions, EnqueueJob } from "./queue-options.js";
export type { SetFlowRequest, FlowFilter } from "./flow-options.js";
/** The queue's limits and defaults (the server's own, docs/queue.md). */
export {
  MAX_ENQUEUE_JOBS,
  MAX_BATCH_ITEMS,
  MAX_BATCH_BODY_BYTES,
  MAX_REQUEST_BODY_BYTES,
  MAX_ERROR_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_RESULT_BYTES,
  MAX_PROGRESS_BYTES,
  MIN_PRIORITY,
  MAX_PRIORITY,
  MAX_MAX_ATTEMPTS,
  DEFAULT_MAX_ATTEMPTS,
} from "../lib/queue.js";
export { DEFAULT_QUEUE, QUEUE_NAME_PATTERN, MAX_CLAIM_QUEUES, isQueueName } from "../lib/queue-names.js";
/** Flow control's bounds (the server's own, docs/flow-control.md). */
export {
  MAX_GROUP_KEY_CHARS,
  MAX_TIMEOUT_SECONDS,
  MAX_START_WITHIN_SECONDS,
  MAX_FLOW_CONCURRENCY,
  MAX_RATE_LIMIT,
  MAX_RATE_PERIOD_SECONDS,
  MAX_PARK_SECONDS,
  MAX_RATE_LIMITED_FOR_SECONDS,
  isGroupName,
} from "../lib/flow-limits.js";
export { FLOW_CLAIM_REFUSALS, RENEW_REFUSALS } from "../lib/types.js";
/** The auth collection of worker identities. */
export { WORKERS_COLLECTION } from "../lib/identity.js";
/** The jobs collection (the server uses no other), and the record-API filters listClaimable/listExpiredLeases send. */
export { JOBS_COLLECTION, claimableRecordFilter, dueRecordFilter, expiredLeaseRecordFilter } from "../lib/record-filters.js";
export { backoffDelay, sleep, type BackoffOptions } from "./backoff.js";
export type * from "./events.js";
export type {
  JobStatus,
  JobView,
  ReleaseTarget,
  ReleaseRefusal,
  ClaimRequest,
  RenewRequest,
  ReleaseRequest,
  ErrorResponse,
  ClaimResponse,
  ClaimRefusal,
  RenewResponse,
  RenewRefusal,
  ReleaseResponse,
  ClaimNextRequest,
  ClaimNextResponse,
  ClaimedJob,
  QueueJobView,
  EnqueueItem,
  EnqueueRequest,
  EnqueueResponse,
  EnqueuedJob,
  JobIdRequest,
  CancelResponse,
  RetryResponse,
  RetryRefusal,
  HeartbeatItem,
  HeartbeatRequest,
  HeartbeatResponse,
  HeartbeatResult,
  CompleteItem,
  CompleteRequest,
  CompleteResponse,
  CompleteResult,
  SweepRequest,
  SweepResponse,
  SweptJob,
  SweeperState,
  FleetStats,
  FlowRateLimit,
  FlowRequest,
  FlowSettings,
  FlowScopeName,
  FlowResponse,
  FlowScopeState,
  FlowStateResponse,
} from "../lib/types.js";
