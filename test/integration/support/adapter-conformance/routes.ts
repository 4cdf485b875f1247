/**
 * The conformance routes (handlers.ts), in the shape of src/handlers/routes.ts's
 * ROUTES so the real build's buildRoutes makes them. Admin only: the adapter's
 * serve refuses anyone else, as on the real routes.
 */
import type { RouteEntry } from "../../../../src/handlers/routes";

/** Where handlers.ts is, from the repository's root (buildRoutes' handlersDir). */
export const ADAPTER_TEST_HANDLERS_DIR = "test/integration/support/adapter-conformance";
export const ADAPTER_TEST_PATH = "/api/fleet-test/adapter";

const route = (path: string, handler: string, method: RouteEntry["method"] = "POST"): RouteEntry =>
  ({ method, path: `${ADAPTER_TEST_PATH}/${path}`, module: "handlers", handler, access: "admin" });

export const ADAPTER_TEST_ROUTES: readonly RouteEntry[] = [
  route("update-job", "handleUpdateJob"),
  route("update-jobs", "handleUpdateJobs"),
  route("update-jobs-bulk", "handleUpdateJobsBulk"),
  route("query", "handleQuery"),
  route("app-transaction-refusal", "handleAppTransactionRefusal"),
  route("runtime", "handleRuntime"),
  route("echo", "handleEcho"),
  route("echo", "handleEcho", "GET"),
];
