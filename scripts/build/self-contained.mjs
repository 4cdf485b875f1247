// Static proof that every hook handler in a bundle is self-contained.
//
// PocketBase 0.22 turns each handler into text and compiles it on its own in a
// pooled runtime (plugins/jsvm/binds.go: `{(<handler text>).apply(undefined,
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

/** Exist only while the hooks file loads: usable at its top level, never inside a handler. */
export const PB_LOADER_ONLY_GLOBALS = [
  "routerAdd", "routerUse", "routerPre", "cronAdd", "cronRemove", "migrate",
];

/** V8 globals that goja (PocketBase 0.22's engine) does not implement. */
export const GOJA_LACKS = ["Intl", "WebAssembly", "SharedArrayBuffer", "Atomics", "WeakRef", "FinalizationRegistry"];

/** The ECMAScript builtins goja has: a fresh V8 context's globals (no Node ones) less those goja lacks. */
export const JS_BUILTINS = vm
  .runInNewContext("Object.getOwnPropertyNames(globalThis)")
  .filter((name) => !GOJA_LACKS.includes(name));

const RUNTIME_ALLOWED = new Set([...JS_BUILTINS, ...PB_RUNTIME_GLOBALS]);
const LOADER_ALLOWED = new Set([...RUNTIME_ALLOWED, ...PB_LOADER_ONLY_GLOBALS]);
const REGISTRARS = new Set(["routerAdd", "routerUse", "routerPre", "cronAdd"]);

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
 * @returns {{ violations: string[], handlers: { name: string, bytes: number, freeIdentifiers: string[] }[] }}
 */
export function checkSelfContained(source) {
  const ast = acorn.parse(source, { ecmaVersion: 2022, sourceType: "script", ranges: true });
  const violations = [];
  const handlers = [];
  for (const statement of ast.body) {
    const call = statement.type === "ExpressionStatement" ? statement.expression : null;
    if (!call || call.type !== "CallExpression" || call.callee.type !== "Identifier" ||
        !REGISTRARS.has(call.callee.name)) {
      const what = source.slice(statement.start, Math.min(statement.end, statement.start + 60));
      violations.push(`top-level code other than a route or cron registration ("${what}"): handlers cannot see the file's top level`);
      continue;
    }
    const name = describe(call);
    for (const arg of call.arguments) {
      const runsInPool = isFunctionNode(arg);
      const allowed = runsInPool ? RUNTIME_ALLOWED : LOADER_ALLOWED;
      const free = freeIdentifiers(arg);
      for (const id of free) {
        if (!allowed.has(id)) {
          violations.push(`${name}: "${id}" is not declared inside the ${runsInPool ? "handler" : "registration"} and is not a JS builtin or a PocketBase runtime global`);
        }
      }
      if (runsInPool) handlers.push({ name, bytes: Buffer.byteLength(source.slice(arg.start, arg.end)), freeIdentifiers: free });
    }
  }
  if (handlers.length === 0) violations.push("no routerAdd/cronAdd handler found");
  return { violations, handlers };
}
