/**
 * The page's frame, shared by its parts: which of its three screens shows,
 * the passing notice, and the confirmation dialog of every action.
 */
import { byId, setText } from "./view.js";

/** The PocketBase serving this page: the dashboard only ever talks to it. */
export const origin = window.location.origin;

export function showOnly(part: "loading" | "signin" | "board"): void {
  byId("loading").hidden = part !== "loading";
  byId("signin").hidden = part !== "signin";
  byId("board").hidden = part !== "board";
}

let noticeTimer: ReturnType<typeof setTimeout> | undefined;
export function notice(text: string, kind: "ok" | "refused" = "ok"): void {
  const box = byId("notice");
  box.dataset["kind"] = kind;
  setText(box, text);
  box.classList.add("visible");
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => box.classList.remove("visible"), 8_000);
}

/** Asks in the page's dialog; true when its OK button closed it. */
export function confirmAction(title: string, text: string, okLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>("confirm");
  setText(byId("confirm-title"), title);
  setText(byId("confirm-text"), text);
  setText(byId("confirm-ok"), okLabel);
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
    // The safe choice has the focus: Enter alone never confirms.
    byId("confirm-cancel").focus();
  });
}
