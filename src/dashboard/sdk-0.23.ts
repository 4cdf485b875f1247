/**
 * The page's SDK for PocketBase 0.23 to 0.40 (built alone into sdk-0.23.js):
 * the JS SDK of that line, pocketbase@0.28, where admins are the
 * `_superusers` auth collection.
 */
import PocketBase, { LocalAuthStore } from "pocketbase";
import { attempt, sharedBinding, type SdkBinding, type SdkClient } from "./sdk-binding.js";

const SUPERUSERS = "_superusers";

export function createBinding(baseUrl: string, storageKey: string): SdkBinding {
  const pb = new PocketBase(baseUrl, new LocalAuthStore(storageKey));
  return {
    line: "0.23",
    account: () => (pb.authStore.record?.["email"] as string | undefined) ?? "",
    // isSuperuser: a user token stored under this key would only get 401s from the fleet endpoints.
    hasSession: () => pb.authStore.isValid && pb.authStore.isSuperuser,
    signIn: async (email, password) => {
      await attempt(() => pb.collection(SUPERUSERS).authWithPassword(email, password));
    },
    refreshSession: async () => {
      await attempt(() => pb.collection(SUPERUSERS).authRefresh());
    },
    signOut: () => pb.authStore.clear(),
    ...sharedBinding(pb as unknown as SdkClient),
  };
}
