/**
 * Which PocketBase line serves this page, and its SDK binding, loaded on
 * demand: one plain request tells the lines apart before any SDK is loaded.
 */
import type { Line, RequestFailure, SdkBinding } from "./sdk-binding.js";

/** The build (scripts/build/dashboard.mjs) fills in each SDK file's name with a content hash, so a new build is never mixed with a cached old SDK. */
declare const PB_FLEET_SDK_FILES: { [line in Line]: string };

/** Where the session is kept across reloads; not PocketBase's own admin UI key, so signing out of one leaves the other. */
export const SESSION_STORAGE_KEY = "pb_fleet_dashboard_auth";

const DETECT_TIMEOUT_MS = 5_000;

/**
 * 0.23+ has the `_superusers` auth collection (its auth-methods answer
 * anyone); on 0.22 that collection does not exist (404).
 */
export async function detectLine(origin: string): Promise<Line> {
  let status = 0;
  try {
    const res = await fetch(`${origin}/api/collections/_superusers/auth-methods`, { signal: AbortSignal.timeout(DETECT_TIMEOUT_MS) });
    status = res.status;
  } catch (err) {
    throw { status: 0, message: String((err as Error)?.message ?? err) } satisfies RequestFailure;
  }
  if (status === 200) return "0.23";
  if (status === 404) return "0.22";
  throw { status, message: `unexpected HTTP ${status} while asking which PocketBase this is` } satisfies RequestFailure;
}

export async function loadBinding(origin: string, line: Line): Promise<SdkBinding> {
  const url = new URL(PB_FLEET_SDK_FILES[line], import.meta.url).href;
  const module = (await import(url)) as { createBinding(baseUrl: string, storageKey: string): SdkBinding };
  return module.createBinding(origin, SESSION_STORAGE_KEY);
}
