// One conformance worker process (docs/client-conformance.md): spawned with
// the contract's environment, its stdout read as JSON event lines, its exit
// awaited. Every line it prints is kept, so a failing scenario shows what the
// worker saw.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { ConformanceClient } from "./clients";

export interface WorkerEvent {
  event: "ready" | "start" | "signal" | "crash" | "stopped";
  jobId?: string;
  attempt?: number;
  workerId?: string;
  /** When the harness read the line (ms since the epoch). */
  at: number;
}

export interface WorkerSettings {
  url: string;
  identity: string;
  password: string;
  suffix: string;
  queue: string;
  concurrency?: number;
  leaseSeconds?: number;
  pollMs?: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class WorkerProcess {
  readonly events: WorkerEvent[] = [];
  readonly exited: Promise<Exit>;
  #child: ChildProcess;
  #stderr = "";
  #waiters: Array<() => void> = [];

  constructor(client: ConformanceClient, settings: WorkerSettings) {
    this.#child = spawn(client.command, client.args, {
      cwd: client.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PB_FLEET_URL: settings.url,
        PB_FLEET_WORKER_IDENTITY: settings.identity,
        PB_FLEET_WORKER_PASSWORD: settings.password,
        PB_FLEET_WORKER_ID: settings.suffix,
        PB_FLEET_QUEUE: settings.queue,
        PB_FLEET_CONCURRENCY: String(settings.concurrency ?? 4),
        PB_FLEET_LEASE_SECONDS: String(settings.leaseSeconds ?? 3),
        PB_FLEET_POLL_MS: String(settings.pollMs ?? 200),
      },
    });
    createInterface({ input: this.#child.stdout! }).on("line", (line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        this.#stderr += `[not a JSON event line on stdout] ${line}\n`;
        return;
      }
      this.events.push({ ...(parsed as Omit<WorkerEvent, "at">), at: Date.now() });
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.#child.stderr!.on("data", (chunk: Buffer) => {
      // Bounded: the tail is what explains a failure.
      this.#stderr = (this.#stderr + chunk.toString()).slice(-20_000);
    });
    this.exited = new Promise((resolve) => {
      this.#child.once("exit", (code, signal) => {
        for (const wake of this.#waiters.splice(0)) wake();
        resolve({ code, signal });
      });
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Its events of one kind (and one job). */
  eventsOf(kind: WorkerEvent["event"], jobId?: string): WorkerEvent[] {
    return this.events.filter((e) => e.event === kind && (jobId === undefined || e.jobId === jobId));
  }

  /** Resolves once `count` events of the kind (and job) were printed; rejects at the deadline or when the process ends first. */
  async waitFor(kind: WorkerEvent["event"], opts: { jobId?: string; count?: number; timeoutMs?: number } = {}): Promise<WorkerEvent[]> {
    const count = opts.count ?? 1;
    const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
    let ended = false;
    void this.exited.then(() => (ended = true));
    for (;;) {
      const found = this.eventsOf(kind, opts.jobId);
      if (found.length >= count) return found;
      const left = deadline - Date.now();
      if (left <= 0 || ended) {
        throw new Error(
          `waited for ${count} "${kind}" event(s)${opts.jobId ? ` of ${opts.jobId}` : ""}, got ${found.length}` +
            `${ended ? " before the process ended" : ` in ${opts.timeoutMs ?? 20_000} ms`}.\n` +
            `events: ${JSON.stringify(this.events)}\nstderr tail: ${this.#stderr.slice(-4000)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** SIGTERM (the contract's graceful stop), then its exit, or SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<Exit> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGTERM");
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
  }

  /** What to print when an assertion about this worker fails. */
  describe(): string {
    return `events: ${JSON.stringify(this.events)}\nstderr tail: ${this.#stderr.slice(-4000)}`;
  }
}
