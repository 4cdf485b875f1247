// FleetClient's default transport (src/client/fleet-client/node-http.ts),
// Node's http over keep-alive connections, against a real HTTP server on
// loopback: answers whole (UTF-8 split across chunks), one connection for
// calls in a row, the body and headers the server reads, and every failure
// as the same typed error the fetch transport gives: its time, the caller's
// signal, a refused connection, an answer cut short (never a cut text), and
// an answer larger than the client reads (both transports).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { FleetAbortError, FleetNetworkError, FleetProtocolError, FleetTimeoutError } from "../../src/client/errors";
import { FleetClient } from "../../src/client/fleet-client";
import { nodeHttpRequester } from "../../src/client/fleet-client/node-http";
import { AnswerTooLarge, fetchRequester, type Requester } from "../../src/client/fleet-client/transport";
import { MAX_ANSWER_BYTES, MAX_ERROR_BYTES, MAX_PAYLOAD_BYTES, MAX_PROGRESS_BYTES } from "../../src/lib/queue";

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback server answering with `handler`; counts the connections it accepted. */
async function serve(handler: Handler) {
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => handler(req, body, res));
  });
  let connections = 0;
  server.on("connection", () => connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, connections: () => connections };
}

const clientOf = (url: string, timeoutMs = 5_000) => new FleetClient({ url, token: "tok", timeoutMs });

describe("FleetClient's default transport: Node's http", () => {
  it("sends the JSON body with its length and the token, reads a whole answer split inside a character, and keeps one connection for calls in a row", async () => {
    const seen: { method?: string; url?: string; auth?: string; type?: string; length?: string; body: string }[] = [];
    const answer = Buffer.from(JSON.stringify({ claimed: false, note: "é€😀" }), "utf8");
    const { url, connections } = await serve((req, body, res) => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers["content-type"], length: req.headers["content-length"], body });
      res.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      // Cut inside the multi-byte characters: the client must join the bytes before it decodes them.
      const cut = answer.indexOf(Buffer.from("€")) + 1;
      res.write(answer.subarray(0, cut));
      setTimeout(() => res.end(answer.subarray(cut)), 20);
    });
    const client = clientOf(url);
    for (let i = 0; i < 3; i++) {
      expect(await client.claim("jöb", "wörker")).toEqual({ claimed: false });
    }
    expect(seen).toHaveLength(3);
    const sent = JSON.stringify({ jobId: "jöb", workerId: "wörker" });
    expect(seen[0]).toEqual({
      method: "POST", url: "/api/fleet/claim", auth: "tok", type: "application/json",
      length: String(Buffer.byteLength(sent)), body: sent,
    });
    expect(connections()).toBe(1);
  });

  it("a server that does not answer in time: FleetTimeoutError after about timeoutMs", async () => {
    const { url } = await serve(() => {});
    const started = Date.now();
    const err = await clientOf(url, 200).claim("j1", "w1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("an answer slower than timeoutMs after its headers: FleetTimeoutError, not a cut text", async () => {
    const { url } = await serve((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": 100 });
      res.write('{"claimed":');
    });
    expect(await clientOf(url, 200).claim("j1", "w1").catch((e) => e)).toBeInstanceOf(FleetTimeoutError);
  });

  it("the caller's signal: FleetAbortError, whether it aborts during the call or before it", async () => {
    const { url } = await serve(() => {});
    const client = clientOf(url);
    const during = new AbortController();
    setTimeout(() => during.abort(), 50);
    expect(await client.claim("j1", "w1", undefined, { signal: during.signal }).catch((e) => e)).toBeInstanceOf(FleetAbortError);
    expect(await client.claim("j1", "w1", undefined, { signal: AbortSignal.abort() }).catch((e) => e)).toBeInstanceOf(FleetAbortError);
  });

  it("a connection closed part-way through the answer: FleetNetworkError (after the claim's one retry), and the next call gets a fresh connection", async () => {
    let cutting = true;
    let calls = 0;
    const { url, connections } = await serve((_req, _body, res) => {
      calls++;
      if (cutting) {
        res.writeHead(200, { "content-type": "application/json", "content-length": 100 });
        res.write('{"claimed":');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"claimed":false}');
    });
    const client = clientOf(url);
    const err = await client.claim("j1", "w1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetNetworkError);
    expect(err.message).toContain("ECONNRESET");
    expect(calls).toBe(2);
    cutting = false;
    expect(await client.claim("j1", "w1")).toEqual({ claimed: false });
    expect(connections()).toBe(3);
  });

  it("a refused connection: FleetNetworkError naming ECONNREFUSED once", async () => {
    const { url } = await serve(() => {});
    servers[0]!.close();
    await new Promise((r) => setTimeout(r, 20));
    const err = await clientOf(url).claim("j1", "w1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetNetworkError);
    expect(err.message.match(/ECONNREFUSED/g)).toHaveLength(1);
  });

  it("a URL that is not http or https is refused before anything is sent", async () => {
    const err = await clientOf("ftp://127.0.0.1:21").claim("j1", "w1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetNetworkError);
    expect(err.message).toContain("http: or https:");
  });
});

describe("an answer larger than the client reads (MAX_ANSWER_BYTES): refused before it fills memory", () => {
  const LIMIT = 64 * 1024;
  const ask = (requester: Requester, url: string) => requester({ method: "GET", url: `${url}/big`, headers: {}, timeoutMs: 5_000 });
  /** Answers `bytes` of blanks (JSON whitespace): with its length, or chunked without one, as fast as the client reads. */
  function bigAnswer(bytes: number, withLength: boolean) {
    return serve((_req, _body, res) => {
      res.writeHead(200, withLength ? { "content-type": "application/json", "content-length": bytes } : { "content-type": "application/json" });
      const piece = Buffer.alloc(4096, 0x20);
      let written = 0;
      const more = () => {
        while (written < bytes) {
          const n = Math.min(piece.length, bytes - written);
          written += n;
          if (!res.write(piece.subarray(0, n))) return void res.once("drain", more);
        }
        res.end();
      };
      more();
    });
  }

  it("stays far above the server's largest answer and below a JavaScript string's length", () => {
    expect(MAX_ANSWER_BYTES).toBeGreaterThan(100 * (MAX_PAYLOAD_BYTES + MAX_ERROR_BYTES + MAX_PROGRESS_BYTES) * 1.5);
    expect(MAX_ANSWER_BYTES).toBeLessThan(2 ** 29 - 24);
  });

  for (const [name, requester] of [
    ["Node's http", nodeHttpRequester(LIMIT)],
    ["fetch", fetchRequester(fetch, LIMIT)],
  ] as const) {
    it(`${name}: with a Content-Length past the limit, refused at once (AnswerTooLarge)`, async () => {
      const { url } = await bigAnswer(LIMIT * 1000, true);
      await expect(ask(requester, url)).rejects.toBeInstanceOf(AnswerTooLarge);
    });

    it(`${name}: chunked past the limit, refused once the limit is passed; at the limit, read whole`, async () => {
      const { url } = await bigAnswer(LIMIT * 1000, false);
      await expect(ask(requester, url)).rejects.toBeInstanceOf(AnswerTooLarge);
      const exact = await bigAnswer(LIMIT, false);
      expect((await ask(requester, exact.url)).text).toHaveLength(LIMIT);
    });
  }

  it("FleetClient: a FleetProtocolError saying why, sent once (not retried as a network failure would be)", async () => {
    let calls = 0;
    const { url } = await serve((_req, _body, res) => {
      calls++;
      res.writeHead(200, { "content-type": "application/json", "content-length": MAX_ANSWER_BYTES + 1 });
      res.write("{");
    });
    const err = await clientOf(url).claimNext({ workerId: "w1" }).catch((e) => e);
    expect(err).toBeInstanceOf(FleetProtocolError);
    expect(String(err.message)).toContain(`larger than ${MAX_ANSWER_BYTES} bytes`);
    expect(calls).toBe(1);
  });
});
