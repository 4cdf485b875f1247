// The one HTTP client every benchmark variant goes through: node:http over a
// keep-alive agent, so a request never pays for a new TCP connection and
// pb-fleet, the reference hooks, the noop hook and PocketBase's own PATCH are
// all measured through the same code path.
import http from "node:http";
import { performance } from "node:perf_hooks";

/** Traffic goes to this host only (the servers listen on 127.0.0.1). */
const HOST = "127.0.0.1";
/** No single request may hang a benchmark loop (a client for bulk seeding may allow more: timeoutMs). */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * @param {{ maxSockets?: number, timeoutMs?: number }} [options] maxSockets per server; must be at
 *   least the highest concurrency measured, or requests queue in the client. timeoutMs: per request (default 30 s).
 */
export function createBenchClient({ maxSockets = 512, timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });

  /**
   * @param {{ port: number, token?: string }} server
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<{ status: number, body: any, ms: number }>} status 0 = transport error (body.error says which)
   */
  function request(server, method, path, body) {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = { accept: "application/json" };
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }
    if (server.token) headers.authorization = server.token;
    const started = performance.now();
    return new Promise((resolve) => {
      const req = http.request(
        { agent, host: HOST, port: server.port, method, path, headers, timeout: timeoutMs },
        (res) => {
          const chunks = [];
          res.on("data", (chunk) => chunks.push(chunk));
          res.on("end", () => {
            const ms = performance.now() - started;
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed = null;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              parsed = { unparsed: text.slice(0, 200) };
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, ms });
          });
          res.on("error", (err) => resolve({ status: 0, body: { error: String(err) }, ms: performance.now() - started }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (err) => resolve({ status: 0, body: { error: String(err) }, ms: performance.now() - started }));
      if (payload) req.write(payload);
      req.end();
    });
  }

  return {
    post: (server, path, body) => request(server, "POST", path, body),
    patch: (server, path, body) => request(server, "PATCH", path, body),
    get: (server, path) => request(server, "GET", path),
    close: () => agent.destroy(),
  };
}
