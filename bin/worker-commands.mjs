// `npx pb-fleet worker ...`: worker identities, the records of the auth
// collection fleet_workers (src/lib/identity.ts, migrations
// 1764461101_created_fleet_workers.js), created, listed, disabled, enabled,
// revoked and given new passwords through PocketBase's record API as an admin
// (0.22) or a superuser (0.23+). Every failure is a WorkerCommandError: one
// sentence and an exit code (2 for bad input, 1 for what the server said).
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HOOKS_LINES } from "../scripts/pocketbase/lines.mjs";
import { adminAuth, requestJson } from "../scripts/pocketbase/server.mjs";

// Restated from src/lib/identity.ts and src/lib/queue.ts (bin/ cannot import
// TypeScript); test/unit/cli-worker-arguments.test.ts checks they are equal.
export const WORKERS_COLLECTION = "fleet_workers";
export const WORKER_FIELDS = {
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at",
};
export const WORKER_NAME_PATTERN = /^[\w][\w.-]{2,149}$/;
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
export const MAX_CLAIM_QUEUES = 16;

export const DEFAULT_URL = "http://127.0.0.1:8090";
/** Random bytes of a generated password: 32 base64url characters, within bcrypt's 72 bytes and 0.22's minimum of 12. */
const PASSWORD_BYTES = 24;
const REQUEST_TIMEOUT_MS = 10_000;
/** Where `npm start` keeps the admin it generated (scripts/start.mjs: CREDENTIALS_FILE in its data dir). */
const CREDENTIALS_FILE = "pb-fleet-admin.json";
const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const RECORDS = `/api/collections/${WORKERS_COLLECTION}/records`;

const ACTIONS = ["create", "list", "disable", "enable", "revoke", "rotate"];

/** The synopsis lines (the bin's "Usage:" lists them) and the rest of the help. */
export const WORKER_SYNOPSIS = `  npx pb-fleet worker create <name> [--queues a,b] [--can-enqueue] [--url <url>]
  npx pb-fleet worker list [--url <url>]
  npx pb-fleet worker disable <name> [--url <url>]
  npx pb-fleet worker enable <name> [--url <url>]
  npx pb-fleet worker revoke <name> [--url <url>]
  npx pb-fleet worker rotate <name> [--url <url>]`;

export const WORKER_HELP = `Worker identities are records of the auth collection ${WORKERS_COLLECTION}: a worker signs in
with its name and password (POST /api/collections/${WORKERS_COLLECTION}/auth-with-password)
and may call the worker routes of /api/fleet/*.
  create   a new identity with a generated password, printed once
           --queues a,b     the queues it may take jobs of (default: every queue)
           --can-enqueue    it may also POST /api/fleet/enqueue
  list     every identity: name, id, queues, can enqueue, disabled, last seen
  disable  refuse its calls (401) until enabled again; enable lets it back in
  revoke   delete it: its tokens stop working at once
  rotate   a new password, printed once; its old password and tokens stop working
A name has 3 to 150 letters, digits, "_", "." or "-", and starts with a letter,
digit or "_". The server is --url, else PB_URL, else ${DEFAULT_URL}. The commands
sign in as the admin (0.22) or superuser (0.23+) of PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD,
else as the one \`npm start\` generated (pb_data/${CREDENTIALS_FILE}, or PB_DATA_DIR's).`;

export class WorkerCommandError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

function usage(message) {
  return new WorkerCommandError(message, 2);
}

/** The worker flags that take a value (`--url x`): the bin skips their values when it looks for the command. */
export const WORKER_VALUE_FLAGS = ["--url", "--queues"];

/**
 * `worker <action> ...` (argv after "worker") -> { command: "worker", action, name, queues, canEnqueue, url }
 * or { command: "help", topic: "worker" }. Throws a WorkerCommandError (exit 2) for anything else.
 */
export function parseWorkerArguments(argv, env = process.env) {
  const words = [];
  const flags = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") return { command: "help", topic: "worker" };
    const valueFlag = WORKER_VALUE_FLAGS.find((flag) => arg === flag || arg.startsWith(`${flag}=`));
    if (valueFlag) {
      const value = arg === valueFlag ? argv[++i] : arg.slice(valueFlag.length + 1);
      if (value === undefined || (arg === valueFlag && value.startsWith("-"))) {
        throw usage(valueFlag === "--url"
          ? "--url needs the server's address, for example --url http://127.0.0.1:8090."
          : "--queues needs queue names separated by commas, for example --queues emails,reports (leave it out for every queue).");
      }
      if (flags.has(valueFlag)) throw usage(`${valueFlag} is given twice: give it once.`);
      flags.set(valueFlag, value);
    } else if (arg.startsWith("-")) {
      if (flags.has(arg)) throw usage(`${arg} is given twice: give it once.`);
      flags.set(arg, true);
    } else words.push(arg);
  }
  const [action, ...names] = words;
  if (action === undefined) throw usage(`worker needs an action: ${ACTIONS.join(", ")} (see --help).`);
  if (!ACTIONS.includes(action)) throw usage(`unknown worker action ${JSON.stringify(action)}: use ${ACTIONS.join(", ")} (see --help).`);

  const known = action === "create" ? ["--url", "--queues", "--can-enqueue"] : ["--url"];
  const unknown = [...flags.keys()].filter((flag) => !known.includes(flag));
  if (unknown.length) {
    throw usage(`worker ${action} does not take ${unknown.map((f) => JSON.stringify(f)).join(", ")}: it takes ${known.join(", ")} (see --help).`);
  }

  let name = null;
  if (action === "list") {
    if (names.length) throw usage(`worker list takes no name, got ${names.map((w) => JSON.stringify(w)).join(" ")}.`);
  } else {
    if (names.length === 0) throw usage(`worker ${action} needs the identity's name: \`npx pb-fleet worker ${action} <name>\`.`);
    if (names.length > 1) throw usage(`worker ${action} takes one name, got ${names.length}: ${names.map((w) => JSON.stringify(w)).join(" ")}.`);
    name = names[0];
    const problem = workerNameProblem(name);
    if (problem) throw usage(problem);
  }

  return {
    command: "worker",
    action,
    name,
    queues: flags.has("--queues") ? parseQueues(flags.get("--queues")) : [],
    canEnqueue: flags.get("--can-enqueue") === true,
    url: parseUrl(flags.has("--url") ? flags.get("--url") : env.PB_URL || DEFAULT_URL, flags.has("--url") ? "--url" : env.PB_URL ? "PB_URL" : "the default"),
  };
}

/** Why a name breaks PocketBase 0.22's username rule (the same on 0.23+ through the migration), or null. */
export function workerNameProblem(name) {
  if (WORKER_NAME_PATTERN.test(name)) return null;
  const length = Array.from(name).length;
  const why = length < 3 ? `it has ${length} character${length === 1 ? "" : "s"}, and a name needs 3 to 150`
    : length > 150 ? `it has ${length} characters, and a name has at most 150`
      : "a name has only letters, digits, \"_\", \".\" and \"-\" and starts with a letter, digit or \"_\"";
  return `${JSON.stringify(name)} cannot be a worker identity's name: ${why}; choose another.`;
}

/** "a,b" -> ["a", "b"]: each a queue name, duplicates dropped; "" and bad names refused. */
export function parseQueues(text) {
  const names = text.split(",").map((part) => part.trim());
  if (names.every((part) => part === "")) {
    throw usage("--queues is empty: give queue names separated by commas, or leave --queues out for every queue.");
  }
  for (const queue of names) {
    if (!QUEUE_NAME_PATTERN.test(queue)) {
      throw usage(
        `${JSON.stringify(queue)} in --queues is not a queue name: 1 to 64 letters, digits, "_", ".", ":" or "-", starting with a letter or digit` +
          (queue === "" ? " (two commas in a row?)" : "") + "; correct it.",
      );
    }
  }
  const unique = [...new Set(names)];
  if (unique.length > MAX_CLAIM_QUEUES) {
    throw usage(`--queues names ${unique.length} queues; an identity takes at most ${MAX_CLAIM_QUEUES} (the server refuses more): give fewer.`);
  }
  return unique;
}

function parseUrl(text, origin) {
  let url;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw usage(`${origin === "the default" ? "" : `${origin} `}${JSON.stringify(text)} is not an http(s) address: give PocketBase's, for example ${DEFAULT_URL}.`);
  }
  return text.replace(/\/+$/, "");
}

/**
 * The admin to sign in as: PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD, else the one
 * `npm start` generated and stored in its data dir (PB_DATA_DIR, else the package's pb_data).
 */
export function adminCredentials(env = process.env) {
  const email = env.PB_ADMIN_EMAIL?.trim() || "";
  const password = env.PB_ADMIN_PASSWORD ?? "";
  if (email && !password) throw usage("PB_ADMIN_EMAIL is set but PB_ADMIN_PASSWORD is not: set both, to the email and password of an admin (a superuser on 0.23+).");
  if (password && !email) throw usage("PB_ADMIN_PASSWORD is set but PB_ADMIN_EMAIL is not: set both, to the email and password of an admin (a superuser on 0.23+).");
  if (email) return { email, password, origin: "PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD" };
  const file = join(env.PB_DATA_DIR ? resolve(env.PB_DATA_DIR) : join(packageRoot, "pb_data"), CREDENTIALS_FILE);
  if (!existsSync(file)) {
    throw usage(
      "no admin credentials: set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD to the email and password of an admin (a superuser on 0.23+) " +
        `of the server (\`npm start\` keeps the one it generates in ${file}, which does not exist).`,
    );
  }
  let stored = null;
  try {
    stored = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    /* said below */
  }
  if (typeof stored?.email !== "string" || typeof stored?.password !== "string") {
    throw usage(`${file} is not readable JSON with email and password: fix it, or set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD.`);
  }
  return { email: stored.email, password: stored.password, origin: file };
}

/** One request; a server that cannot be reached is a sentence. */
async function request(url, method, path, { token, body } = {}) {
  try {
    return await requestJson(url, method, path, { token, body, timeoutMs: REQUEST_TIMEOUT_MS });
  } catch (error) {
    throw unreachable(url, error);
  }
}

function unreachable(url, error) {
  const why = error?.name === "TimeoutError" ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
  return new WorkerCommandError(`PocketBase at ${url} cannot be reached (${why}): start it (\`npm start\`), or give its address with --url or PB_URL.`);
}

/** PocketBase's own words for a refusal: its message and the fields' messages. */
function refusalText({ status, json, text }) {
  if (json && typeof json.message === "string") {
    const fields = json.data && typeof json.data === "object" ? Object.entries(json.data).map(([k, v]) => `${k}: ${v?.message ?? JSON.stringify(v)}`) : [];
    return `HTTP ${status} ${json.message.replace(/\.$/, "")}${fields.length ? ` (${fields.join("; ")})` : ""}`;
  }
  return `HTTP ${status} ${text.slice(0, 200)}`.trim();
}

function unexpected(what, answer) {
  return new WorkerCommandError(`${what} failed with ${refusalText(answer)}: see PocketBase's log, and run the command again.`);
}

/**
 * Signs in as the admin and checks the collection: { url, line, token }.
 * 0.23+ has the _superusers collection, whose auth methods anyone may read; 0.22 has none.
 */
async function connect(url, env) {
  const credentials = adminCredentials(env);
  const probe = await request(url, "GET", "/api/collections/_superusers/auth-methods");
  const line = probe.status === 200 ? "0.23" : "0.22";
  const { admin } = HOOKS_LINES[line];
  let token;
  try {
    token = await adminAuth(url, credentials.email, credentials.password, line);
  } catch (error) {
    const status = Number(/: HTTP (\d{3}) /.exec(error.message)?.[1]);
    if (!status) throw unreachable(url, error);
    if (status === 400) {
      throw new WorkerCommandError(
        `${credentials.email} (from ${credentials.origin}) cannot sign in as ${admin.aNoun} of ${url}: ` +
          `set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD to ${admin.aNoun}'s credentials of that server.`,
      );
    }
    if (status === 404) {
      throw new WorkerCommandError(`${url} does not answer like PocketBase ${HOOKS_LINES["0.22"].versions} or ${HOOKS_LINES["0.23"].versions} (HTTP 404 at ${admin.authPath}): check --url or PB_URL.`);
    }
    throw new WorkerCommandError(`signing in as ${admin.aNoun} at ${url} failed (HTTP ${status}): see PocketBase's log, and run the command again.`);
  }
  const collection = await request(url, "GET", `/api/collections/${WORKERS_COLLECTION}`, { token });
  if (collection.status === 404 || (collection.status === 200 && collection.json?.type !== "auth")) {
    throw new WorkerCommandError(
      `PocketBase at ${url} has no ${WORKERS_COLLECTION} auth collection: run \`npx pb-fleet install <pb_dir>\` and restart PocketBase, so that its migrations create it.`,
    );
  }
  if (collection.status !== 200) throw unexpected(`reading the ${WORKERS_COLLECTION} collection`, collection);
  return { url, line, token };
}

async function findWorker(session, name) {
  // The name matches WORKER_NAME_PATTERN: no quote to escape in the filter.
  const query = new URLSearchParams({ filter: `${WORKER_FIELDS.name}=${JSON.stringify(name)}`, perPage: "1", skipTotal: "1" });
  const answer = await request(session.url, "GET", `${RECORDS}?${query}`, { token: session.token });
  if (answer.status !== 200) throw unexpected(`looking up the worker identity ${name}`, answer);
  return answer.json.items?.[0] ?? null;
}

async function existingWorker(session, name) {
  const record = await findWorker(session, name);
  if (!record) {
    throw new WorkerCommandError(`there is no worker identity named ${JSON.stringify(name)} at ${session.url}: \`npx pb-fleet worker list\` shows the names.`);
  }
  return record;
}

function newPassword() {
  return randomBytes(PASSWORD_BYTES).toString("base64url");
}

function duplicate(name, session, id) {
  return new WorkerCommandError(
    `a worker identity named ${JSON.stringify(name)} already exists at ${session.url} (id ${id}): ` +
      `choose another name, or give it a new password with \`npx pb-fleet worker rotate ${name}\`.`,
  );
}

function printSecret(out, session, record, password) {
  const name = record[WORKER_FIELDS.name];
  out(
    [
      `  name      ${name}`,
      `  id        ${record.id}`,
      `  password  ${password}`,
      "",
      "The password is shown once, now: PocketBase keeps only its hash. Store it where the worker reads it;",
      `\`npx pb-fleet worker rotate ${name}\` makes a new one.`,
      "",
      "A worker signs in with it:",
      `  new FleetClient({ url: ${JSON.stringify(session.url)}, worker: { identity: ${JSON.stringify(name)}, password: ${JSON.stringify(password)} } })`,
      `Its calls name it by workerId ${record.id}, or one beginning with "${record.id}/" (a FleetClient Worker signed in as it does so by itself).`,
    ].join("\n"),
  );
}

function queuesText(value) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return "every queue";
  if (Array.isArray(value) && value.every((q) => typeof q === "string" && QUEUE_NAME_PATTERN.test(q))) return value.join(",");
  // The hooks refuse such an identity every claim (identity.ts, QUEUES_UNREADABLE).
  return `unreadable: ${JSON.stringify(value).slice(0, 40)}`;
}

async function create(session, { name, queues, canEnqueue }, out) {
  const found = await findWorker(session, name);
  if (found) throw duplicate(name, session, found.id);
  const password = newPassword();
  const answer = await request(session.url, "POST", RECORDS, {
    token: session.token,
    body: {
      [WORKER_FIELDS.name]: name,
      password,
      passwordConfirm: password,
      [WORKER_FIELDS.queues]: queues,
      [WORKER_FIELDS.canEnqueue]: canEnqueue,
      [WORKER_FIELDS.disabled]: false,
    },
  });
  // Taken since the look-up, or (0.22, whose usernames are unique regardless of case) by another spelling.
  const refused = answer.status === 400 ? answer.json?.data?.[WORKER_FIELDS.name] : null;
  if (refused) {
    throw new WorkerCommandError(
      `PocketBase at ${session.url} refused the name ${JSON.stringify(name)} (${String(refused.message ?? "").replace(/\.$/, "") || "taken"}): ` +
        "an identity has it already (on PocketBase 0.22, in other upper and lower case too), so choose another; `npx pb-fleet worker list` shows the names.",
    );
  }
  if (answer.status !== 200) throw unexpected(`creating the worker identity ${name}`, answer);
  out(
    `Created the worker identity ${name} at ${session.url}: ` +
      `${queues.length ? `queues ${queues.join(",")}` : "every queue"}, ${canEnqueue ? "may enqueue" : "may not enqueue"}.`,
  );
  printSecret(out, session, answer.json, password);
}

async function list(session, out) {
  const fields = ["id", ...Object.values(WORKER_FIELDS)].join(",");
  const perPage = 200;
  const records = [];
  for (let page = 1; ; page++) {
    const query = new URLSearchParams({ page: String(page), perPage: String(perPage), sort: WORKER_FIELDS.name, skipTotal: "1", fields });
    const answer = await request(session.url, "GET", `${RECORDS}?${query}`, { token: session.token });
    if (answer.status !== 200) throw unexpected("listing the worker identities", answer);
    records.push(...answer.json.items);
    if (answer.json.items.length < perPage) break;
  }
  if (records.length === 0) {
    out(`No worker identities at ${session.url} yet: create one with \`npx pb-fleet worker create <name>\`.`);
    return;
  }
  const rows = [
    ["NAME", "ID", "QUEUES", "CAN ENQUEUE", "DISABLED", "LAST SEEN"],
    ...records.map((r) => [
      r[WORKER_FIELDS.name],
      r.id,
      queuesText(r[WORKER_FIELDS.queues]),
      r[WORKER_FIELDS.canEnqueue] ? "yes" : "no",
      r[WORKER_FIELDS.disabled] ? "yes" : "no",
      r[WORKER_FIELDS.lastSeenAt] || "never",
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) out(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join("  "));
  out(`${records.length} worker identit${records.length === 1 ? "y" : "ies"} at ${session.url}.`);
}

async function setDisabled(session, name, disabled, out) {
  const record = await existingWorker(session, name);
  if (Boolean(record[WORKER_FIELDS.disabled]) === disabled) {
    out(`The worker identity ${name} (id ${record.id}) is already ${disabled ? "disabled" : "enabled"}: nothing changed.`);
    return;
  }
  const answer = await request(session.url, "PATCH", `${RECORDS}/${record.id}`, { token: session.token, body: { [WORKER_FIELDS.disabled]: disabled } });
  if (answer.status !== 200) throw unexpected(`${disabled ? "disabling" : "enabling"} the worker identity ${name}`, answer);
  out(
    disabled
      ? `Disabled the worker identity ${name} (id ${record.id}): its next call to /api/fleet/* is refused with 401. \`npx pb-fleet worker enable ${name}\` lets it back in.`
      : `Enabled the worker identity ${name} (id ${record.id}): it may sign in and call /api/fleet/* again.`,
  );
}

async function revoke(session, name, out) {
  const record = await existingWorker(session, name);
  const answer = await request(session.url, "DELETE", `${RECORDS}/${record.id}`, { token: session.token });
  if (answer.status !== 204 && answer.status !== 200) throw unexpected(`deleting the worker identity ${name}`, answer);
  out(`Revoked the worker identity ${name} (id ${record.id}): its record is deleted and its tokens no longer authenticate.`);
}

async function rotate(session, name, out) {
  const record = await existingWorker(session, name);
  const password = newPassword();
  // A new password also gives the record a new tokenKey, so its old tokens stop verifying.
  const answer = await request(session.url, "PATCH", `${RECORDS}/${record.id}`, {
    token: session.token,
    // And no email: an address on the record is the one way PocketBase could mail a way back in (the hooks refuse it too).
    body: { password, passwordConfirm: password, email: "" },
  });
  if (answer.status !== 200) throw unexpected(`changing the password of the worker identity ${name}`, answer);
  out(`New password for the worker identity ${name} at ${session.url}: its old password and tokens no longer work.`);
  printSecret(out, session, answer.json, password);
}

/** Runs a parsed `worker` command; `out` prints one block of text. */
export async function runWorkerCommand(args, { env = process.env, out = (text) => console.log(text) } = {}) {
  const session = await connect(args.url, env);
  if (args.action === "create") await create(session, args, out);
  else if (args.action === "list") await list(session, out);
  else if (args.action === "disable") await setDisabled(session, args.name, true, out);
  else if (args.action === "enable") await setDisabled(session, args.name, false, out);
  else if (args.action === "revoke") await revoke(session, args.name, out);
  else if (args.action === "rotate") await rotate(session, args.name, out);
}
