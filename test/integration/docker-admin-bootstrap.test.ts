// The Docker image's first-admin bootstrap (docker/hooks/pb-fleet-docker-admin.pb.js)
// fails closed. PocketBase 0.22's admin form takes passwords of 10-72 bytes, and
// while no admin exists PocketBase lets an anonymous POST /api/admins create one.
// So with PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD set, the image must either serve with
// that admin (10 and 72 characters), or not serve an open admin-creation route
// at all (8, 9 and 73: the container exits, or every request is refused); an
// anonymous POST /api/admins never succeeds. A sixth case makes the admin's
// creation itself fail at run time (a valid pair, but an extra hook refuses the
// insert): that must not leave a serving server without an admin either.
//
// The project's image is built once (Docker reuses the global setup's layers)
// and the five containers start in parallel. Without a Docker engine (outside
// CI; under CI=true the global setup already refuses to run without one) the
// same checks run against the PocketBase binary with the image's hooks layout
// and command flags, as the rest of the suite falls back to the binary.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensurePocketBase } from "../../scripts/pocketbase/binary.mjs";
import { freePort } from "../../scripts/pocketbase/server.mjs";
import {
  buildPocketBaseImage,
  dockerUnavailableReason,
  runPocketBaseImage,
  type ImageRun,
  type ImageRunOutcome,
} from "./support/container";

const repoRoot = resolve(import.meta.dirname, "../..");
const EMAIL = "bootstrap@pb-fleet.test";
const INTRUDER = { email: "intruder@pb-fleet.test", password: "intruder-password-1", passwordConfirm: "intruder-password-1" };
/** A password of exactly n ASCII characters (= n bytes). */
const passwordOf = (n: number) => "pw-".concat("0123456789abcdefghij".repeat(4)).padEnd(n, "x").slice(0, n);
/** Makes the admin's creation fail at run time although the pair is valid. */
const REFUSE_ADMIN_HOOK = `onModelBeforeCreate(() => { throw new Error("test: admin creation refused"); }, "_admins");\n`;
const REFUSE_ADMIN_FILE = "zz-test-refuse-admin.pb.js";

interface Case {
  name: string;
  password: string;
  /** "admin": serves, with that admin; "closed": exits, or refuses every request. */
  expect: "admin" | "closed";
  /** The exit's message, when it exits. */
  message: RegExp;
  refuseAdmin?: boolean;
}
const BOUNDS_MESSAGE = /PB_ADMIN_PASSWORD has \d+ bytes.*10 to 72/;
const CASES: Case[] = [
  { name: "8 characters", password: passwordOf(8), expect: "closed", message: BOUNDS_MESSAGE },
  { name: "9 characters", password: passwordOf(9), expect: "closed", message: BOUNDS_MESSAGE },
  { name: "10 characters", password: passwordOf(10), expect: "admin", message: /created the first admin/ },
  { name: "72 characters", password: passwordOf(72), expect: "admin", message: /created the first admin/ },
  { name: "73 characters", password: passwordOf(73), expect: "closed", message: BOUNDS_MESSAGE },
  {
    name: "12 characters, creation refused at run time",
    password: passwordOf(12),
    expect: "closed",
    message: /could not create the first admin .*test: admin creation refused/,
    refuseAdmin: true,
  },
];

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
  // What the Dockerfile copies to /pb/pb_hooks.
  for (const src of [join(repoRoot, "pb_hooks"), join(repoRoot, "docker", "hooks")]) {
    for (const name of readdirSync(src).filter((n) => n.endsWith(".pb.js"))) copyFileSync(join(src, name), join(hooksDir, name));
  }
  for (const [name, content] of Object.entries(extraHooks)) writeFileSync(join(hooksDir, name), content);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    ["serve", "--http", `127.0.0.1:${port}`, "--dir", join(dir, "pb_data"), "--hooksDir", hooksDir,
      "--migrationsDir", join(repoRoot, "pb_migrations"), "--hooksWatch=false", "--hooksPool=100"],
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
  const image = mode === "container" ? await buildPocketBaseImage(repoRoot, binary, version) : "";
  const buildMs = Date.now() - t0;
  const results = await Promise.allSettled(
    CASES.map(async (c) => {
      const env = { PB_ADMIN_EMAIL: EMAIL, PB_ADMIN_PASSWORD: c.password };
      const extraHooks: Record<string, string> = c.refuseAdmin ? { [REFUSE_ADMIN_FILE]: REFUSE_ADMIN_HOOK } : {};
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

describe("Docker image: first admin from PB_ADMIN_EMAIL / PB_ADMIN_PASSWORD", () => {
  for (const c of CASES) {
    if (c.expect === "admin") {
      it(`a password of ${c.name} gives an admin that signs in, and no anonymous admin creation`, async () => {
        const { run } = started.get(c.name)!;
        const logs = await run.logs();
        expect(run.outcome, logs).toMatchObject({ kind: "answering", healthStatus: 200 });
        const url = (run.outcome as { url: string }).url;

        const intruder = await post(url, "/api/admins", INTRUDER);
        expect(intruder.status, JSON.stringify(intruder.body)).toBe(401);

        const auth = await post(url, "/api/admins/auth-with-password", { identity: EMAIL, password: c.password });
        expect(auth.status, JSON.stringify(auth.body)).toBe(200);
        expect(auth.body.admin.email).toBe(EMAIL);
        const admins = await fetch(`${url}/api/admins`, { headers: { authorization: auth.body.token } }).then((r) => r.json());
        expect(admins.items.map((a: { email: string }) => a.email)).toEqual([EMAIL]);
        expect(logs).toMatch(c.message);
      });
    } else {
      it(`a password of ${c.name} never gives a server with an open admin-creation route`, async () => {
        const { run } = started.get(c.name)!;
        const logs = await run.logs();
        if (run.outcome.kind === "exited") {
          // Stopped at start, with one sentence that says what is wrong.
          expect(run.outcome.exitCode, logs).not.toBe(0);
          expect(logs).toMatch(c.message);
          return;
        }
        // Still answering: then every request must be refused, an anonymous POST /api/admins first of all.
        const url = run.outcome.url;
        const intruder = await post(url, "/api/admins", INTRUDER);
        expect(intruder.status, `anonymous POST /api/admins answered ${intruder.status} ${JSON.stringify(intruder.body)}`).toBeGreaterThanOrEqual(400);
        const intruderAuth = await post(url, "/api/admins/auth-with-password", { identity: INTRUDER.email, password: INTRUDER.password });
        expect(intruderAuth.status, "the anonymous admin signs in").toBeGreaterThanOrEqual(400);
        expect(run.outcome.healthStatus, "GET /api/health").toBeGreaterThanOrEqual(400);
        const collections = await fetch(`${url}/api/collections`).then((r) => r.status);
        expect(collections, "GET /api/collections").toBeGreaterThanOrEqual(400);
      });
    }
  }
});
