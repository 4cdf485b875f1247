// A fetch for the client's unit tests: answers each request from a table of
// routes ("POST /api/fleet/enqueue" -> handler), 404 for the rest, and keeps
// every request it saw (method, path, Authorization, JSON body).
export interface Seen {
  method: string;
  path: string;
  auth: string | null;
  body: any;
}
export type Route = (req: Seen) => Response | Promise<Response>;

export const json = (status: number, body: unknown): Response => Response.json(body, { status });
export const NOT_FOUND = { code: 404, message: "The requested resource wasn't found.", data: {} };

export function fakeFetch(routes: Record<string, Route>) {
  const seen: Seen[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    const req: Seen = {
      method: init?.method ?? "GET",
      path: url.pathname,
      auth: new Headers(init?.headers).get("authorization"),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    };
    seen.push(req);
    const route = routes[`${req.method} ${req.path}`];
    return route ? route(req) : json(404, NOT_FOUND);
  }) as typeof fetch;
  const of = (key: string) => seen.filter((s) => `${s.method} ${s.path}` === key);
  return {
    fetchImpl,
    seen,
    of,
    count: (key: string) => of(key).length,
    sequence: () => seen.map((s) => `${s.method} ${s.path} ${s.auth ?? "-"}`),
  };
}
