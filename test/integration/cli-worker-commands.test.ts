// `npx pb-fleet worker ...` run as a child process against the suite's
// PocketBase: what it creates signs in through PocketBase's own
// auth-with-password, list shows it, disable, rotate and revoke do what they
// say (old tokens stop authenticating), and every refusal exits non-zero with
// its sentence and writes nothing.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/pocketbase/server.mjs";
import { WORKER_FIELDS, WORKERS_COLLECTION } from "../../src/lib/identity";
import { startOwnServer } from "./support/own-server";
import { account, pbLine } from "./support/pocketbase-line";

const BIN = resolve(import.meta.dirname, "../../bin/pb-fleet.mjs");
const RECORDS = `/api/collections/${WORKERS_COLLECTION}/records`;
/** No npm start credentials file may be found by accident. */
const emptyDataDir = mkdtempSync(join(tmpdir(), "pb-fleet-cli-worker-"));

afterAll(() => rmSync(emptyDataDir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const admin = { PB_ADMIN_EMAIL: inject("adminEmail"), PB_ADMIN_PASSWORD: inject("adminPassword") };
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", PB_URL: inject("pbUrl"), PB_DATA_DIR: emptyDataDir, ...admin, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** A refusal: exit code, nothing on stdout, one line on stderr, no stack trace. */
function expectRefused(run: Run, code: number, message: RegExp): void {
  expect(run.stdout).toBe("");
  expect(run.stderr).toMatch(/^pb-fleet: /);
  expect(run.stderr).toMatch(message);
  expect(run.stderr.trim().split("\n")).toHaveLength(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.code).toBe(code);
}

async function api(method: string, path: string, { token = inject("adminToken") as string | null, body, baseUrl = inject("pbUrl") }: { token?: string | null; body?: unknown; baseUrl?: string } = {}) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { ...(token ? { Authorization: token } : {}), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

function uniqueName(prefix = "cli"): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

async function recordsNamed(name: string): Promise<Array<Record<string, any>>> {
  const query = new URLSearchParams({ filter: `${WORKER_FIELDS.name}=${JSON.stringify(name)}` });
  const answer = await api("GET", `${RECORDS}?${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.items;
}

async function recordNamed(name: string): Promise<Record<string, any>> {
  const [record, ...more] = await recordsNamed(name);
  expect(more).toEqual([]);
  if (!record) throw new Error(`no ${WORKERS_COLLECTION} record named ${name}`);
  return record;
}

function signIn(identity: string, password: string) {
  return api("POST", `/api/collections/${WORKERS_COLLECTION}/auth-with-password`, { token: null, body: { identity, password } });
}

function refresh(token: string) {
  return api("POST", `/api/collections/${WORKERS_COLLECTION}/auth-refresh`, { token });
}

/** What `worker create` / `rotate` printed: the name, id and password lines. */
function printedSecret(stdout: string): { name: string; id: string; password: string } {
  const field = (label: string) => new RegExp(`^  ${label}\\s+(\\S+)$`, "m").exec(stdout)?.[1] ?? "";
  return { name: field("name"), id: field("id"), password: field("password") };
}

async function created(name: string, args: string[] = []): Promise<{ id: string; password: string; stdout: string }> {
  const run = await cli(["worker", "create", name, ...args]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const secret = printedSecret(run.stdout);
  return { id: secret.id, password: secret.password, stdout: run.stdout };
}

describe("worker create", () => {
  it("prints a password, once, that signs in as the new identity, whose record has the queues and can_enqueue given", async () => {
    const name = uniqueName();
    const { id, password, stdout } = await created(name, ["--queues", "emails,reports", "--can-enqueue"]);
    expect(printedSecret(stdout).name).toBe(name);
    expect(password).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    expect(stdout).toMatch(/shown once/);
    expect(stdout).toContain(`new FleetClient({ url: ${JSON.stringify(inject("pbUrl"))}, worker: { identity: ${JSON.stringify(name)}, password: ${JSON.stringify(password)} } })`);

    const auth = await signIn(name, password);
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    expect(auth.body.record.id).toBe(id);
    expect(typeof auth.body.token).toBe("string");

    const record = await recordNamed(name);
    expect(record).toMatchObject({ id, [WORKER_FIELDS.name]: name, [WORKER_FIELDS.queues]: ["emails", "reports"], [WORKER_FIELDS.canEnqueue]: true, [WORKER_FIELDS.disabled]: false });
  });

  it("makes an identity of every queue that may not enqueue by default, at the --url given", async () => {
    const name = uniqueName();
    const run = await cli(["worker", "create", name, "--url", inject("pbUrl")], { PB_URL: "http://127.0.0.1:1" });
    expect(run.code, run.stderr).toBe(0);
    const record = await recordNamed(name);
    expect(record.id).toBe(printedSecret(run.stdout).id);
    expect(record[WORKER_FIELDS.queues] ?? []).toEqual([]);
    expect(record[WORKER_FIELDS.canEnqueue]).toBe(false);
  });
});

describe("worker list", () => {
  it("shows each identity's name, id, queues, can enqueue, disabled and last seen", async () => {
    const restricted = uniqueName("list-a");
    const open = uniqueName("list-b");
    const a = await created(restricted, ["--queues", "emails", "--can-enqueue"]);
    const b = await created(open);
    const run = await cli(["worker", "list"]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^NAME\s+ID\s+QUEUES\s+CAN ENQUEUE\s+DISABLED\s+LAST SEEN$/);
    expect(lines.find((l) => l.startsWith(`${restricted} `))).toMatch(new RegExp(`^${restricted}\\s+${a.id}\\s+emails\\s+yes\\s+no\\s+never$`));
    expect(lines.find((l) => l.startsWith(`${open} `))).toMatch(new RegExp(`^${open}\\s+${b.id}\\s+every queue\\s+no\\s+no\\s+never$`));
  });
});

describe("worker disable, enable, rotate and revoke", () => {
  it("disable sets disabled, enable clears it", async () => {
    const name = uniqueName();
    const { id } = await created(name);
    const disable = await cli(["worker", "disable", name]);
    expect(disable.code, disable.stderr).toBe(0);
    expect(disable.stdout).toMatch(new RegExp(`Disabled the worker identity ${name} \\(id ${id}\\)`));
    expect((await recordNamed(name))[WORKER_FIELDS.disabled]).toBe(true);
    const again = await cli(["worker", "disable", name]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already disabled: nothing changed/);
    const enable = await cli(["worker", "enable", name]);
    expect(enable.code, enable.stderr).toBe(0);
    expect((await recordNamed(name))[WORKER_FIELDS.disabled]).toBe(false);
  });

  it("revoke deletes the record, and its token no longer authenticates", async () => {
    const name = uniqueName();
    const { id, password } = await created(name);
    const auth = await signIn(name, password);
    expect(auth.status).toBe(200);
    expect((await refresh(auth.body.token)).status).toBe(200);

    const run = await cli(["worker", "revoke", name]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`Revoked the worker identity ${name} \\(id ${id}\\)`));
    expect((await api("GET", `${RECORDS}/${id}`)).status).toBe(404);
    expect((await refresh(auth.body.token)).status).toBe(401);
    expect((await signIn(name, password)).status).toBe(400);
  });

  it("rotate prints a new password; the old password and the old token stop working; an email on the record is cleared", async () => {
    const name = uniqueName();
    const { id, password: old } = await created(name);
    // An address someone put on the record (the one way PocketBase could mail the identity a way back in).
    expect((await api("PATCH", `${RECORDS}/${id}`, { body: { email: `${name}@example.com` } })).status).toBe(200);
    expect((await recordNamed(name))["email"]).toBe(`${name}@example.com`);
    const oldToken = (await signIn(name, old)).body.token as string;
    expect((await refresh(oldToken)).status).toBe(200);

    const run = await cli(["worker", "rotate", name]);
    expect(run.code, run.stderr).toBe(0);
    const secret = printedSecret(run.stdout);
    expect(secret.id).toBe(id);
    expect(secret.password).not.toBe(old);
    expect(run.stdout).toMatch(/shown once/);
    expect((await refresh(oldToken)).status).toBe(401);
    expect((await signIn(name, old)).status).toBe(400);
    const fresh = await signIn(name, secret.password);
    expect(fresh.status).toBe(200);
    expect(fresh.body.record.id).toBe(id);
    expect((await recordNamed(name))["email"]).toBe("");
  });
});

describe("worker commands refused, with nothing written", () => {
  it("without admin credentials (exit 2)", async () => {
    const name = uniqueName();
    expectRefused(await cli(["worker", "create", name], { PB_ADMIN_EMAIL: "", PB_ADMIN_PASSWORD: "" }), 2, /no admin credentials: set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD/);
    expect(await recordsNamed(name)).toEqual([]);
  });

  it("with wrong admin credentials", async () => {
    const name = uniqueName();
    expectRefused(
      await cli(["worker", "create", name], { PB_ADMIN_PASSWORD: "not-the-password" }),
      1,
      new RegExp(`cannot sign in as ${account().aNoun} of .*: set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD`),
    );
    expect(await recordsNamed(name)).toEqual([]);
  });

  it("when nothing answers at the URL", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    expectRefused(await cli(["worker", "list", "--url", url]), 1, new RegExp(`PocketBase at ${url} cannot be reached \\(ECONNREFUSED\\): start it`));
  });

  it("when the server has no fleet_workers collection", async () => {
    const own = await startOwnServer();
    try {
      const dropped = await api("DELETE", `/api/collections/${WORKERS_COLLECTION}`, { token: own.token, baseUrl: own.url });
      expect(dropped.status, JSON.stringify(dropped.body)).toBe(204);
      const run = await cli(["worker", "create", uniqueName()], { PB_URL: own.url, PB_ADMIN_EMAIL: "own@pb-fleet.test", PB_ADMIN_PASSWORD: "own-server-password" });
      expectRefused(run, 1, /has no fleet_workers auth collection: run `npx pb-fleet install <pb_dir>` and restart PocketBase/);
      expect((await api("GET", `/api/collections/${WORKERS_COLLECTION}`, { token: own.token, baseUrl: own.url })).status).toBe(404);
    } finally {
      await own.stop();
    }
  });

  it.each(["ab", ".abc", "bad name", "x".repeat(151)])("for the name %j (exit 2)", async (name) => {
    expectRefused(await cli(["worker", "create", name]), 2, /cannot be a worker identity's name: .*; choose another\./);
    expect(await recordsNamed(name)).toEqual([]);
  });

  it("for a name that is taken: the existing identity is left as it was", async () => {
    const name = uniqueName();
    const { id, password } = await created(name, ["--queues", "emails"]);
    const before = await recordNamed(name);
    expectRefused(await cli(["worker", "create", name, "--can-enqueue"]), 1, new RegExp(`a worker identity named "${name}" already exists at .* \\(id ${id}\\): choose another name`));
    expect(await recordNamed(name)).toEqual(before);
    expect((await signIn(name, password)).status).toBe(200);
  });

  // 0.22's usernames are unique in any case; 0.23+'s unique index compares them exactly, so there the two are identities of their own.
  it("for a name taken in other case: refused on PocketBase 0.22, a second identity on 0.23+", async () => {
    const name = uniqueName("case");
    const first = await created(name);
    const upper = name.toUpperCase();
    if (pbLine() === "0.22") {
      expectRefused(await cli(["worker", "create", upper]), 1, new RegExp(`refused the name "${upper}" \\(.*\\): an identity has it already`));
      expect(await recordsNamed(upper)).toEqual([]);
      return;
    }
    const second = await created(upper);
    expect(second.id).not.toBe(first.id);
    expect((await signIn(upper, second.password)).body.record.id).toBe(second.id);
    expect((await signIn(name, first.password)).body.record.id).toBe(first.id);
  });

  it.each(["disable", "enable", "revoke", "rotate"])("%s of a name no identity has", async (action) => {
    const name = uniqueName("missing");
    expectRefused(await cli(["worker", action, name]), 1, new RegExp(`there is no worker identity named "${name}" at .*: \`npx pb-fleet worker list\` shows the names`));
    expect(await recordsNamed(name)).toEqual([]);
  });

  it.each(["emails,bad queue", "emails,,reports", "q".repeat(65)])("for the queues %j (exit 2)", async (queues) => {
    const name = uniqueName();
    expectRefused(await cli(["worker", "create", name, "--queues", queues]), 2, /in --queues is not a queue name: 1 to 64 letters/);
    expect(await recordsNamed(name)).toEqual([]);
  });
});
