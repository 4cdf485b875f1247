/**
 * The fleet dashboard (served by PocketBase at /fleet/): signs in with the JS
 * SDK of the server's line, keeps the numbers live through PocketBase's
 * realtime stream (board.ts), and acts only through the fleet endpoints.
 * This is its start-up: the server's line, the sign-in form and the page's events.
 */
import { Board } from "./board.js";
import { detectLine, loadBinding } from "./connection.js";
import { Outage, showConnection, sleep } from "./outage.js";
import { origin, showOnly } from "./page.js";
import { asFailure, type Line, type SdkBinding } from "./sdk-binding.js";
import { byId, setText, type JobAction } from "./view.js";

const FILTER_DEBOUNCE_MS = 250;

async function connect(): Promise<SdkBinding> {
  const outage = new Outage(() => undefined);
  for (let delay = 1_000; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      const line: Line = await detectLine(origin);
      const sdk = await loadBinding(origin, line);
      outage.clear();
      return sdk;
    } catch (err) {
      outage.report(asFailure(err));
      await sleep(delay);
    }
  }
}

async function main(): Promise<void> {
  showOnly("loading");
  const sdk = await connect();
  const accountNoun = sdk.line === "0.22" ? "admin" : "superuser";
  setText(byId("server-line"), `PocketBase ${sdk.line === "0.22" ? "0.22" : "0.23+"}`);
  setText(byId("signin-hint"), `Sign in with the email and password of a PocketBase ${accountNoun} of this server.`);
  let board: Board | null = null;
  let filterTimer: ReturnType<typeof setTimeout> | undefined;

  const showSignIn = (message = "") => {
    board?.stop();
    board = null;
    sdk.signOut();
    showOnly("signin");
    showConnection("connecting");
    byId("sign-out").hidden = true;
    setText(byId("account"), "");
    const error = byId("signin-error");
    error.hidden = message === "";
    setText(error, message);
    byId("signin-email").focus();
  };
  const startBoard = () => {
    board?.stop();
    board = new Board(sdk, showSignIn);
    setText(byId("account"), sdk.account());
    byId("sign-out").hidden = false;
    board.start();
  };

  byId<HTMLFormElement>("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const email = byId<HTMLInputElement>("signin-email").value.trim();
    const password = byId<HTMLInputElement>("signin-password").value;
    const submit = byId<HTMLFormElement>("signin-form").querySelector("button")!;
    submit.disabled = true;
    sdk
      .signIn(email, password)
      .then(() => {
        byId<HTMLInputElement>("signin-password").value = "";
        startBoard();
      })
      .catch((err) => {
        const failure = asFailure(err);
        const error = byId("signin-error");
        error.hidden = false;
        setText(
          error,
          failure.status === 0
            ? `PocketBase at ${origin} is not answering: ${failure.message}`
            : failure.status === 400
              ? `Wrong email or password for a ${accountNoun} of this server.`
              : failure.message,
        );
      })
      .finally(() => (submit.disabled = false));
  });
  byId("sign-out").addEventListener("click", () => showSignIn());
  byId<HTMLFormElement>("filter").addEventListener("submit", (event) => event.preventDefault());
  byId<HTMLInputElement>("filter-prefix").addEventListener("input", (event) => {
    clearTimeout(filterTimer);
    const value = (event.target as HTMLInputElement).value;
    filterTimer = setTimeout(() => board?.setPrefix(value), FILTER_DEBOUNCE_MS);
  });
  // One listener for every list's buttons and the detail's (the dialog is outside <main>).
  document.body.addEventListener("click", (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>("button[data-action], button[data-detail], button[data-expand], button[data-identity], button[data-queue]");
    if (button === null || board === null) return;
    if (button.dataset["detail"] !== undefined) board.openDetail(button.dataset["detail"], button);
    else if (button.dataset["expand"] !== undefined) board.toggleWorker(button.dataset["expand"]);
    else if (button.dataset["identity"] !== undefined) void board.toggleIdentity(button.dataset["identity"], button);
    else if (button.dataset["queue"] !== undefined) void board.flowCard.setPaused(button.dataset["queue"], button.dataset["paused"] === "true");
    else void board.act(button.dataset["action"] as JobAction, button.dataset["jobId"] ?? "", button);
  });
  byId("detail-close").addEventListener("click", () => byId<HTMLDialogElement>("job-detail").close());

  if (!sdk.hasSession()) {
    showSignIn();
    return;
  }
  try {
    await sdk.refreshSession();
  } catch (err) {
    const failure = asFailure(err);
    // Gone (status 0) or failing: keep the session and let the board wait for the server.
    if (failure.status >= 400 && failure.status < 500) {
      showSignIn("Your session has ended: sign in again.");
      return;
    }
  }
  startBoard();
}

void main();