// Static proof that every hook handler in a bundle is self-contained.
//
// PocketBase turns each handler into text and compiles it on its own in a
// pooled runtime (plugins/jsvm/binds.go, 0.22 to 0.40: `{(<handler text>).apply(undefined,
// __args)}`), so a handler can use only JavaScript builtins, the JSVM globals
// and what it declares itself. Anything else is "X is not defined" at request
// time, on the first request that reaches it.
import vm from "node:vm";
import * as acorn from "acorn";
import * as eslintScope from "eslint-scope";

/** Globals PocketBase 0.22 defines in every pooled runtime (PocketBase v0.22.21, plugins/jsvm/binds.go). */
export const PB_RUNTIME_GLOBALS = [
  "$app", "$apis", "$os", "$security", "$filesystem", "$filepath", "$template", "$http",
  "$mails", "$tokens", "$dbx", "__hooks", "require", "console", "process", "sleep",
  "arrayOf", "readerToString", "DynamicModel", "Record", "Collection", "Admin", "Schema",
  "SchemaField", "MailerMessage", "Command", "RequestInfo", "DateTime", "ValidationError",
  "Dao", "Cookie", "SubscriptionMessage", "FormData", "ApiError", "NotFoundError",
  "BadRequestError", "ForbiddenError", "UnauthorizedError",
  "AdminLoginForm", "AdminPasswordResetConfirmForm", "AdminPasswordResetRequestForm",
  "AdminUpsertForm", "AppleClientSecretCreateForm", "CollectionUpsertForm",
  "CollectionsImportForm", "RealtimeSubscribeForm", "RecordEmailChangeConfirmForm",
  "RecordEmailChangeRequestForm", "RecordOAuth2LoginForm", "RecordPasswordLoginForm",
  "RecordPasswordResetConfirmForm", "RecordPasswordResetRequestForm", "RecordUpsertForm",
  "RecordVerificationConfirmForm", "RecordVerificationRequestForm", "SettingsUpsertForm",
  "TestEmailSendForm", "TestS3FilesystemForm",
];

/** Exist only while a 0.22 hooks file loads: usable at its top level, never inside a handler. */
export const PB_LOADER_ONLY_GLOBALS = [
  "routerAdd", "routerUse", "routerPre", "cronAdd", "cronRemove", "migrate", "onModelBeforeCreate",
  "onRecordBeforeRequestEmailChangeRequest", "onRecordBeforeRequestPasswordResetRequest", "onRecordBeforeRequestVerificationRequest",
];

/**
 * Globals every pooled runtime of PocketBase 0.23 to 0.40 defines: what
 * plugins/jsvm (binds.go, jsvm.go's sharedBinds) sets in both v0.23.12 and
 * v0.40.4, plus the goja_nodejs modules (require, console, process, Buffer).
 * Left out, though 0.40.4 has them: the names 0.23.12 lacks (GeoPointField,
 * Timezone, toBytes, the null* helpers), and cronAdd, which 0.40 also sets in
 * the runtimes but 0.23 only in the loader.
 */
export const PB_MODERN_RUNTIME_GLOBALS = [
  "$app", "$apis", "$dbx", "$filepath", "$filesystem", "$http", "$mails", "$os", "$security",
  "$template", "__hooks", "require", "console", "process", "Buffer",
  "sleep", "arrayOf", "readerToString", "toString", "unmarshal", "cronRemove",
  "Context", "DynamicModel", "Record", "Collection", "FieldsList", "Field",
  "NumberField", "BoolField", "TextField", "URLField", "EmailField", "EditorField", "PasswordField",
  "DateField", "AutodateField", "JSONField", "RelationField", "SelectField", "FileField",
  "MailerMessage", "Command", "RequestInfo", "Middleware", "DateTime", "ValidationError",
  "Cookie", "SubscriptionMessage", "FormData",
  "ApiError", "NotFoundError", "BadRequestError", "ForbiddenError", "UnauthorizedError",
  "TooManyRequestsError", "InternalServerError",
  "AppleClientSecretCreateForm", "RecordUpsertForm", "TestEmailSendForm", "TestS3FilesystemForm",
];

/**
 * Exist only while a 0.23+ hooks file loads (routerAdd, routerUse, cronAdd and
 * the on* hooks: this bundle registers onRecordCreate and the account request
 * hooks); `migrate` only in migrations.
 */
export const PB_MODERN_LOADER_ONLY_GLOBALS = [
  "routerAdd", "routerUse", "cronAdd", "migrate", "onRecordCreate",
  "onRecordRequestEmailChangeRequest", "onRecordRequestPasswordResetRequest", "onRecordRequestVerificationRequest",
];

/**
 * The globals of each hooks API pb-fleet builds a bundle for (scripts/build/bundles.mjs's `api`).
 * @type {Record<string, { runtime: string[], loaderOnly: string[] }>}
 */
export const HOOKS_API_GLOBALS = {
  "0.22": { runtime: PB_RUNTIME_GLOBALS, loaderOnly: PB_LOADER_ONLY_GLOBALS },
  "0.23": { runtime: PB_MODERN_RUNTIME_GLOBALS, loaderOnly: PB_MODERN_LOADER_ONLY_GLOBALS },
};

/** V8 globals that goja (PocketBase 0.22's engine) does not implement. */
export const GOJA_LACKS = ["Intl", "WebAssembly", "SharedArrayBuffer", "Atomics", "WeakRef", "FinalizationRegistry"];

/** The ECMAScript builtins goja has: a fresh V8 context's globals (no Node ones) less those goja lacks. */
export const JS_BUILTINS = vm
  .runInNewContext("Object.getOwnPropertyNames(globalThis)")
  .filter((name) => !GOJA_LACKS.includes(name));

/** The top-level calls a bundle may make: each registers handlers (the record create hooks of either API among them). */
const REGISTRARS = new Set([
  ...[...PB_LOADER_ONLY_GLOBALS, ...PB_MODERN_LOADER_ONLY_GLOBALS].filter((name) => name !== "migrate" && name !== "cronRemove"),
]);

function isFunctionNode(node) {
  return node.type === "ArrowFunctionExpression" || node.type === "FunctionExpression";
}

/** Names a standalone expression reads without declaring them. */
function freeIdentifiers(expressionNode) {
  const program = {
    type: "Program",
    sourceType: "script",
    body: [{ type: "ExpressionStatement", expression: expressionNode }],
    range: [expressionNode.start, expressionNode.end],
  };
  const scopes = eslintScope.analyze(program, { ecmaVersion: 2022, sourceType: "script" });
  return [...new Set(scopes.globalScope.through.map((ref) => ref.identifier.name))].sort();
}

function describe(call) {
  const args = call.arguments.filter((a) => a.type === "Literal").map((a) => a.value);
  return `${call.callee.name}(${args.map((a) => JSON.stringify(a)).join(", ")})`;
}

/**
 * @param {string} source a hooks file
 * @param {string} [api] the PocketBase hooks API it is for: a key of HOOKS_API_GLOBALS ("0.22", "0.23")
 * @returns {{ violations: string[], handlers: { name: string, bytes: number, freeIdentifiers: string[] }[] }}
 */
export function checkSelfContained(source, api = "0.22") {
  const globals = HOOKS_API_GLOBALS[api];
  if (globals === undefined) throw new Error(`checkSelfContained: unknown hooks API ${JSON.stringify(api)} (one of ${Object.keys(HOOKS_API_GLOBALS).join(", ")})`);
  const runtimeAllowed = new Set([...JS_BUILTINS, ...globals.runtime]);
  const loaderAllowed = new Set([...runtimeAllowed, ...globals.loaderOnly]);
  const ast = acorn.parse(source, { ecmaVersion: 2022, sourceType: "script", ranges: true });
  const violations = [];
  const handlers = [];
  for (const statement of ast.body) {
    const call = statement.type === "ExpressionStatement" ? statement.expression : null;
    if (!call || call.type !== "CallExpression" || call.callee.type !== "Identifier" ||
        !REGISTRARS.has(call.callee.name)) {
      const what = source.slice(statement.start, Math.min(statement.end, statement.start + 60));
      violations.push(`top-level code other than a route, cron or hook registration ("${what}"): handlers cannot see the file's top level`);
      continue;
    }
    const name = describe(call);
    for (const arg of call.arguments) {
      const runsInPool = isFunctionNode(arg);
      const allowed = runsInPool ? runtimeAllowed : loaderAllowed;
      const free = freeIdentifiers(arg);
      for (const id of free) {
        if (!allowed.has(id)) {
          violations.push(`${name}: "${id}" is not declared inside the ${runsInPool ? "handler" : "registration"} and is not a JS builtin or a PocketBase ${api} runtime global`);
        }
      }
      if (runsInPool) handlers.push({ name, bytes: Buffer.byteLength(source.slice(arg.start, arg.end)), freeIdentifiers: free });
    }
  }
  if (handlers.length === 0) violations.push("no routerAdd/cronAdd handler found");
  return { violations, handlers };
}
