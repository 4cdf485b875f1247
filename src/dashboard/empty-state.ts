/**
 * What the board says when no job is there: an empty server's first steps
 * (enqueueing from the client or a shell), or that the filter matches none.
 */
import { origin } from "./page.js";
import { enqueueCurl } from "./queries.js";
import type { SdkBinding } from "./sdk-binding.js";
import { byId, setText } from "./view.js";

export function showEmptyState(prefix: string, sdk: SdkBinding): void {
  const text = byId("empty-text");
  const title = byId("empty-title");
  text.replaceChildren();
  const para = (content: string) => {
    const p = document.createElement("p");
    p.textContent = content;
    text.append(p);
  };
  if (prefix !== "") {
    setText(title, "No job matches this filter");
    para(`No job's probe_key starts with "${prefix}". Clear the probe_key prefix above to see every job.`);
    return;
  }
  setText(title, "No jobs yet");
  para("Nothing has been enqueued on this server. Enqueue jobs with the pb-fleet client and start a worker; this page shows them live as they run:");
  const code = document.createElement("pre");
  code.textContent =
    `await client.enqueue("probe/a", { payload: { url: "https://a.example" } });\n` +
    `new Worker(client, { workerId: "w-1", handler: async (job) => ({ ok: true }) }).start();`;
  text.append(code);
  para("Or from a shell: sign in for a token, then enqueue a job (put your password in place of YOUR_PASSWORD):");
  const shell = document.createElement("pre");
  shell.id = "empty-curl";
  shell.textContent = enqueueCurl(origin, sdk.line, sdk.account());
  text.append(shell);
}
