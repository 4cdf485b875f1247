/**
 * A FakeFleet behind a body size limit, as PocketBase (MAX_REQUEST_BODY_BYTES)
 * or a proxy in front of it enforces one: a complete or release whose JSON
 * body, measured as FleetClient sends it, is over the limit is refused before
 * the server sees it. `answer` says how: "413" (0.23+'s body limit, pb-fleet's
 * own answer, a proxy) or "0.22" (PocketBase 0.22 reads the body truncated,
 * as empty, and the handler answers 400 "workerId is required"). Every body
 * offered is logged in `bodies`, refused or not.
 */
import { FleetHttpError } from "../../../src/client/errors";
import type { ReleaseOptions } from "../../../src/client/fleet-client";
import { jsonByteLength } from "../../../src/lib/queue";
import type { CompleteItem, CompleteResponse, ReleaseResponse, ReleaseTarget } from "../../../src/lib/types";
import { FakeFleet } from "./fake-fleet";

export interface OfferedBody {
  op: "complete" | "release";
  bytes: number;
  /** The jobs it carried, in order. */
  jobIds: string[];
  refused: boolean;
}

export interface BodyLimits {
  complete: number;
  release: number;
  answer: "413" | "0.22";
}

export class SizeLimitedFleet extends FakeFleet {
  readonly bodies: OfferedBody[] = [];

  constructor(readonly limits: BodyLimits) {
    super();
  }

  override async complete(workerId: string, releases: readonly CompleteItem[]): Promise<CompleteResponse> {
    this.#admit("complete", { workerId, releases }, releases.map((r) => r.jobId));
    return super.complete(workerId, releases);
  }

  override async release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse> {
    const body = { jobId, workerId, status, leaseToken, result: req?.result ?? undefined, error: req?.error ?? undefined };
    this.#admit("release", body, [jobId]);
    return super.release(jobId, workerId, status, leaseToken, req);
  }

  /** Refuses a body over the limit of its endpoint, the way `limits.answer` says. */
  #admit(op: "complete" | "release", body: unknown, jobIds: string[]): void {
    const bytes = jsonByteLength(body);
    const refused = bytes > this.limits[op];
    this.bodies.push({ op, bytes, jobIds, refused });
    if (!refused) return;
    if (this.limits.answer === "0.22") {
      throw new FleetHttpError(op, 400, "workerId is required", { error: "workerId is required" });
    }
    const error = `the request body is ${bytes} bytes, over the ${this.limits[op]} this server reads`;
    throw new FleetHttpError(op, 413, error, { error });
  }
}

/** A handler's result of about `bytes` bytes as JSON (never more), naming its job. */
export function resultOf(jobId: string, bytes: number): { jobId: string; blob: string } {
  const overhead = jsonByteLength({ jobId, blob: "" });
  return { jobId, blob: "x".repeat(bytes - overhead) };
}
