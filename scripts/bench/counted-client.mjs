// A pb-fleet client as a Worker sees it, with its calls counted: the same
// methods (completeAndClaim only when the client has it), each passed through to the FleetClient, and a tally of the requests
// by endpoint and of the items of each batch call. Used by the benchmark's
// `batched` phase (batched-fleet.mjs) and by the batched crash soak
// (test/integration/support-soak/fleet-process.mjs, `countCalls`), so both can
// tell the batch endpoints carried the load.

/**
 * @param {any} client a FleetClient
 * @param {{ onClaimed?: (held: unknown[]) => void }} [hooks] onClaimed: each claim-next's answer
 */
export function countedClient(client, { onClaimed } = {}) {
  /** Requests by endpoint. */
  const calls = { claimNext: 0, heartbeat: 0, complete: 0, renew: 0, release: 0, completeAndClaim: 0 };
  /** What the batch calls carried: jobs claimed (by claim-next; by completes that claim), leases heartbeated, releases completed. */
  const items = { claimed: 0, rideClaimed: 0, heartbeatItems: 0, completeItems: 0 };
  const api = {
    // A worker identity's Worker asks who it is before its first claim (not counted: one sign-in answer).
    get isWorkerIdentity() {
      return client.isWorkerIdentity;
    },
    identity: (...a) => client.identity(...a),
    async claimNext(opts, req) {
      calls.claimNext++;
      const held = await client.claimNext(opts, req);
      items.claimed += held.length;
      onClaimed?.(held);
      return held;
    },
    claim: (...a) => client.claim(...a),
    renew: (...a) => {
      calls.renew++;
      return client.renew(...a);
    },
    release: (...a) => {
      calls.release++;
      return client.release(...a);
    },
    writeResult: (...a) => client.writeResult(...a),
    listExpiredLeases: (...a) => client.listExpiredLeases(...a),
    sweep: (...a) => client.sweep(...a),
    heartbeat: (workerId, leases, opts) => {
      calls.heartbeat++;
      items.heartbeatItems += leases.length;
      return client.heartbeat(workerId, leases, opts);
    },
    complete: (workerId, releases, req) => {
      calls.complete++;
      items.completeItems += releases.length;
      return client.complete(workerId, releases, req);
    },
    // A client with it (from issue 21 on): a complete call that also claims, one complete request (also counted on its own).
    ...(typeof client.completeAndClaim === "function" ? {
      async completeAndClaim(workerId, releases, claim, req) {
        calls.complete++;
        calls.completeAndClaim++;
        items.completeItems += releases.length;
        const answer = await client.completeAndClaim(workerId, releases, claim, req);
        if (answer.jobs) {
          items.rideClaimed += answer.jobs.length;
          onClaimed?.(answer.jobs);
        }
        return answer;
      },
    } : {}),
  };
  return { api, calls, items };
}
