// What /proc says about each PocketBase process: CPU time (user + system) and
// per-phase memory. CPU time per request is the benchmark's noise-robust cost
// figure: on a shared machine wall-clock throughput swings with other load, the
// CPU a server burns per request much less. VmHWM (peakRssBytes) is a
// high-water mark over the process's whole life, so it cannot say which phase
// caused it; sampling VmRSS every 100 ms and keeping the max per phase can.
import { readFileSync } from "node:fs";
import { readProcMemoryBytes } from "../pocketbase/server.mjs";

/** Linux reports process times in USER_HZ ticks, 100 per second on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process in seconds, or null when /proc cannot tell. */
export function readCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after "(comm) ": state is [0], utime [11], stime [12]
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Server CPU microseconds per operation between two readCpuSeconds values. */
export function cpuMicrosPerOp(before, after, ops) {
  if (before === null || after === null || !(ops > 0)) return null;
  return ((after - before) * 1e6) / ops;
}


/**
 * @param {() => Array<{ name: string, pid: number }>} listProcesses the servers to sample (read at each tick)
 * @param {number} [intervalMs]
 */
export function createRssSampler(listProcesses, intervalMs = 100) {
  /** phase -> server name -> max VmRSS bytes */
  const maxByPhase = new Map();
  let phase = "startup";

  const sample = () => {
    let perServer = maxByPhase.get(phase);
    if (!perServer) maxByPhase.set(phase, (perServer = new Map()));
    for (const { name, pid } of listProcesses()) {
      const rss = readProcMemoryBytes(pid, "VmRSS");
      if (rss !== null && rss > (perServer.get(name) ?? 0)) perServer.set(name, rss);
    }
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();

  return {
    /** Start attributing samples to a new phase (samples once at each boundary). */
    enter(name) {
      sample();
      phase = name;
      sample();
    },
    stop() {
      sample();
      clearInterval(timer);
    },
    /** @returns {Record<string, Record<string, number>>} phase -> server -> max VmRSS bytes */
    report() {
      const out = {};
      for (const [p, perServer] of maxByPhase) out[p] = Object.fromEntries(perServer);
      return out;
    },
  };
}
