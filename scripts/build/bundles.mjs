// The hooks bundles pb-fleet builds, one per hooks line of
// scripts/pocketbase/lines.mjs: where each is written, the tsconfig that picks
// its adapter, and what its hooks API registers. Read by the build
// (scripts/build/build.mjs), scripts/check-self-contained.mjs and the unit tests.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { lineLayout } from "../pocketbase/lines.mjs";

/** The repository's root (the build resolves src/ and the tsconfigs from it). */
export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The bundles, one per hooks line of scripts/pocketbase/lines.mjs (where each
 * line's folders are named). `api` names the line for the self-containment
 * check's globals; `routeMiddlewares` are appended to every routerAdd, after
 * `builtMiddlewares`: adapter exports built like handlers (self-contained
 * closures) and passed as `new Middleware(fn, priority, id)`.
 */
export const HOOKS_BUNDLES = [
  {
    ...bundleFiles("0.22"),
    tsconfig: join(root, "tsconfig.hooks.json"),
    // None: the adapter's serve() decides who may call (an admin, or a worker
    // identity on the worker routes) and answers anyone else what 0.22's
    // $apis.requireAdminAuth() answered them, word for word.
    routeMiddlewares: [],
    // Fires before a probe_jobs record is inserted, `created` already set.
    jobCreateHook: "onModelBeforeCreate",
    // PocketBase's own account requests a worker identity must not make (src/handlers/routes.ts WORKER_ACCOUNT_HOOK).
    accountRequestHooks: [
      "onRecordBeforeRequestEmailChangeRequest", "onRecordBeforeRequestPasswordResetRequest", "onRecordBeforeRequestVerificationRequest",
    ],
  },
  {
    ...bundleFiles("0.23"),
    tsconfig: join(root, "tsconfig.hooks-0.23.json"),
    // None: the adapter's serve() decides who may call, and answers anyone else
    // 0.22's 401 (0.23's $apis.requireSuperuserAuth() would answer a user token 403).
    routeMiddlewares: [],
    // Before PocketBase's own body limit (pbBodyLimit, priority -990), after its
    // auth token loader (-1020): pb-fleet's 413 for a body over the limit.
    builtMiddlewares: [{ export: "refuseOversizedBody", priority: -995, id: "pbFleetBodyLimit" }],
    // Wraps the insert of a probe_jobs record; the handler calls e.next().
    jobCreateHook: "onRecordCreate",
    // The same requests on 0.23+ (the handler answers by throwing, without e.next()).
    accountRequestHooks: ["onRecordRequestEmailChangeRequest", "onRecordRequestPasswordResetRequest", "onRecordRequestVerificationRequest"],
  },
];

function bundleFiles(line) {
  const layout = lineLayout(line, root);
  return { api: line, pocketbase: `PocketBase ${layout.versions}`, output: layout.bundle, enqueueModule: layout.enqueueModule };
}

/** The PocketBase 0.22 bundle. */
export const OUTPUT = HOOKS_BUNDLES[0].output;
/** The PocketBase 0.23 to 0.40 bundle. */
export const MODERN_OUTPUT = HOOKS_BUNDLES[1].output;
