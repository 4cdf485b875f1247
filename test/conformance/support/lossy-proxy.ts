// A proxy on 127.0.0.1 between a worker and PocketBase that loses answers:
// for the first N requests to a path it forwards the request, lets the server
// answer (so the server has done the work), then closes the worker's
// connection without the answer. What a worker sees when a network drops the
// reply to a call that committed.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface LossyProxy {
  url: string;
  /** Answers dropped so far, by path. */
  dropped: Map<string, number>;
  close(): Promise<void>;
}

/** `drops`: path → how many of its first answers to drop. */
export async function startLossyProxy(upstream: string, drops: Record<string, number>): Promise<LossyProxy> {
  const target = new URL(upstream);
  const budget = new Map(Object.entries(drops));
  const dropped = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const left = budget.get(path) ?? 0;
    const drop = req.method === "POST" && left > 0;
    if (drop) budget.set(path, left - 1);
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        if (drop) {
          // The server has answered: the work is done. Read the answer fully, then lose it.
          answer.resume();
          answer.once("end", () => {
            dropped.set(path, (dropped.get(path) ?? 0) + 1);
            req.socket.destroy();
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.once("error", () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dropped,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
