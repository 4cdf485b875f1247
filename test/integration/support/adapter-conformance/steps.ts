/**
 * The JobBatch operations a conformance test asks a route to run (handlers.ts
 * runSteps), shared by the routes (hooks side) and the test (Node side): plain
 * types and one constant, nothing of either runtime.
 */
import type { JobInsert, JobPatch } from "../../../../src/lib/job-row.js";
import type { WhereClause } from "../../../../src/lib/queries.js";
import type { JobView } from "../../../../src/lib/types.js";

/** The error a "throw" step (or a decide told to throw) raises: the adapter must roll back and answer null. */
export const CONFORMANCE_THROW = "conformance: thrown on purpose";

export type BatchStep =
  | { op: "find"; ids: string[] }
  | { op: "write"; id: string; patch: JobPatch }
  | { op: "insert"; fields: JobInsert }
  | { op: "queryOne" | "queryAll"; query: WhereClause; shape: object }
  | { op: "execute"; statement: WhereClause }
  | { op: "noteWritten"; changes: JobView[] }
  | { op: "throw" };
