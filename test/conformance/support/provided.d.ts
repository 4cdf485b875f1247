// What prepare-clients.ts hands to the conformance test files (vitest provide/inject).
import "vitest";
import type { ConformanceClient } from "./clients";

declare module "vitest" {
  export interface ProvidedContext {
    /** Every client's built conformance worker, by name. */
    conformanceClients: Record<string, ConformanceClient>;
  }
}
