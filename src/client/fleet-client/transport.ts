/**
 * The client's transport: one HTTP request with its timeout and cancellation,
 * JSON both ways, and every answer but a 2xx with JSON thrown as a typed
 * error. The request itself goes through a Requester: Node's http by default
 * (node-http.ts), or a `fetch` the client was given. It knows nothing of
 * signing in: its caller gives it the token to send (auth.ts's Session, which
 * signs in again when a token is refused).
 */
import {
  FleetAbortError,
  FleetAuthError,
  FleetForbiddenError,
  FleetHttpError,
  FleetNetworkError,
  FleetProtocolError,
  FleetTimeoutError,
  isTransientError,
} from "../errors.js";
import { MAX_ANSWER_BYTES } from "../../lib/queue.js";
import { isObject } from "../json-object.js";
import type { RequestOptions } from "./types.js";

/** One HTTP request of the client. */
export interface HttpCall {
  method: "GET" | "POST" | "PATCH";
  /** From the server's root, e.g. /api/fleet/claim. */
  path: string;
  query?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
}

/** One request as the transport hands it to a Requester: the whole URL, the body already JSON text. */
export interface HttpRequest {
  method: HttpCall["method"];
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The whole request's time, ms (at least 1): past it the Requester rejects with a RequestTimedOut. */
  timeoutMs: number;
  /** The caller's cancellation: once aborted, the Requester rejects (with whatever error). */
  signal?: AbortSignal;
}

/** A whole answer: its status and its body as text. */
export interface HttpAnswer {
  status: number;
  text: string;
}

/** Sends one request; rejects when it cannot get a whole answer (a network error, its time, the signal). */
export type Requester = (request: HttpRequest) => Promise<HttpAnswer>;

/** A Requester's rejection when the request's time ran out. */
export class RequestTimedOut extends Error {
  constructor(options?: ErrorOptions) {
    super("the request's time ran out", options);
    this.name = "RequestTimedOut";
  }
}

/** A Requester's rejection when the answer is larger than it reads (MAX_ANSWER_BYTES). */
export class AnswerTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes, the most the client reads`);
    this.name = "AnswerTooLarge";
  }
}

/** A Requester over a fetch implementation (a client's `fetch` option); answers past `maxAnswerBytes` are refused. */
export function fetchRequester(fetchImpl: typeof fetch, maxAnswerBytes: number = MAX_ANSWER_BYTES): Requester {
  return async ({ method, url, headers, body, timeoutMs, signal }) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetchImpl(url, {
        method, headers, signal: signal ? AbortSignal.any([timeout, signal]) : timeout, ...(body !== undefined ? { body } : {}),
      });
      return { status: response.status, text: await boundedText(response, maxAnswerBytes) };
    } catch (err) {
      throw timeout.aborted && !signal?.aborted ? new RequestTimedOut({ cause: err }) : err;
    }
  };
}

/** A fetch answer's body as text, refused past `maxBytes` (read as it comes, never whole first). */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    await response.body?.cancel();
    throw new AnswerTooLarge(maxBytes);
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel();
      throw new AnswerTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, bytes).toString("utf8");
}

/** What the endpoint calls need of the client: requests made as its signed-in identity. */
export interface AuthorizedCalls {
  /** One request, its answer as parsed JSON. */
  call(op: string, call: HttpCall, req?: RequestOptions): Promise<unknown>;
  /** A POST of a JSON body, its undefined fields left out. */
  post(op: string, path: string, body: Record<string, unknown>, req?: RequestOptions): Promise<unknown>;
}

export class Transport {
  /** The server's base URL, without a trailing slash. */
  readonly url: string;
  /** The request timeout, ms, unless a call gives its own. */
  readonly timeoutMs: number;
  readonly #request: Requester;
  /** A worker identity's 403 is what the identity may do (FleetForbiddenError), an admin's a refused token. */
  readonly #isWorker: boolean;

  constructor(url: string, timeoutMs: number, request: Requester, isWorker: boolean) {
    this.url = url;
    this.timeoutMs = timeoutMs;
    this.#request = request;
    this.#isWorker = isWorker;
  }

  /**
   * One HTTP request with `token` ("": none, as for the sign-in itself), its
   * answer as parsed JSON; anything but a 2xx with JSON is thrown as a typed error.
   */
  async send(op: string, call: HttpCall, token: string, req?: RequestOptions): Promise<unknown> {
    const timeoutMs = req?.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string> = { accept: "application/json" };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    // Both lines take the bare token (a "Bearer " prefix is optional there).
    if (token !== "") headers["authorization"] = token;
    const query = call.query ? `?${new URLSearchParams(call.query)}` : "";
    let status: number;
    let text: string;
    try {
      ({ status, text } = await this.#request({
        method: call.method,
        url: `${this.url}${call.path}${query}`,
        headers,
        timeoutMs: Math.max(1, timeoutMs),
        ...(req?.signal ? { signal: req.signal } : {}),
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      }));
    } catch (err) {
      if (req?.signal?.aborted) throw new FleetAbortError(op, { cause: err });
      if (err instanceof RequestTimedOut) throw new FleetTimeoutError(op, timeoutMs, { cause: err });
      // Not transient: the same request would get the same answer.
      if (err instanceof AnswerTooLarge) throw new FleetProtocolError(op, err.message, "");
      throw new FleetNetworkError(op, networkMessage(err), { cause: err });
    }
    const parsed = parseJson(text);
    if (status >= 200 && status < 300) {
      if (!parsed.ok) throw new FleetProtocolError(op, `answer is not JSON: ${snippet(text)}`, text);
      return parsed.value;
    }
    // A body that is not JSON (say, a proxy's error page) is kept as its text.
    const body = parsed.ok ? parsed.value : text === "" ? {} : text;
    // A worker identity's token was taken, but it may not do this: no sign-in can change that.
    if (status === 403 && this.#isWorker) throw new FleetForbiddenError(op, messageOf(body), body);
    // Every other call here needs an admin/superuser: 401 or 403 means the token was not taken as one.
    if (status === 401 || status === 403) {
      throw new FleetAuthError(op, messageOf(body), body, { status });
    }
    throw new FleetHttpError(op, status, messageOf(body), body);
  }
}

/** The call, and once more after a transient failure (timeout, lost connection, 5xx). */
export async function retryOnce<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!isTransientError(err)) throw err;
    return attempt();
  }
}

export function dropUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

/** The protocol's `{ error }`, or PocketBase's `{ message, data }` with its field errors, or a text answer's start. */
export function messageOf(body: unknown): string {
  if (typeof body === "string") return snippet(body);
  if (!isObject(body)) return "no message";
  if (typeof body["error"] === "string") return body["error"];
  let text = typeof body["message"] === "string" ? body["message"] : "no message";
  const data = body["data"];
  if (isObject(data) && Object.keys(data).length > 0) {
    const fields = Object.entries(data)
      .map(([field, e]) => `${field}: ${isObject(e) && typeof e["message"] === "string" ? e["message"] : JSON.stringify(e)}`);
    text += ` (${fields.join("; ")})`;
  }
  return text;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function snippet(text: string): string {
  if (text === "") return "(empty)";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

/**
 * The error's own message with the system's code when it has one, from fetch's
 * cause ("fetch failed (ECONNREFUSED)") or Node's error ("connect ECONNREFUSED
 * 127.0.0.1:8090"), named once.
 */
function networkMessage(err: unknown): string {
  const cause = isObject(err) ? err["cause"] : undefined;
  const code = [cause, err].map((e) => (isObject(e) && typeof e["code"] === "string" ? e["code"] : undefined)).find((c) => c);
  const message = err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
