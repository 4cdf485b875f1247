// PocketBase in Docker for the integration suite: the image is built from the
// project's own Dockerfile (FROM scratch, binary at .pb/docker/pocketbase,
// the hooks line's files picked by the PB_FLEET_DIR_SUFFIX build arg), and each
// container gets its hooks file copied in at creation, so a fresh
// `npm run build` is what runs even when Docker reused a cached image layer.
// The build context is a copy of what the Dockerfile reads, staged in a temp
// folder: a run never swaps the binary of the checkout's own .pb/docker (which
// `get-pocketbase --docker-context` wrote for docker-compose), and two runs on
// different versions cannot swap each other's.
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  GenericContainer,
  ImageName,
  Wait,
  getContainerRuntimeClient,
  type StartedTestContainer,
} from "testcontainers";
import { elfInterpreter } from "../../../scripts/pocketbase/binary.mjs";
import { HOOKS_LINES } from "../../../scripts/pocketbase/lines.mjs";

const PB_PORT = 8090;
/** Where the Dockerfile expects the binary, in its build context (`get-pocketbase --docker-context` writes the same). */
const DOCKER_BINARY = join(".pb", "docker", "pocketbase");
/** What the Dockerfile reads besides the binary (.dockerignore narrows it further). */
const CONTEXT_ENTRIES = ["Dockerfile", ".dockerignore", "docker", "pb_public", ...Object.values(HOOKS_LINES).flatMap((l) => [l.hooksDir, l.migrationsDir])];
/** Where the Dockerfile puts the hooks; the copied file replaces the image's bundle. */
const HOOKS_IN_IMAGE = "/pb/pb_hooks/fleet.pb.js";

/** null when a Docker engine answers, else why not. */
export async function dockerUnavailableReason(): Promise<string | null> {
  try {
    await getContainerRuntimeClient(); // throws when no strategy reaches an engine
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Copies the binary into the Docker build context and builds
 * `pb-fleet-test:<version>-<checkout>` with the files of its hooks line: the
 * checkout's path is in the tag so two clones tested at once never share an image.
 */
export async function buildPocketBaseImage(repoRoot: string, binaryPath: string, version: string, line: keyof typeof HOOKS_LINES): Promise<string> {
  const interpreter = await elfInterpreter(binaryPath);
  if (interpreter !== null) {
    throw new Error(`${binaryPath} is dynamically linked (needs ${interpreter}) and cannot run in the scratch image: build it with CGO_ENABLED=0 or unset POCKETBASE_BIN.`);
  }
  const context = mkdtempSync(join(tmpdir(), "pb-fleet-docker-context-"));
  const tag = `pb-fleet-test:${version}-${createHash("sha256").update(repoRoot).digest("hex").slice(0, 10)}`;
  try {
    for (const entry of CONTEXT_ENTRIES) {
      if (existsSync(join(repoRoot, entry))) cpSync(join(repoRoot, entry), join(context, entry), { recursive: true });
    }
    mkdirSync(join(context, ".pb", "docker"), { recursive: true });
    copyFileSync(binaryPath, join(context, DOCKER_BINARY));
    chmodSync(join(context, DOCKER_BINARY), 0o755);
    await GenericContainer.fromDockerfile(context)
      .withBuildArgs({ PB_FLEET_DIR_SUFFIX: HOOKS_LINES[line].dirSuffix })
      .build(tag, { deleteOnExit: false });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  // testcontainers resolves a failed build's stream without an error; an image
  // that is not there afterwards is that failure, said plainly.
  const client = await getContainerRuntimeClient();
  if (!(await client.image.exists(ImageName.fromString(tag)))) {
    throw new Error(
      `docker build of ${repoRoot}/Dockerfile did not produce ${tag}: run ` +
        `\`docker build --build-arg PB_FLEET_DIR_SUFFIX=${HOOKS_LINES[line].dirSuffix} -t ${tag} .\` to see why`,
    );
  }
  return tag;
}

export interface PocketBaseContainer {
  url: string;
  /** What `pocketbase --version` prints inside the container. */
  versionLine: string;
  stop(): Promise<void>;
}

export async function startPocketBaseContainer(opts: {
  image: string;
  hooksFile: string;
  env?: Record<string, string>;
  /** --hooksPool; PocketBase's default when undefined. */
  hooksPool?: number;
}): Promise<PocketBaseContainer> {
  const client = await getContainerRuntimeClient();
  const config = (await client.image.inspect(ImageName.fromString(opts.image))).Config;
  const entrypoint = config.Entrypoint ?? [];
  const cmd = config.Cmd ?? [];
  const binaryInImage = entrypoint[0] ?? cmd[0];
  if (binaryInImage === undefined) throw new Error(`image ${opts.image} has neither ENTRYPOINT nor CMD`);

  let container = new GenericContainer(opts.image)
    .withExposedPorts(PB_PORT)
    .withEnvironment(opts.env ?? {})
    .withCopyFilesToContainer([{ source: opts.hooksFile, target: HOOKS_IN_IMAGE, mode: 0o644 }])
    .withWaitStrategy(Wait.forHttp("/api/health", PB_PORT).forStatusCode(200))
    .withStartupTimeout(60_000);
  // Flags go after the image's own arguments (its CMD ends with `serve ...`).
  if (opts.hooksPool !== undefined) container = container.withCommand([...cmd, `--hooksPool=${opts.hooksPool}`]);
  const started: StartedTestContainer = await container.start();
  try {
    // A scratch image has no shell, but exec runs the binary itself.
    const version = await started.exec([binaryInImage, "--version"]);
    return {
      url: `http://127.0.0.1:${started.getMappedPort(PB_PORT)}`,
      versionLine: version.output.trim(),
      stop: async () => {
        await started.stop({ timeout: 5_000 });
      },
    };
  } catch (err) {
    await started.stop({ timeout: 1_000 });
    throw err;
  }
}

/**
 * The stdout and stderr so far of the running container that publishes
 * `url`'s port on 127.0.0.1 (a container of startPocketBaseContainer or
 * runPocketBaseImage); null when no running container publishes it.
 */
export async function containerOutputAt(url: string): Promise<string | null> {
  const port = Number(new URL(url).port);
  const client = await getContainerRuntimeClient();
  const found = (await client.container.list()).find((c) => c.State === "running" && c.Ports.some((p) => p.PublicPort === port));
  if (found === undefined) return null;
  const stream = await client.container.dockerode.getContainer(found.Id).logs({ stdout: true, stderr: true, follow: false });
  return demuxDockerLogs(stream as unknown as Buffer);
}

/** What a container started by runPocketBaseImage did first. */
export type ImageRunOutcome =
  | { kind: "exited"; exitCode: number }
  /** The server answered GET /api/health on the mapped 127.0.0.1 port (with any status). */
  | { kind: "answering"; url: string; healthStatus: number };

export interface ImageRun {
  outcome: ImageRunOutcome;
  /** The container's stdout and stderr so far. */
  logs(): Promise<string>;
  /** Stops the container if it runs, and removes it. */
  remove(): Promise<void>;
}

/**
 * Runs `image` exactly as built (its own CMD and baked-in hooks; nothing copied in)
 * with `env`, port 8090 published on 127.0.0.1, and waits until the server answers
 * GET /api/health with any status, or the container stops, whichever comes first.
 * Unlike startPocketBaseContainer it does not require a healthy server: it is for
 * checking what the image does at start (the container is not removed on return: call remove()).
 */
export async function runPocketBaseImage(opts: {
  image: string;
  env?: Record<string, string>;
  /** Extra files put into the container before it starts: absolute path -> content (mode 644). */
  files?: Record<string, string>;
  timeoutMs?: number;
}): Promise<ImageRun> {
  const client = await getContainerRuntimeClient();
  const container = await client.container.create({
    Image: opts.image,
    Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
    ExposedPorts: { [`${PB_PORT}/tcp`]: {} },
    Labels: { "pb-fleet-test": "run-image" },
    HostConfig: { PortBindings: { [`${PB_PORT}/tcp`]: [{ HostIp: "127.0.0.1", HostPort: "" }] } },
  });
  const run: Omit<ImageRun, "outcome"> = {
    logs: async () => demuxDockerLogs((await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer),
    remove: async () => {
      await container.remove({ force: true, v: true }).catch(() => {});
    },
  };
  try {
    if (opts.files && Object.keys(opts.files).length > 0) {
      await client.container.putArchive(container, Readable.from([tarOf(opts.files)]), "/");
    }
    await client.container.start(container);
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    while (Date.now() < deadline) {
      const info = await client.container.inspect(container);
      if (!info.State.Running) return { ...run, outcome: { kind: "exited", exitCode: info.State.ExitCode } };
      const hostPort = info.NetworkSettings.Ports?.[`${PB_PORT}/tcp`]?.[0]?.HostPort;
      if (hostPort) {
        const url = `http://127.0.0.1:${hostPort}`;
        const status = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(1_000) }).then(
          (res) => res.status,
          () => 0,
        );
        if (status !== 0) return { ...run, outcome: { kind: "answering", url, healthStatus: status } };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${opts.image} neither answered nor exited within ${opts.timeoutMs ?? 30_000} ms; its output:\n${await run.logs()}`);
  } catch (err) {
    await run.remove();
    throw err;
  }
}

/** Docker's non-TTY log stream: frames of an 8-byte header (stream, 3 zero bytes, big-endian length) and the bytes. */
function demuxDockerLogs(raw: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= raw.length) {
    const size = raw.readUInt32BE(at + 4);
    parts.push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return Buffer.concat(parts).toString("utf8");
}

/** A ustar archive of regular files (absolute path -> content), as Docker's putArchive takes it. */
function tarOf(files: Record<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, content] of Object.entries(files)) {
    const name = path.replace(/^\/+/, "");
    if (Buffer.byteLength(name) > 99) throw new Error(`tarOf: path too long for a plain ustar name: ${path}`);
    const body = Buffer.from(content, "utf8");
    const header = Buffer.alloc(512);
    const field = (offset: number, length: number, value: string) => header.write(value, offset, length, "ascii");
    field(0, 100, name);
    field(100, 8, "0000644\0");
    field(108, 8, "0000000\0");
    field(116, 8, "0000000\0");
    field(124, 12, body.length.toString(8).padStart(11, "0") + "\0");
    field(136, 12, Math.floor(Date.now() / 1000).toString(8).padStart(11, "0") + "\0");
    field(148, 8, "        ");
    field(156, 1, "0");
    field(257, 8, "ustar\u000000");
    let sum = 0;
    for (const byte of header) sum += byte;
    field(148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
