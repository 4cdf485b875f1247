/** How the Worker's parts tell what happens: through the Worker's own events. */
import type { FleetEventName, FleetEvents } from "../events.js";

export interface WorkerEvents {
  /** The Worker's report(): to its logger and listeners. */
  report<K extends FleetEventName>(event: K, payload: FleetEvents[K][0]): void;
  /** Whether anyone hears an event (else its payload is not even built). */
  wants(event: FleetEventName): boolean;
}
