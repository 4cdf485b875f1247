// What global-setup.ts hands to the integration test files (vitest provide/inject).
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the PocketBase under test (pb-fleet's own hooks), e.g. http://127.0.0.1:32768. */
    pbUrl: string;
    /**
     * Token of an admin (PocketBase 0.22) or a superuser (0.23+) of pbUrl, raw, as
     * PocketBase takes it in Authorization. The name stays "admin" for both lines.
     */
    adminToken: string;
    adminEmail: string;
    adminPassword: string;
    /** PocketBase version of the server under test, e.g. "0.22.21". */
    pbVersion: string;
    /** The server's hooks line (scripts/pocketbase/lines.mjs): its bundle, migrations and auth. */
    pbLine: "0.22" | "0.23";
    /** external: PB_URL; container: testcontainers from the project's Dockerfile; spawn: the binary on this machine. */
    pbMode: "external" | "container" | "spawn";
    /** A second PocketBase running ../shared/reference/fleet-claim.pb.js; null on 0.23+ and when that file is absent outside CI. */
    referenceUrl: string | null;
    referenceToken: string | null;
  }
}
