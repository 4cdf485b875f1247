// Builds each client's conformance worker once per run, as its users would get
// it: the Node client compiled to dist/ (tsc), the Python package installed
// from clients/python into a virtual environment of its own (pip builds the
// wheel), the Go worker compiled from clients/go. A missing toolchain fails the
// run with a sentence: under CI no client may be skipped, and outside it
// neither, since a skipped client proves nothing.
//
// PB_FLEET_CONFORMANCE_PYTHON: a Python that already has pb_fleet installed
// (CI's fresh virtual environment, after clients/python/ci.sh), used as is.
// PB_FLEET_CONFORMANCE_CLIENTS=node,go builds only those while working on one
// client (the others' files then fail, saying so); CI=true refuses it.
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { BUILD_DIR, REPO_ROOT, type ConformanceClient } from "./clients";

const run = promisify(execFile);

function log(message: string): void {
  console.log(`[pb-fleet conformance] ${message}`);
}

async function step(what: string, command: string, args: string[], cwd = REPO_ROOT): Promise<void> {
  const started = Date.now();
  try {
    await run(command, args, { cwd, maxBuffer: 32 * 1024 * 1024, timeout: 600_000 });
  } catch (error) {
    const e = error as { code?: string; stderr?: string; stdout?: string; message: string };
    const why = e.code === "ENOENT" ? `${command} is not installed` : `${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`;
    throw new Error(`conformance: could not ${what}: ${why}`);
  }
  log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function nodeClient(): Promise<ConformanceClient> {
  await step("build the Node client (tsc -p tsconfig.client.json)", process.execPath, [resolve(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.client.json"]);
  return { name: "node", command: process.execPath, args: [resolve(REPO_ROOT, "test/conformance/workers/node-worker.mjs")], cwd: REPO_ROOT };
}

async function pythonClient(): Promise<ConformanceClient> {
  const given = process.env.PB_FLEET_CONFORMANCE_PYTHON;
  let python: string;
  if (given) {
    python = given;
  } else {
    const venv = join(BUILD_DIR, "python-venv");
    python = join(venv, "bin", "python");
    if (!existsSync(python)) await step("create a Python virtual environment", "python3", ["-m", "venv", venv]);
    // Built from a copy: pip's in-tree build would leave build/ and *.egg-info in the checkout.
    const source = join(BUILD_DIR, "python-source");
    rmSync(source, { recursive: true, force: true });
    cpSync(resolve(REPO_ROOT, "clients/python"), source, {
      recursive: true,
      filter: (path) => !/(^|[\\/])(build|dist|__pycache__|[^\\/]*\.egg-info|\.mypy_cache|\.pytest_cache)$/.test(path),
    });
    await step("install clients/python into it (pip builds the wheel)", python, [
      "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--force-reinstall", "--no-deps", source,
    ]);
  }
  await step("import pb_fleet", python, ["-c", "import pb_fleet.conformance"]);
  return { name: "python", command: python, args: ["-m", "pb_fleet.conformance"], cwd: BUILD_DIR };
}

async function goClient(): Promise<ConformanceClient> {
  const binary = join(BUILD_DIR, "pb-fleet-conformance-go");
  await step("build the Go conformance worker", "go", ["build", "-o", binary, "./cmd/pb-fleet-conformance"], resolve(REPO_ROOT, "clients/go"));
  return { name: "go", command: binary, args: [], cwd: BUILD_DIR };
}

export default async function setup(project: TestProject): Promise<void> {
  mkdirSync(BUILD_DIR, { recursive: true });
  // One after the other: the machine has two cores, and each build takes both.
  const builds = { node: nodeClient, python: pythonClient, go: goClient };
  const only = process.env.PB_FLEET_CONFORMANCE_CLIENTS;
  if (only && process.env.CI === "true") throw new Error("conformance: CI runs every client; unset PB_FLEET_CONFORMANCE_CLIENTS.");
  const wanted = only ? only.split(",").map((s) => s.trim()) : Object.keys(builds);
  const clients: Record<string, ConformanceClient> = {};
  for (const name of wanted) {
    const build = builds[name as keyof typeof builds];
    if (!build) throw new Error(`conformance: PB_FLEET_CONFORMANCE_CLIENTS names ${JSON.stringify(name)}; the clients are ${Object.keys(builds).join(", ")}.`);
    const client = await build();
    clients[client.name] = client;
  }
  project.provide("conformanceClients", clients);
}
