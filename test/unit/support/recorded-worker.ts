// A Worker on a fake fleet that records the events it emits (of the kinds
// named), started at once; `named` picks one kind's payloads in order.
import type { FleetEvents } from "../../../src/client/events";
import type { FleetApi } from "../../../src/client/fleet-client";
import { Worker, type WorkerOptions } from "../../../src/client/worker";

export type RecordedEvents = Array<[keyof FleetEvents, any]>;

export function startRecordedWorker(
  fake: FleetApi, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">, kinds: readonly (keyof FleetEvents)[],
) {
  const events: RecordedEvents = [];
  const worker = new Worker(fake, { workerId: "w1", leaseSeconds: 3, pollInterval: 60_000, ...opts });
  for (const name of kinds) worker.on(name, (e: unknown) => events.push([name, e]));
  worker.start();
  return { worker, events };
}

export const named = (events: RecordedEvents, name: keyof FleetEvents) => events.filter(([n]) => n === name).map(([, e]) => e);
