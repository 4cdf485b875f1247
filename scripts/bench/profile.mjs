// The benchmark's --profile: where PocketBase spends its CPU under the batched
// load, measured rather than guessed.
//
// PocketBase's stock binary has no profiler endpoint, so this builds one on
// demand into the cache (never into the repository): a module whose main.go is
// PocketBase's own examples/base/main.go of that version, copied unchanged from
// the Go module cache, plus one file that imports net/http/pprof and, only when
// PB_PPROF_ADDR is set, serves it there (127.0.0.1 only: pprof is registered on
// Go's default mux, which PocketBase's own server never uses). Build:
//   <cache>/pprof-build/<version>/{go.mod,main.go,pprof.go} -> <cache>/pocketbase-pprof/<version>/pocketbase
// (`go mod tidy` then `go build`, CGO_ENABLED=0, from the Go module proxy;
// 1-3 minutes the first time). The profile itself is
//   GET http://<addr>/debug/pprof/profile?seconds=N
// read with `go tool pprof -top` (flat, then -cum) and `-raw` (every sample's
// stack), and summarized by where the time goes (see GROUPS).
//
// By hand (what the bench does):
//   node scripts/bench/profile.mjs --build [--version 0.22.21]   # prints the binary's path
//   PB_PPROF_ADDR=127.0.0.1:6060 <that binary> serve ...          # then load it
//   curl -o cpu.pprof 'http://127.0.0.1:6060/debug/pprof/profile?seconds=25'
//   go tool pprof -top <binary> cpu.pprof; go tool pprof -top -cum <binary> cpu.pprof
//   node scripts/bench/profile.mjs --summarize cpu.pprof --binary <that binary>
import { execFile } from "node:child_process";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { cacheRoot, goToolchainFor, runCommand, verifyPocketBaseBinary } from "../pocketbase/binary.mjs";
import { normalizePbVersion } from "../pocketbase/lines.mjs";

const execFileP = promisify(execFile);
const BUILD_TIMEOUT_MS = 15 * 60 * 1000;
export const PPROF_ENV = "PB_PPROF_ADDR";

export function pprofBinaryPath(version) {
  return join(cacheRoot(), "pocketbase-pprof", version, "pocketbase");
}

const PPROF_GO = `// Added by pb-fleet's scripts/bench/profile.mjs: Go's CPU profiler over HTTP,
// only when ${PPROF_ENV} is set (e.g. 127.0.0.1:6060), on Go's default mux
// (PocketBase's own router never serves it).
package main

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("${PPROF_ENV}")
	if addr == "" {
		return
	}
	go func() {
		log.Println("pprof:", http.ListenAndServe(addr, nil))
	}()
}
`;

/**
 * The pprof-enabled PocketBase of `version`, built into the cache when missing.
 * @returns {Promise<{ path: string, version: string, line: "0.22" | "0.23", source: "cache" | "built" }>}
 */
export async function ensurePprofPocketBase({ version = "0.22.21", log = (m) => console.error(m) } = {}) {
  version = normalizePbVersion(version);
  const target = pprofBinaryPath(version);
  const cached = await verifyPocketBaseBinary(target, version);
  if (cached.ok) return { path: target, version, line: cached.line, source: "cache" };

  const goVersion = await runCommand("go", ["version"], { timeoutMs: 15_000 });
  if (goVersion.error || goVersion.code !== 0) throw new Error("--profile builds PocketBase with Go's profiler: `go` is needed on PATH");
  const toolchain = goToolchainFor(version, goVersion.output);
  const env = { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod -buildvcs=false", ...(toolchain ? { GOTOOLCHAIN: toolchain.toolchain } : {}) };
  const dir = join(cacheRoot(), "pprof-build", version);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const go = async (args, what) => {
    log(`profile: (cd ${dir} && go ${args.join(" ")})`);
    const run = await runCommand("go", args, { cwd: dir, env, timeoutMs: BUILD_TIMEOUT_MS });
    if (run.code !== 0) throw new Error(`${what} failed (exit ${run.code ?? run.signal}):\n${run.output.trim().split("\n").slice(-10).join("\n")}`);
    return run.output;
  };
  await writeFile(join(dir, "go.mod"), `module pbfleet/pocketbase-pprof\n\ngo 1.22\n\nrequire github.com/pocketbase/pocketbase v${version}\n`);
  await go(["mod", "download", `github.com/pocketbase/pocketbase@v${version}`], "go mod download");
  const modDir = (await go(["list", "-m", "-f", "{{.Dir}}", `github.com/pocketbase/pocketbase`], "go list")).trim().split("\n").pop();
  await writeFile(join(dir, "main.go"), await readFile(join(modDir, "examples", "base", "main.go")));
  await writeFile(join(dir, "pprof.go"), PPROF_GO);
  await go(["mod", "tidy"], "go mod tidy");
  await mkdir(dirname(target), { recursive: true });
  const out = `${target}.tmp-${process.pid}`;
  const stamp = `-X github.com/pocketbase/pocketbase.Version=${version}`;
  try {
    await go(["build", "-trimpath", "-ldflags", stamp, "-o", out, "."], "go build");
  } catch (err) {
    if (!/linkname/.test(String(err.message))) throw err;
    await go(["build", "-trimpath", "-ldflags", `-checklinkname=0 ${stamp}`, "-o", out, "."], "go build");
  }
  await rename(out, target);
  const check = await verifyPocketBaseBinary(target, version);
  if (!check.ok) throw new Error(`the pprof PocketBase built, but ${check.reason}`);
  log(`profile: built ${target}`);
  return { path: target, version, line: check.line, source: "built" };
}

/** Takes a CPU profile of `seconds` from a pprof listener and writes it to `outFile`. */
export async function captureCpuProfile({ addr, seconds, outFile }) {
  const res = await fetch(`http://${addr}/debug/pprof/profile?seconds=${seconds}`, { signal: AbortSignal.timeout((seconds + 30) * 1000) });
  if (!res.ok) throw new Error(`pprof at ${addr}: HTTP ${res.status}`);
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, Buffer.from(await res.arrayBuffer()));
  return outFile;
}

/**
 * Where the time goes, by function name. A sample's "self" group is found
 * from its leaf frame up: GC work and the scheduler are counted where they
 * are; a generic runtime helper (memmove, map access, hashing, atomics,
 * strconv, reflect's call machinery) is charged to the first caller that
 * belongs to a named group (goja's map lookups to goja, SQLite's memcpy to
 * SQLite). These add up to 100%. A group's "inclusive" share counts the
 * samples with any of its frames on the stack: they overlap (SQLite runs
 * under goja, which runs under HTTP). First match wins.
 */
export const GROUPS = [
  {
    key: "gc",
    label: "GC + allocation (Go runtime)",
    re: /^runtime\.(gc|[a-z]*[Mm]ark|scan|greyobject|findObject|heapBits|wbBuf|bulkBarrier|malloc|nextFreeFast|newobject|newarray|makeslice|makemap|growslice|rawstring|rawbyteslice|rawruneslice|slicebytetostring|concatstring|tryDefer|spanOf|spanClass|(m|mcache|mcentral|mheap|mspan|sweep|mSpan|span|gcWork|gcBits|pageAlloc|pallocBits|spanSet|sweepLocked)\b|.*[Ss]weep|.*[Aa]lloc|memclrNoHeapPointers|typedmemclr|.*[Ss]panScan|writeHeapBits)|^runtime\.\(\*(mheap|mcache|mcentral|mspan|gcWork|gcControllerState|sweepLocked|spanSet|pageAlloc|pallocBits|gcBits|mspan|spanInlineMarkBits|gcBitsArena|scanner)\)|^internal\/runtime\/gc|^runtime\.(heapSetType|publicationBarrier|deductAssistCredit|limiterEvent)/,
  },
  {
    key: "sched",
    label: "Go scheduler, syscalls, idle (futex, epoll, preemption)",
    re: /^runtime\.(schedule|findRunnable|park_m|gopark|goready|ready|stealWork|runqgrab|runqsteal|notesleep|notewakeup|futex|epoll|netpoll|mcall|morestack|newstack|wakep|startm|stopm|handoffp|resetspinning|checkTimers|runOneTimer|runtimer|usleep|osyield|lock2|unlock2|semrelease|semacquire|casgstatus|execute|goexit|procyield|nanotime|systemstack|mPark|exitsyscall|entersyscall|reentersyscall|sysmon|retake|signalM|preemptM|asyncPreempt|doSigPreempt|sighandler|sigtramp|sigreturn|rt_sigreturn|write1|read|madvise|mmap|munmap|runqput|injectglist|goschedImpl|gosched|acquirep|releasep|pidleget|pidleput|mstart|templateThread|wirep|runSafePointFn|forEachP|traceback|callers|gentraceback|timeSleepUntil|\(\*timers\)|\(\*timer\)|\(\*mLockProfile\)|\(\*pollDesc\)|netpollblock)|^internal\/runtime\/syscall|^syscall\.|^internal\/syscall|^runtime\/internal\/syscall|^internal\/poll/,
  },
  { key: "sqlite", label: "SQLite (modernc.org/sqlite, transpiled C, and its Go driver)", re: /^modernc\.org\/(sqlite|libc|memory)|^database\/sql/ },
  { key: "goja", label: "goja: JS interpretation, its JSON and its Go bindings (reflect)", re: /^github\.com\/dop251\/goja|^github\.com\/pocketbase\/pocketbase\/plugins\/jsvm|^github\.com\/dlclark\/regexp2|^reflect\./ },
  { key: "json", label: "JSON in Go (encoding/json & co.)", re: /^encoding\/json|^github\.com\/goccy\/go-json|^github\.com\/json-iterator|^encoding\/base64/ },
  { key: "record", label: "record/model/dao/dbx (PocketBase's data layer)", re: /^github\.com\/pocketbase\/(pocketbase\/(models|daos|forms|core|tools\/(types|list|search|store|security|inflector|dbutils|hook))|dbx)|^github\.com\/spf13\/cast/ },
  { key: "http", label: "HTTP/auth (net/http, echo, JWT, crypto, sockets)", re: /^net\/|^net\.|^github\.com\/labstack|^github\.com\/golang-jwt|^crypto\/|^github\.com\/pocketbase\/pocketbase\/(apis|tools\/(router|rest|tokens|subscriptions))|^bufio|^vendor\/golang\.org\/x\/net|^mime/ },
];
const OTHER = { key: "other", label: "other (helpers with no caller in a group above)" };

function groupOf(fn) {
  return GROUPS.find((g) => g.re.test(fn)) ?? null;
}

/** The self group of a stack (leaf first): see GROUPS. */
function selfGroup(stack) {
  for (const fn of stack) {
    const g = groupOf(fn);
    if (g) return g;
  }
  return OTHER;
}

/** Parses `go tool pprof -raw`: every sample's count and stack (function names, leaf first). */
export function parseRaw(text) {
  const lines = text.split("\n");
  const locs = new Map();
  let i = lines.findIndex((l) => l.startsWith("Locations"));
  if (i !== -1) {
    let current = null;
    for (i = i + 1; i < lines.length; i++) {
      const line = lines[i];
      if (/^\S/.test(line)) break; // "Mappings" or the end
      const head = /^\s+(\d+):\s+0x[0-9a-f]+\s+M=\d+\s+(\S+)/.exec(line);
      if (head) {
        current = [head[2]];
        locs.set(head[1], current);
        continue;
      }
      // An inlined frame of the same location: "      <fn> <file>:<line> s=0".
      const inl = /^\s{10,}(\S+)\s+\S+:\d+/.exec(line);
      if (inl && current) current.push(inl[1]);
    }
  }
  // The inlined frames are listed innermost first; the location's leaf is the first name.
  const samples = [];
  const start = lines.findIndex((l) => l.startsWith("Samples:"));
  for (let j = start + 2; j < lines.length; j++) {
    const line = lines[j];
    if (!/^\s+\d/.test(line)) break;
    const m = /^\s+(\d+)\s+(\d+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const stack = [];
    for (const id of m[3].trim().split(/\s+/)) stack.push(...(locs.get(id) ?? [`?${id}`]));
    samples.push({ count: Number(m[1]), nanos: Number(m[2]), stack });
  }
  return samples;
}

/** Self and inclusive shares per group, from parseRaw's samples. */
export function groupSamples(samples) {
  const total = samples.reduce((s, x) => s + x.nanos, 0) || 1;
  const self = new Map();
  const incl = new Map();
  let inTx = 0;
  const selfInTx = new Map();
  for (const s of samples) {
    const g = selfGroup(s.stack);
    self.set(g.key, (self.get(g.key) ?? 0) + s.nanos);
    if (s.stack.some((fn) => IN_TRANSACTION.test(fn))) selfInTx.set(g.key, (selfInTx.get(g.key) ?? 0) + s.nanos);
    const seen = new Set(s.stack.map((fn) => groupOf(fn)?.key ?? OTHER.key));
    for (const key of seen) incl.set(key, (incl.get(key) ?? 0) + s.nanos);
    if (s.stack.some((fn) => IN_TRANSACTION.test(fn))) inTx += s.nanos;
  }
  const groups = [...GROUPS, OTHER].map((g) => ({
    key: g.key,
    label: g.label,
    selfPct: (100 * (self.get(g.key) ?? 0)) / total,
    inclusivePct: (100 * (incl.get(g.key) ?? 0)) / total,
    // The part of selfPct spent inside a write transaction's callback.
    selfInTransactionPct: (100 * (selfInTx.get(g.key) ?? 0)) / total,
  }));
  return { groups, inTransactionPct: (100 * inTx) / total };
}

/**
 * The callback of a write transaction (0.22: Dao.RunInTransaction; 0.23+:
 * BaseApp.RunInTransaction): PocketBase runs every write transaction on one
 * connection, so what runs inside one runs one at a time, however many cores.
 */
const IN_TRANSACTION = /RunInTransaction\.func/;

/**
 * `go tool pprof -top` (flat and cum) and the grouped breakdown of a profile.
 * @returns {Promise<{ file: string, totalSeconds: number | null, durationSeconds: number | null, topFlat: string[], topCum: string[], groups: object[], inTransactionPct: number }>}
 */
export async function summarizeProfile(file, { binary, lines = 25 } = {}) {
  const pprof = async (...args) => (await execFileP("go", ["tool", "pprof", ...args, ...(binary ? [binary] : []), file], { maxBuffer: 256 * 1024 * 1024 })).stdout;
  const flat = await pprof("-top", `-nodecount=${lines}`);
  const cum = await pprof("-top", "-cum", `-nodecount=${lines}`);
  const raw = await pprof("-raw");
  const head = /Duration:\s*([\d.]+)s,\s*Total samples = ([\d.]+)(ms|s)/.exec(flat);
  const totalSeconds = head ? Number(head[2]) / (head[3] === "ms" ? 1000 : 1) : null;
  const table = (text) => text.split("\n").filter((l) => /^\s*[\d.]+(m?s)?\s+[\d.]+%/.test(l)).slice(0, lines).map((l) => l.trim());
  return {
    file,
    durationSeconds: head ? Number(head[1]) : null,
    totalSeconds,
    header: flat.split("\n").filter((l) => /^(Duration|Showing|Type)/.test(l)),
    topFlat: table(flat),
    topCum: table(cum),
    ...groupSamples(parseRaw(raw)),
  };
}

/* ------------------------------------------------------------ CLI */

async function cli() {
  const { values } = parseArgs({
    options: { build: { type: "boolean", default: false }, version: { type: "string", default: "0.22.21" }, summarize: { type: "string" }, binary: { type: "string" } },
    strict: true,
  });
  if (values.build) {
    const b = await ensurePprofPocketBase({ version: values.version });
    console.log(b.path);
  }
  if (values.summarize) {
    const s = await summarizeProfile(resolve(values.summarize), { binary: values.binary });
    console.log(s.header.join("\n"));
    console.log("\ntop (flat):\n" + s.topFlat.join("\n"));
    console.log("\ntop (cum):\n" + s.topCum.join("\n"));
    console.log(`\n${"group".padEnd(64)} self %  of which in tx  inclusive %`);
    for (const g of s.groups) {
      console.log(`${g.label.padEnd(64)} ${g.selfPct.toFixed(1).padStart(6)}  ${g.selfInTransactionPct.toFixed(1).padStart(13)}  ${g.inclusivePct.toFixed(1).padStart(11)}`);
    }
    console.log(`\ninside write transactions (one at a time): ${s.inTransactionPct.toFixed(1)}% of the CPU samples`);
  }
  if (!values.build && !values.summarize) console.error("usage: node scripts/bench/profile.mjs [--build [--version v]] [--summarize <cpu.pprof> [--binary <path>]]");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli().catch((err) => {
    console.error(`profile: ${err.message}`);
    process.exit(1);
  });
}
