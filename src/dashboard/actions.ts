/**
 * The board's buttons that change something on the server: a job's Retry,
 * Cancel or Re-queue (through the fleet endpoints, whose rules decide) and a
 * worker identity's Disable or Enable. Each asks first, then says what came of it.
 */
import { WORKER_FIELDS } from "../lib/identity.js";
import { confirmAction, notice } from "./page.js";
import { WORKERS_COLLECTION, type Identity, type JobRow } from "./queries.js";
import { asFailure, type RequestFailure, type SdkBinding } from "./sdk-binding.js";
import { byId, type JobAction } from "./view.js";

/** What an action needs of the board: the server, and the board's handling of an outage or an ended session. */
export interface ActionContext {
  readonly sdk: SdkBinding;
  failed(failure: RequestFailure): void;
}

/** A button of a list row or of the detail: confirm, then the fleet endpoint; `done` when the server answered. */
export async function actOnJob(context: ActionContext, action: JobAction, job: JobRow, button: HTMLButtonElement, done: () => void): Promise<void> {
  const { sdk } = context;
  const jobId = job.id;
  // Captured now: once the job leaves its list the button is detached and finds no section.
  const section: HTMLElement = (button.closest("section") as HTMLElement | null) ?? byId("main");
  const name = `${job.probe_key} (${job.id})`;
  const ask =
    action === "retry"
      ? ["Retry this job?", `${name} goes back to pending, due now, with its attempts reset to 0.`, "Retry"]
      : action === "cancel"
        ? ["Cancel this job?", `${name} becomes cancelled. If a worker holds it, its next renew is refused and its handler is aborted.`, "Cancel job"]
        : [
            "Re-queue this job?",
            `${name} is held by ${job.claimed_by}, whose lease has ended. It goes back to pending on that holder's behalf, as the sweeper would; the server refuses if the holder renewed since.`,
            "Re-queue",
          ];
  if (!(await confirmAction(ask[0]!, ask[1]!, ask[2]!))) {
    button.focus();
    return;
  }
  button.disabled = true;
  try {
    if (action === "retry") {
      const res = await sdk.send<{ retried: boolean; reason?: string }>("/api/fleet/retry", { method: "POST", body: { jobId } });
      if (res.retried) notice(`Retried ${job.probe_key}: pending again.`);
      else notice(`Not retried: ${res.reason ?? "the job is no longer failed or cancelled"}.`, "refused");
    } else if (action === "cancel") {
      const res = await sdk.send<{ cancelled: boolean }>("/api/fleet/cancel", { method: "POST", body: { jobId } });
      if (res.cancelled) notice(`Cancelled ${job.probe_key}.`);
      else notice("Not cancelled: the job has already finished.", "refused");
    } else {
      const res = await sdk.send<{ released: boolean; reason?: string }>("/api/fleet/release", {
        method: "POST",
        body: { jobId, workerId: job.claimed_by, status: "pending" },
      });
      if (res.released) notice(`Re-queued ${job.probe_key}: pending again.`);
      else notice(`Not re-queued: ${res.reason === "refused_lease_live" ? "the holder renewed its lease since (refused_lease_live)" : res.reason}.`, "refused");
    }
    done();
  } catch (err) {
    refused(context, err);
  } finally {
    button.disabled = false;
    // The row (or the detail's button) may be gone now: keep the keyboard in the same section, or dialog.
    if (!button.isConnected) {
      if (byId<HTMLDialogElement>("job-detail").open) {
        byId("detail-close").focus();
      } else {
        section.tabIndex = -1;
        section.focus();
      }
    }
  }
}

/** A worker identity's Disable or Enable button: confirm, then its record through the record API (admins only). */
export async function toggleIdentity(context: ActionContext, identity: Identity, button: HTMLButtonElement, done: () => void): Promise<void> {
  const disabled = !identity.disabled;
  const verb = disabled ? "Disable" : "Enable";
  const effect = disabled ? ": its calls to /api/fleet/* are refused from now on, and the jobs it holds are swept once their leases end" : " may call /api/fleet/* again";
  if (!(await confirmAction(`${verb} this worker identity?`, `${identity.name} (${identity.id})${effect}.`, verb))) {
    button.focus();
    return;
  }
  button.disabled = true;
  try {
    await context.sdk.update(WORKERS_COLLECTION, identity.id, { [WORKER_FIELDS.disabled]: disabled });
    notice(`${verb}d ${identity.name}.`);
    done();
  } catch (err) {
    refused(context, err);
  } finally {
    button.disabled = false;
  }
}

/** An action the server did not do: an outage or an ended session as everywhere, else its refusal as a notice. */
function refused(context: ActionContext, err: unknown): void {
  const failure = asFailure(err);
  if (failure.status === 0 || failure.status === 401 || failure.status === 403) context.failed(failure);
  else notice(`The server refused: ${failure.message}`, "refused");
}
