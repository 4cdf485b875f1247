/**
 * The page's SDK for PocketBase 0.22 (built alone into sdk-0.22.js): the
 * JS SDK of that line, pocketbase@0.21, whose admins service signs in.
 */
import PocketBase, { LocalAuthStore } from "pocketbase-0.21";
import { attempt, sharedBinding, type SdkBinding, type SdkClient } from "./sdk-binding.js";

export function createBinding(baseUrl: string, storageKey: string): SdkBinding {
  const pb = new PocketBase(baseUrl, new LocalAuthStore(storageKey));
  return {
    line: "0.22",
    account: () => (pb.authStore.model as { email?: string } | null)?.email ?? "",
    // isAdmin: a user token stored under this key would only get 401s from the fleet endpoints.
    hasSession: () => pb.authStore.isValid && pb.authStore.isAdmin,
    signIn: async (email, password) => {
      await attempt(() => pb.admins.authWithPassword(email, password));
    },
    refreshSession: async () => {
      await attempt(() => pb.admins.authRefresh());
    },
    signOut: () => pb.authStore.clear(),
    ...sharedBinding(pb as unknown as SdkClient),
  };
}
