// A minimal SMTP server on 127.0.0.1 that accepts every message and keeps
// its recipients: enough for PocketBase's mailer (no TLS, no auth offered).
import { createServer, type Server } from "node:net";

export interface SmtpSink {
  port: number;
  /** Every RCPT TO address received, in order. */
  recipients: string[];
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const recipients: string[] = [];
  const server: Server = createServer((socket) => {
    let buffer = "";
    let inData = false;
    socket.write("220 pb-fleet-test ESMTP\r\n");
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1");
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end === -1) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          socket.write("250 OK\r\n");
          continue;
        }
        const eol = buffer.indexOf("\r\n");
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO" || verb === "HELO") socket.write("250 pb-fleet-test\r\n");
        else if (verb === "RCPT") {
          recipients.push(/<([^>]*)>/.exec(line)?.[1] ?? line);
          socket.write("250 OK\r\n");
        } else if (verb === "DATA") {
          inData = true;
          socket.write("354 end with .\r\n");
        } else if (verb === "QUIT") {
          socket.end("221 bye\r\n");
          return;
        } else socket.write("250 OK\r\n");
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { port, recipients, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
