// A wrong email or password is a FleetAuthError on both PocketBase lines: 0.22
// (POST /api/admins/auth-with-password, after the 404 of 0.23+'s path) and
// 0.23+ (POST /api/collections/_superusers/auth-with-password) answer 400
// "Failed to authenticate.", kept as the error's status; it is thrown by the
// first call that needs the sign-in, without retrying it.
import { describe, expect, it } from "vitest";
import { FleetAuthError, FleetHttpError } from "../../src/client/errors";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";

const REFUSED = { code: 400, message: "Failed to authenticate.", data: {} };
const NOT_FOUND = { code: 404, message: "The requested resource wasn't found.", data: {} };

describe.each([
  ["0.22", AUTH_PATHS.admins, "admin"],
  ["0.23+", AUTH_PATHS.superusers, "superuser"],
] as const)("a wrong password on PocketBase %s", (_line, authPath, who) => {
  it("is a FleetAuthError of the sign-in (HTTP 400), thrown once per call, and nothing else is sent", async () => {
    const paths: string[] = [];
    const fetchImpl = (async (input: RequestInfo | URL) => {
      const path = new URL(String(input)).pathname;
      paths.push(path);
      return Response.json(path === authPath ? REFUSED : NOT_FOUND, { status: path === authPath ? 400 : 404 });
    }) as typeof fetch;
    const client = new FleetClient({ url: "http://fleet.test", email: "admin@x.io", password: "wrong-password", fetch: fetchImpl });

    const err = await client.claimNext({ workerId: "w1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toBeInstanceOf(FleetHttpError); // what callers that test for FleetHttpError still see
    expect(err).toMatchObject({ name: "FleetAuthError", op: "authenticate", status: 400, body: REFUSED });
    expect((err as Error).message).toBe(`authenticate: HTTP 400: Failed to authenticate. (the ${who} email or password was refused)`);
    expect(paths.every((p) => p.endsWith("/auth-with-password"))).toBe(true);
    await expect(client.authenticate()).rejects.toBeInstanceOf(FleetAuthError);
    expect(client.token).toBe("");
  });
});
