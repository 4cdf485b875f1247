// PocketBase in Docker for the integration suite: the image is built from the
// project's own Dockerfile (FROM scratch, binary from .pb/docker/pocketbase),
// and each container gets its hooks file copied in at creation, so a fresh
// `npm run build` is what runs even when Docker reused a cached image layer.
import { join } from "node:path";
import {
  GenericContainer,
  ImageName,
  Wait,
  getContainerRuntimeClient,
  type StartedTestContainer,
} from "testcontainers";
import { elfInterpreter, installBinaryCopy, sameFileContent } from "../../../scripts/lib/pocketbase-binary.mjs";

const PB_PORT = 8090;
/** Where the Dockerfile expects the binary (the runtime helper's `get-pocketbase --docker-context` writes the same). */
export const DOCKER_BINARY = join(".pb", "docker", "pocketbase");
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

/** Copies the binary into the Docker build context and builds `pb-fleet-test:<version>`. */
export async function buildPocketBaseImage(repoRoot: string, binaryPath: string, version: string): Promise<string> {
  const target = join(repoRoot, DOCKER_BINARY);
  const interpreter = await elfInterpreter(binaryPath);
  if (interpreter !== null) {
    throw new Error(`${binaryPath} is dynamically linked (needs ${interpreter}) and cannot run in the scratch image: build it with CGO_ENABLED=0 or unset POCKETBASE_BIN.`);
  }
  if (!(await sameFileContent(binaryPath, target))) await installBinaryCopy(binaryPath, target);
  const tag = `pb-fleet-test:${version}`;
  await GenericContainer.fromDockerfile(repoRoot).build(tag, { deleteOnExit: false });
  // testcontainers resolves a failed build's stream without an error; an image
  // that is not there afterwards is that failure, said plainly.
  const client = await getContainerRuntimeClient();
  if (!(await client.image.exists(ImageName.fromString(tag)))) {
    throw new Error(`docker build of ${repoRoot}/Dockerfile did not produce ${tag}: run \`docker build -t ${tag} .\` to see why`);
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
