// The clients whose conformance workers the suite runs (docs/client-conformance.md),
// and how each is built before the run. A new client adds a line here.
import { resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
/** Where the suite keeps what it builds (a virtual environment, a Go binary). */
export const BUILD_DIR = resolve(REPO_ROOT, "node_modules/.cache/pb-fleet-conformance");

export type ClientName = "node" | "python" | "go";

/** How to start a client's conformance worker. */
export interface ConformanceClient {
  name: ClientName;
  command: string;
  args: string[];
  cwd: string;
}
