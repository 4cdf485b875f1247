/**
 * The client's default HTTP: Node's own `http`/`https` modules over one
 * keep-alive agent per client. It does what the transport asked of `fetch`
 * (one request, its status and text, cancelled by the signal) at well under
 * half the CPU: a claim-next of 50 jobs and its complete cost 2.2 ms of client
 * CPU this way against 5.2 ms through Node 20's fetch (the CHANGELOG's
 * figures, issue 21), and that per-call cost was most of what the Worker
 * spent per job. A client given a `fetch` option uses that instead.
 */
import http from "node:http";
import https from "node:https";
import { MAX_ANSWER_BYTES } from "../../lib/queue.js";
import { AnswerTooLarge, RequestTimedOut, type HttpAnswer, type HttpRequest, type Requester } from "./transport.js";

/**
 * How long an idle connection is kept for the next call, ms: shorter than
 * the idle timeouts of PocketBase's server (minutes) and of the proxies in
 * front of it (nginx: 75 s, load balancers: 60 s), so that a call rarely
 * meets a connection the other side just closed (undici's default is 4 s).
 */
export const IDLE_CONNECTION_MS = 4_000;

/**
 * A requester over Node's http and https, with its own agents (each client's
 * connections are its own); an answer past `maxAnswerBytes` is refused
 * (AnswerTooLarge) and its connection closed.
 */
export function nodeHttpRequester(maxAnswerBytes: number = MAX_ANSWER_BYTES): Requester {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
    "https:": new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  };
  return (request) => send(request, agents, maxAnswerBytes);
}

function send(request: HttpRequest, agents: { "http:": http.Agent; "https:": https.Agent }, maxAnswerBytes: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return reject(new TypeError(`unsupported protocol ${url.protocol} (the server's URL must be http: or https:)`));
    }
    const body = request.body === undefined ? undefined : Buffer.from(request.body, "utf8");
    const headers: http.OutgoingHttpHeaders = { ...request.headers };
    if (body !== undefined) headers["content-length"] = body.length;
    const options: http.RequestOptions = { method: request.method, headers, ...(request.signal ? { signal: request.signal } : {}) };
    const req = url.protocol === "https:"
      ? https.request(url, { ...options, agent: agents["https:"] })
      : http.request(url, { ...options, agent: agents["http:"] });
    // One timer for the whole request (an AbortSignal.timeout per call cost more than the rest of the call's set-up).
    let timedOut = false;
    // The answer passed maxAnswerBytes: whatever the closing connection then says, this is the reason.
    let tooLarge = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new RequestTimedOut());
    }, request.timeoutMs);
    const fail = (err: unknown) => {
      clearTimeout(timer);
      reject(tooLarge ? new AnswerTooLarge(maxAnswerBytes) : timedOut ? new RequestTimedOut({ cause: err }) : err);
    };
    req.on("error", fail);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      tooLarge = Number(res.headers["content-length"] ?? 0) > maxAnswerBytes;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > maxAnswerBytes) tooLarge = true;
        if (tooLarge) return void req.destroy();
        chunks.push(chunk);
      });
      res.on("error", fail);
      // A connection lost before the whole answer: an error, never a cut text.
      res.on("close", () => {
        if (tooLarge || !res.complete) return fail(lostAnswer());
        clearTimeout(timer);
        // Decoded whole: a character split across chunks is read right.
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks, bytes).toString("utf8") });
      });
      if (tooLarge) req.destroy();
    });
    req.end(body);
  });
}

function lostAnswer(): Error {
  return Object.assign(new Error("the connection closed before the whole answer came"), { code: "ECONNRESET" });
}
