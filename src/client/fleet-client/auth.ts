/**
 * The client's sign-in: an admin's (PocketBase 0.22, `/api/admins`) or a
 * superuser's (0.23+, the `_superusers` auth collection), found out on the
 * first sign-in, or a worker identity's (`fleet_workers`, the same path on
 * both lines); its token, and a call's sign-in again after a refused token.
 */
import { WORKERS_COLLECTION } from "../../lib/identity.js";
import { FleetAuthError, FleetForbiddenError, FleetHttpError, FleetProtocolError, isMissingEndpoint } from "../errors.js";
import { isObject } from "../json-object.js";
import { parseAuthToken, parseWorkerAuth } from "./answers.js";
import { dropUndefined, messageOf, type AuthorizedCalls, type HttpCall, type Transport } from "./transport.js";
import {
  AUTH_PATHS, WORKER_AUTH_PATHS,
  type AuthApi, type FleetClientOptions, type RequestOptions, type WorkerCredentials, type WorkerIdentity,
} from "./types.js";

/** Who a client calls as, from its options. */
export interface Credentials {
  /** An admin's or superuser's, both or neither. */
  email: string | undefined;
  password: string | undefined;
  /** A worker identity's name and password (undefined: an admin client, or a worker token only). */
  worker: { identity: string; password: string } | undefined;
  isWorker: boolean;
  /** The token to start with ("": sign in first). */
  token: string;
}

/** The options' credentials, checked: an admin's or superuser's, or a worker identity's (TypeError otherwise). */
export function credentialsOf(opts: FleetClientOptions): Credentials {
  const worker = opts.worker === undefined ? undefined : workerCredentials(opts.worker);
  if (worker !== undefined && (opts.email !== undefined || opts.password !== undefined || opts.token !== undefined)) {
    // One client, one identity: which one a call went out as must never be a guess.
    throw new TypeError("FleetClient: give admin/superuser credentials (`email`, `password`, `token`) or `worker`, not both");
  }
  const hasCredentials = typeof opts.email === "string" && typeof opts.password === "string";
  if (worker === undefined && !hasCredentials && !opts.token) {
    throw new TypeError("FleetClient: give admin/superuser `email` and `password`, an admin/superuser `token`, " +
      "or a worker identity's `worker: { identity, password }` or `worker: { token }`");
  }
  return {
    email: hasCredentials ? opts.email : undefined,
    password: hasCredentials ? opts.password : undefined,
    worker: worker !== undefined && "identity" in worker ? worker : undefined,
    isWorker: worker !== undefined,
    token: (worker !== undefined && "token" in worker ? worker.token : opts.token) ?? "",
  };
}

/** The client's identity on the server: its token, how it signs in, and its calls made as it. */
export class Session implements AuthorizedCalls {
  readonly #transport: Transport;
  readonly #email: string | undefined;
  readonly #password: string | undefined;
  readonly #worker: { identity: string; password: string } | undefined;
  readonly isWorker: boolean;
  /** The worker identity of the last sign-in or refresh (undefined: none yet; always undefined for an admin client). */
  #identity: WorkerIdentity | undefined;
  /** A token-only worker's auth-refresh on the wire (concurrent identity() calls share it). */
  #identifying: Promise<void> | null = null;
  #token: string;
  #signingIn: Promise<void> | null = null;
  /** undefined until a sign-in tells which line the server is of. */
  #authApi: AuthApi | undefined;

  constructor(transport: Transport, credentials: Credentials) {
    this.#transport = transport;
    this.#email = credentials.email;
    this.#password = credentials.password;
    this.#worker = credentials.worker;
    this.isWorker = credentials.isWorker;
    this.#token = credentials.token;
  }

  get token(): string {
    return this.#token;
  }

  get authApi(): AuthApi | undefined {
    return this.#authApi;
  }

  setToken(token: string): void {
    if (typeof token !== "string") throw new TypeError("FleetClient: setToken needs a string");
    this.#token = token;
    // A worker token may be of another record: identity() asks again.
    this.#identity = undefined;
  }

  async identity(req?: RequestOptions): Promise<WorkerIdentity | null> {
    if (!this.isWorker) return null;
    if (this.#identity !== undefined) return this.#identity;
    if (this.#token === "") {
      await this.authenticate(req);
    } else {
      // A token from elsewhere: its record is PocketBase's to tell (the token itself carries only the id).
      this.#identifying ??= this.call("identity", { method: "POST", path: WORKER_AUTH_PATHS.refresh }, req)
        .then((body) => this.#adoptWorkerAuth("identity", body))
        .finally(() => {
          this.#identifying = null;
        });
      await this.#identifying;
    }
    if (this.#identity === undefined) throw new FleetProtocolError("identity", "no worker identity after signing in", {});
    return this.#identity;
  }

  /** Signs in with the credentials; concurrent callers share one sign-in (see FleetClient.authenticate). */
  authenticate(req?: RequestOptions): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined && (this.#email === undefined || this.#password === undefined)) {
      return Promise.reject(new FleetAuthError("authenticate", this.isWorker
        ? "this client has a worker token but no worker password to sign in with"
        : "this client has a token but no credentials to sign in with", {}));
    }
    if (this.#signingIn === null) {
      const signIn = worker !== undefined
        ? this.#signInWorker(worker.identity, worker.password, req)
        : this.#signIn(this.#email as string, this.#password as string, req);
      this.#signingIn = signIn.finally(() => {
        this.#signingIn = null;
      });
    }
    return this.#signingIn;
  }

  /**
   * One authorized call: signs in first if needed; after a 401 or 403 (the
   * fleet endpoints answer 401 to a token they do not take, the record API 403
   * on both lines) signs in again and retries once. A worker identity's 403
   * (FleetForbiddenError) is what the identity may do, not its token: thrown
   * at once.
   */
  async call(op: string, call: HttpCall, req?: RequestOptions): Promise<unknown> {
    const canSignIn = this.#email !== undefined || this.#worker !== undefined;
    if (this.#token === "" && canSignIn) await this.authenticate(req);
    const refused = this.#token;
    try {
      return await this.#transport.send(op, call, this.#token, req);
    } catch (err) {
      if (!(err instanceof FleetAuthError) || err instanceof FleetForbiddenError) throw err;
      if (!canSignIn) {
        const why = this.isWorker ? "a worker token without a password: cannot sign in again" : "token-only client: cannot sign in again";
        throw new FleetAuthError(op, `${messageOf(err.body)} (${why})`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
    }
    // A call that failed beside others shares their sign-in: when the token has
    // changed since this call went out, the new one is tried first.
    if (this.#token === refused) await this.authenticate(req);
    try {
      return await this.#transport.send(op, call, this.#token, req);
    } catch (err) {
      if (err instanceof FleetAuthError) {
        throw new FleetAuthError(op, `${messageOf(err.body)} (again, right after signing in)`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
      throw err;
    }
  }

  post(op: string, path: string, body: Record<string, unknown>, req?: RequestOptions): Promise<unknown> {
    return this.call(op, { method: "POST", path, body: dropUndefined(body) }, req);
  }

  /**
   * A worker identity's sign-in: PocketBase's own auth-with-password of
   * `fleet_workers`, the same path on both lines. Wrong name or password is a
   * 400 on both; on 0.23+ a disabled identity is refused too (its authRule:
   * 403), on 0.22 it signs in and its first fleet call is a 401.
   */
  async #signInWorker(identity: string, password: string, req?: RequestOptions): Promise<void> {
    let body: unknown;
    try {
      body = await this.#transport.send("authenticate", {
        method: "POST", path: WORKER_AUTH_PATHS.password, body: { identity, password },
      }, "", req);
    } catch (err) {
      if (!(err instanceof FleetHttpError)) throw err;
      const who = `worker identity ${JSON.stringify(identity)}`;
      if (err.status === 400 || err.status === 401) {
        throw new FleetAuthError("authenticate", `${messageOf(err.body)} (the ${who}'s name or password was refused)`, err.body, {
          cause: err, status: err.status,
        });
      }
      if (err.status === 403) {
        throw new FleetAuthError("authenticate", `${messageOf(err.body)} (the ${who} may not sign in: is it disabled?)`, err.body, {
          cause: err, status: 403,
        });
      }
      if (err.status === 404) {
        throw new FleetHttpError("authenticate", 404, `${this.#transport.url} has no ${WORKERS_COLLECTION} collection ` +
          `(${messageOf(err.body)}): is this a pb-fleet server with worker identities, and are its migrations applied?`,
        err.body, { cause: err });
      }
      throw err;
    }
    this.#adoptWorkerAuth("authenticate", body);
  }

  /** A worker's auth answer (sign-in or refresh): its token from now on, and its identity. */
  #adoptWorkerAuth(op: string, body: unknown): void {
    const { token, identity } = parseWorkerAuth(op, body);
    this.#token = token;
    this.#identity = identity;
  }

  /** An admin's first sign-in tries 0.23+'s superusers, then 0.22's admins; later ones the line that answered first. */
  async #signIn(email: string, password: string, req?: RequestOptions): Promise<void> {
    const order: AuthApi[] = this.#authApi === "admins" ? ["admins", "superusers"] : ["superusers", "admins"];
    let missing: FleetHttpError | undefined;
    for (const api of order) {
      let body: unknown;
      try {
        body = await this.#transport.send("authenticate", {
          method: "POST", path: AUTH_PATHS[api], body: { identity: email, password },
        }, "", req);
      } catch (err) {
        if (isMissingEndpoint(err)) {
          missing = err as FleetHttpError;
          continue; // the other line's endpoint
        }
        // Any other HTTP answer (400 for wrong credentials, ...) says the endpoint exists.
        if (err instanceof FleetHttpError) this.#authApi = api;
        // Both lines answer wrong credentials with a 400: the credentials are
        // refused, which signing in again cannot cure.
        if (err instanceof FleetHttpError && err.status === 400) {
          throw new FleetAuthError("authenticate", `${messageOf(err.body)} ` +
            `(the ${api === "admins" ? "admin" : "superuser"} email or password was refused)`, err.body, { cause: err, status: 400 });
        }
        throw err;
      }
      this.#authApi = api;
      this.#token = parseAuthToken("authenticate", body);
      return;
    }
    throw new FleetHttpError("authenticate", 404,
      `neither ${AUTH_PATHS.superusers} (PocketBase 0.23+) nor ${AUTH_PATHS.admins} (0.22) exists at ${this.#transport.url}: ` +
      "is this the base URL of a PocketBase server?", missing?.body ?? {}, { cause: missing });
  }
}

/** The `worker` option, checked: a name and a password, or a token (TypeError otherwise). */
function workerCredentials(worker: unknown): WorkerCredentials {
  if (isObject(worker)) {
    const { identity, password, token } = worker;
    const given = (v: unknown) => v !== undefined;
    if (!given(token) && typeof identity === "string" && identity !== "" && typeof password === "string" && password !== "") {
      return { identity, password };
    }
    if (!given(identity) && !given(password) && typeof token === "string" && token !== "") return { token };
  }
  throw new TypeError("FleetClient: `worker` must be { identity, password } (a worker identity's name and password) " +
    "or { token } (a worker identity's token), each a non-empty string");
}

function authStatus(err: FleetAuthError): 400 | 401 | 403 {
  return err.status === 403 ? 403 : err.status === 400 ? 400 : 401;
}
