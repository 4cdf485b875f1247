// The Docker image's first-admin bootstrap fails closed, on either hooks line:
// docker/hooks/pb-fleet-docker-admin.pb.js creates the first admin of
// PocketBase 0.22, docker/hooks_0.23/ the first superuser of 0.23+. PocketBase
// 0.22's admin form takes passwords of 10-72 bytes, and while no admin exists
// it lets an anonymous POST /api/admins create one; 0.23+'s `_superusers`
// password field takes 8-71 characters, and its bcrypt hash at most 72 bytes
// (an unused 0.23+ server prints an installer link instead of an anonymous
// route). So with PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD set, the image must either
// serve with that account (the line's shortest and longest ASCII passwords, and
// 72 bytes of two-byte characters), created before the port opens, or not
// serve at all (one and two below the minimum, one above the maximum, one
// two-byte character past 72 bytes: the container exits, or every request is
// refused); an anonymous creation never succeeds. Another case makes the creation itself fail at run
// time (a valid pair, but an extra hook refuses the insert): that must not
// leave a serving server without an account either. The bounds, paths and
// hooks come from the line's facts (scripts/pocketbase/lines.mjs).
//
// The project's image is built once (Docker reuses the global setup's layers)
// and the containers start in parallel. Without a Docker engine (outside
// CI; under CI=true the global setup already refuses to run without one) the
// same checks run against the PocketBase binary with the image's hooks layout
// and command flags, as the rest of the suite falls back to the binary.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensurePocketBase } from "../../scripts/pocketbase/binary.mjs";
import { PACKAGE_ROOT } from "../../scripts/pocketbase/lines.mjs";
import { freePort } from "../../scripts/pocketbase/server.mjs";
import {
  buildPocketBaseImage,
  dockerUnavailableReason,
  runPocketBaseImage,
  type ImageRun,
  type ImageRunOutcome,
} from "./support/container";
import { account, layout, pbLine } from "./support/pocketbase-line";

const repoRoot = PACKAGE_ROOT;
const EMAIL = "bootstrap@pb-fleet.test";
const INTRUDER = { email: "intruder@pb-fleet.test", password: "intruder-password-1", passwordConfirm: "intruder-password-1" };
/** A password of exactly n ASCII characters (= n bytes). */
const passwordOf = (n: number) => "pw-".concat("0123456789abcdefghij".repeat(4)).padEnd(n, "x").slice(0, n);
/** Makes the account's creation fail at run time although the pair is valid (support/hooks*). */
const REFUSE_ADMIN_FILE = "refuse-admin.pb.js";
/** What PocketBase prints once its listener is open (both lines). */
const SERVER_STARTED = "Server started at";

interface Case {
  name: string;
  password: string;
  /** "admin": serves, with that admin/superuser; "closed": exits, or refuses every request. */
  expect: "admin" | "closed";
  /** The exit's message, when it exits; the success line, when it serves. */
  message: RegExp;
  refuseAdmin?: boolean;
}

/** The cases for the line under test, from its own bounds and nouns. */
function casesFor(): Case[] {
  const { noun, password } = account();
  const { min, max, unit } = password;
  const bounds = new RegExp(`PB_ADMIN_PASSWORD has \\d+ ${unit}.*${min} to ${max}`);
  const created = new RegExp(`created the first ${noun} `);
  // "é" is 1 character and 2 bytes. Both lines end at 72 bytes: 0.22's form counts
  // bytes, 0.23+'s field counts characters but its bcrypt hash refuses more than 72 bytes.
  const maxBytes = "maxBytes" in password ? password.maxBytes : max;
  const twoByte = (n: number) => ({ name: `${n} two-byte characters (${2 * n} bytes)`, password: "é".repeat(n) });
  return [
    { name: `${min - 2} characters`, password: passwordOf(min - 2), expect: "closed", message: bounds },
    { name: `${min - 1} characters`, password: passwordOf(min - 1), expect: "closed", message: bounds },
    { name: `${min} characters`, password: passwordOf(min), expect: "admin", message: created },
    { name: `${max} characters`, password: passwordOf(max), expect: "admin", message: created },
    { name: `${max + 1} characters`, password: passwordOf(max + 1), expect: "closed", message: bounds },
    { ...twoByte(maxBytes / 2), expect: "admin", message: created },
    { ...twoByte(maxBytes / 2 + 1), expect: "closed", message: bounds },
    {
      name: `${min + 2} characters, creation refused at run time`,
      password: passwordOf(min + 2),
      expect: "closed",
      message: new RegExp(`could not create the first ${noun} .*test: admin creation refused`),
      refuseAdmin: true,
    },
  ];
}
const CASES = casesFor();

type Started = { run: ImageRun; startedInMs: number };

const ci = process.env.CI === "true";
let mode: "container" | "spawn";
const started = new Map<string, Started>();
const cleanups: Array<() => Promise<void>> = [];

async function post(url: string, path: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: token } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* a plain-text answer stays text */
  }
  return { status: res.status, body: parsed };
}

/** The image's hooks layout and CMD flags, run by the binary on this machine. */
async function runBinaryLikeImage(binary: string, env: Record<string, string>, extraHooks: Record<string, string>): Promise<ImageRun> {
  const dir = mkdtempSync(join(tmpdir(), "pb-fleet-admin-bootstrap-"));
  const hooksDir = join(dir, "pb_hooks");
  mkdirSync(hooksDir);
  // What the Dockerfile copies to /pb/pb_hooks for the line.
  for (const src of [layout().hooksDir, layout().dockerHooksDir]) {
    for (const name of readdirSync(src).filter((n) => n.endsWith(".pb.js"))) copyFileSync(join(src, name), join(hooksDir, name));
  }
  for (const [name, content] of Object.entries(extraHooks)) writeFileSync(join(hooksDir, name), content);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    ["serve", "--dev=false", "--http", `127.0.0.1:${port}`, "--dir", join(dir, "pb_data"), "--hooksDir", hooksDir,
      "--migrationsDir", layout().migrationsDir, "--hooksWatch=false", "--hooksPool=100"],
    { env: { ...process.env, PB_ADMIN_EMAIL: "", PB_ADMIN_PASSWORD: "", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  let exitCode: number | null = null;
  const exited = new Promise<void>((done) => child.once("exit", (code, signal) => ((exitCode = code ?? (signal ? 128 : 1)), done())));
  const remove = async () => {
    if (exitCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (exitCode !== null) return { outcome: { kind: "exited", exitCode }, logs: async () => output, remove };
    const status = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0);
    if (status !== 0) return { outcome: { kind: "answering", url, healthStatus: status }, logs: async () => output, remove };
    await new Promise((r) => setTimeout(r, 50));
  }
  await remove();
  throw new Error(`PocketBase neither answered nor exited within 30 s; its output:\n${output}`);
}

function describeOutcome(outcome: ImageRunOutcome): string {
  return outcome.kind === "exited" ? `exited with code ${outcome.exitCode}` : `answering at ${outcome.url} (health ${outcome.healthStatus})`;
}

beforeAll(async () => {
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  const version = inject("pbVersion");
  const noDocker = inject("pbMode") === "spawn" && !ci ? "the suite runs in spawn mode" : await dockerUnavailableReason();
  if (noDocker !== null && ci) throw new Error(`CI=true needs a Docker engine for the image's admin bootstrap, but: ${noDocker}`);
  mode = noDocker === null ? "container" : "spawn";
  if (mode === "spawn") console.log(`[docker-admin-bootstrap] no Docker (${noDocker}): checking the same hooks with the PocketBase binary`);
  const binary = (await ensurePocketBase({ version, log: () => {} })).path;
  const t0 = Date.now();
  const image = mode === "container" ? await buildPocketBaseImage(repoRoot, binary, version, pbLine()) : "";
  const buildMs = Date.now() - t0;
  const refuseAdminHook = readFileSync(join(layout().testHooksDir, REFUSE_ADMIN_FILE), "utf8");
  const results = await Promise.allSettled(
    CASES.map(async (c) => {
      const env = { PB_ADMIN_EMAIL: EMAIL, PB_ADMIN_PASSWORD: c.password };
      // "zz-": loaded after the image's own hooks.
      const extraHooks: Record<string, string> = c.refuseAdmin ? { [`zz-test-${REFUSE_ADMIN_FILE}`]: refuseAdminHook } : {};
      const t = Date.now();
      const run =
        mode === "container"
          ? await runPocketBaseImage({
              image,
              env,
              files: Object.fromEntries(Object.entries(extraHooks).map(([name, content]) => [`/pb/pb_hooks/${name}`, content])),
            })
          : await runBinaryLikeImage(binary, env, extraHooks);
      cleanups.push(run.remove);
      started.set(c.name, { run, startedInMs: Date.now() - t });
    }),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  console.log(
    `[docker-admin-bootstrap] ${mode}${mode === "container" ? ` image ${image} built in ${buildMs} ms` : ""}; ` +
      CASES.map((c) => `${c.name}: ${describeOutcome(started.get(c.name)!.run.outcome)} after ${started.get(c.name)!.startedInMs} ms`).join("; "),
  );
});

afterAll(async () => {
  await Promise.allSettled(cleanups.map((remove) => remove()));
});

describe(`Docker image (PocketBase ${inject("pbVersion")}): first ${account().noun} from PB_ADMIN_EMAIL / PB_ADMIN_PASSWORD`, () => {
  const { noun, createPath, authPath, authRecordKey, listPath } = account();
  for (const c of CASES) {
    if (c.expect === "admin") {
      it(`a password of ${c.name} gives ${account().aNoun}, created before the port opened, that signs in; no anonymous creation`, async () => {
        const { run } = started.get(c.name)!;
        const logs = await run.logs();
        expect(run.outcome, logs).toMatchObject({ kind: "answering", healthStatus: 200 });
        const url = (run.outcome as { url: string }).url;

        const intruder = await post(url, createPath, INTRUDER);
        expect(intruder.status, `anonymous POST ${createPath} answered ${intruder.status} ${JSON.stringify(intruder.body)}`).toBeGreaterThanOrEqual(400);
        const intruderAuth = await post(url, authPath, { identity: INTRUDER.email, password: INTRUDER.password });
        expect(intruderAuth.status, "the anonymous account signs in").toBeGreaterThanOrEqual(400);

        const auth = await post(url, authPath, { identity: EMAIL, password: c.password });
        expect(auth.status, JSON.stringify(auth.body)).toBe(200);
        expect(auth.body[authRecordKey].email).toBe(EMAIL);
        const accounts = await fetch(`${url}${listPath}`, { headers: { authorization: auth.body.token } }).then((r) => r.json());
        expect(accounts.items.map((a: { email: string }) => a.email)).toEqual([EMAIL]);
        // Created in the serve hook before the listener opened: its line comes before PocketBase's banner.
        expect(logs).toMatch(c.message);
        expect(logs).toContain(SERVER_STARTED);
        expect(logs.search(c.message), `the ${noun} was created after "${SERVER_STARTED}"`).toBeLessThan(logs.indexOf(SERVER_STARTED));
      });
    } else {
      it(`a password of ${c.name} never gives a server with an open ${noun}-creation route`, async () => {
        const { run } = started.get(c.name)!;
        const logs = await run.logs();
        if (run.outcome.kind === "exited") {
          // Stopped at start, with one sentence that says what is wrong.
          expect(run.outcome.exitCode, logs).not.toBe(0);
          expect(logs).toMatch(c.message);
          return;
        }
        // Still answering: then every request must be refused, an anonymous creation first of all.
        const url = run.outcome.url;
        const intruder = await post(url, createPath, INTRUDER);
        expect(intruder.status, `anonymous POST ${createPath} answered ${intruder.status} ${JSON.stringify(intruder.body)}`).toBeGreaterThanOrEqual(400);
        const intruderAuth = await post(url, authPath, { identity: INTRUDER.email, password: INTRUDER.password });
        expect(intruderAuth.status, "the anonymous admin signs in").toBeGreaterThanOrEqual(400);
        expect(run.outcome.healthStatus, "GET /api/health").toBeGreaterThanOrEqual(400);
        const collections = await fetch(`${url}/api/collections`).then((r) => r.status);
        expect(collections, "GET /api/collections").toBeGreaterThanOrEqual(400);
      });
    }
  }
});
