// A worker process for queue-poison-attempts.test.ts: claims one job over the
// raw API (claim by id, or claim-next under a prefix), then works on it,
// renewing its short lease with progress, until the test SIGKILLs it. Each
// answer is printed to stdout as one JSON line (stdout to a pipe is
// synchronous on Linux: a printed line reaches the parent even if this process
// is killed right after). Configured by the JSON in POISON_WORKER_CONFIG:
// { url, token, mode: "claim" | "claim-next", jobId?, prefix?, workerId, leaseSeconds, renewEveryMs }.

const { url, token, mode, jobId, prefix, workerId, leaseSeconds, renewEveryMs } = JSON.parse(process.env.POISON_WORKER_CONFIG ?? "{}");

function emit(line) {
  process.stdout.write(JSON.stringify({ pid: process.pid, ...line }) + "\n");
}

async function call(path, body) {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { Authorization: token, "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

const claim = mode === "claim"
  ? await call("/api/fleet/claim", { jobId, workerId, leaseSeconds })
  : await call("/api/fleet/claim-next", { workerId, probeKeyPrefix: prefix, leaseSeconds });
emit({ ev: "claim", ...claim });

let held = null;
if (mode === "claim" && claim.body?.claimed === true) held = { jobId, leaseToken: claim.body.leaseToken };
if (mode === "claim-next" && claim.body?.jobs?.length > 0) held = { jobId: claim.body.jobs[0].job.id, leaseToken: claim.body.jobs[0].leaseToken };
if (held === null) process.exit(0);

// The "work": a heartbeat with progress, until the test kills this process.
for (let n = 1; ; n++) {
  await new Promise((r) => setTimeout(r, renewEveryMs));
  const renew = await call("/api/fleet/renew", { jobId: held.jobId, workerId, leaseToken: held.leaseToken, leaseSeconds, progress: { step: n } });
  emit({ ev: "renew", ...renew });
  if (renew.body?.renewed !== true) process.exit(3);
}
