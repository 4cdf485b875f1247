/**
 * What the page needs of the PocketBase JS SDK, the same for both server
 * lines. Each line has its own SDK (pocketbase@0.21 for PocketBase 0.22,
 * pocketbase@0.28 for 0.23+), wrapped by sdk-0.22.ts and sdk-0.23.ts, which
 * are built as separate files so the page downloads only the one its server
 * needs. Only sign-in differs; the rest is the shared code below, written
 * against the few SDK members both versions have with the same meaning.
 */

export type Line = "0.22" | "0.23";

/** A failed request, as plain data (the two SDKs' error classes are different classes). */
export interface RequestFailure {
  /** HTTP status; 0 when no answer came (server gone, network down, timed out). */
  status: number;
  /** The server's `message` or `error`, else the SDK's. */
  message: string;
}

export interface JobEvent {
  action: string;
  record: { [field: string]: unknown };
}

export interface ListOptions {
  filter: string;
  sort: string;
  fields: string;
}

export type Unsubscribe = () => Promise<void>;

export interface SdkBinding {
  readonly line: Line;
  /** The signed-in admin's (0.22) or superuser's (0.23+) email, "" when none is stored. */
  account(): string;
  /** A session is stored and its token not expired (the server may still refuse it: refreshSession). */
  hasSession(): boolean;
  signIn(email: string, password: string): Promise<void>;
  /** Asks the server whether the stored session is still good, and extends it. */
  refreshSession(): Promise<void>;
  signOut(): void;
  /** A fleet endpoint (or any API path), with the session's token. */
  send<T>(path: string, options: { method: "GET" | "POST"; body?: unknown; query?: { [name: string]: string | number } }): Promise<T>;
  /** One bounded page of a collection's records (no total count: it would cost a COUNT over the table). */
  list<T>(collection: string, perPage: number, options: ListOptions): Promise<T[]>;
  /** The same with the total count of the filter's records: only for small tables (it costs a COUNT). */
  listWithTotal<T>(collection: string, perPage: number, options: ListOptions): Promise<{ items: T[]; totalItems: number }>;
  /** Changes fields of one record through the record API (its rules apply; admins may change any). */
  update(collection: string, id: string, body: { [field: string]: unknown }): Promise<void>;
  /** One record by id (a primary-key lookup), only `fields`. */
  getOne<T>(collection: string, id: string, fields: string): Promise<T>;
  /** Every create/update/delete of a collection's records, with only `fields` in each event; answers how to stop. */
  subscribe(collection: string, fields: string, onEvent: (event: JobEvent) => void): Promise<Unsubscribe>;
  /** Called on every (re)connection of the realtime stream: events sent while it was down are lost. */
  onRealtimeConnect(callback: () => void): Promise<Unsubscribe>;
  isRealtimeConnected(): boolean;
}

/** The members of a PocketBase SDK client (either version) the shared code uses. */
export interface SdkClient {
  send(path: string, options: { [key: string]: unknown }): Promise<unknown>;
  collection(name: string): {
    getList(page: number, perPage: number, options: { [key: string]: unknown }): Promise<{ items: unknown[]; totalItems: number }>;
    update(id: string, body: { [field: string]: unknown }, options: { [key: string]: unknown }): Promise<unknown>;
    getOne(id: string, options: { [key: string]: unknown }): Promise<unknown>;
    subscribe(topic: string, callback: (data: JobEvent) => void, options: { [key: string]: unknown }): Promise<Unsubscribe>;
  };
  realtime: {
    subscribe(topic: string, callback: (data: unknown) => void): Promise<Unsubscribe>;
    readonly isConnected: boolean;
  };
  authStore: { readonly isValid: boolean; clear(): void };
  autoCancellation(enable: boolean): unknown;
}

/** Each request gives up after this long; a server that accepts but never answers counts as gone. */
const REQUEST_TIMEOUT_MS = 10_000;

export function toFailure(err: unknown): RequestFailure {
  const e = err as { status?: unknown; response?: { message?: unknown; error?: unknown }; message?: unknown } | null;
  const status = typeof e?.status === "number" ? e.status : 0;
  const fromServer = e?.response?.error ?? e?.response?.message;
  const message = typeof fromServer === "string" && fromServer !== "" ? fromServer : String(e?.message ?? err);
  return { status, message };
}

/** A caught error as a RequestFailure: the one thrown by attempt() as it is, anything else converted. */
export function asFailure(err: unknown): RequestFailure {
  const isFailure = typeof err === "object" && err !== null && typeof (err as RequestFailure).status === "number";
  return isFailure ? (err as RequestFailure) : toFailure(err);
}

/** Runs an SDK call; any failure is thrown as a RequestFailure. */
export async function attempt<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toFailure(err);
  }
}

/** The shared part of a binding: everything but the line and its sign-in. */
export function sharedBinding(
  pb: SdkClient,
): Pick<SdkBinding, "send" | "list" | "listWithTotal" | "update" | "getOne" | "subscribe" | "onRealtimeConnect" | "isRealtimeConnected"> {
  // Several list pages of one collection load at once: the SDK's auto-cancellation
  // (one pending request per method and path) would cancel all but the last.
  pb.autoCancellation(false);
  const firstPage = (collection: string, perPage: number, { filter, sort, fields }: ListOptions, skipTotal: boolean) =>
    attempt(() => pb.collection(collection).getList(1, perPage, { filter, sort, fields, skipTotal, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  return {
    send: (path, { method, body, query }) =>
      attempt(() => pb.send(path, { method, body, query, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })) as Promise<never>,
    list: async (collection, perPage, options) => (await firstPage(collection, perPage, options, true)).items as never[],
    listWithTotal: (collection, perPage, options) => firstPage(collection, perPage, options, false) as Promise<never>,
    update: async (collection, id, body) => {
      await attempt(() => pb.collection(collection).update(id, body, { fields: "id", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
    },
    getOne: (collection, id, fields) =>
      attempt(() => pb.collection(collection).getOne(id, { fields, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })) as Promise<never>,
    subscribe: (collection, fields, onEvent) => attempt(() => pb.collection(collection).subscribe("*", onEvent, { fields })),
    onRealtimeConnect: (callback) => attempt(() => pb.realtime.subscribe("PB_CONNECT", () => callback())),
    isRealtimeConnected: () => pb.realtime.isConnected,
  };
}
