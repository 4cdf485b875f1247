/**
 * PocketBase's cron expression grammar (tools/cron/schedule.go, the same from
 * 0.22 to 0.40): a macro, or exactly five single-space-separated fields, each
 * a comma-separated list of `*`, `n` or `a-b`, the star and ranges optionally
 * followed by a step `/n`. Checked here so that an
 * invalid PB_FLEET_SWEEP_CRON is reported (in /api/fleet/stats too) before
 * cronAdd is handed it.
 */

const MACROS = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];

/** minute, hour, day of month, month, day of week. */
const FIELDS: readonly { name: string; min: number; max: number }[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 },
];

/** Go's strconv.Atoi on the short decimal texts a cron field holds (a sign is allowed). */
function atoi(text: string): number | null {
  return /^[+-]?\d{1,18}$/.test(text) ? Number(text) : null;
}

/** Why PocketBase would refuse the expression, or null when it takes it. */
export function cronScheduleError(expression: string): string | null {
  if (MACROS.indexOf(expression) !== -1) return null;
  const segments = expression.split(" ");
  if (segments.length !== FIELDS.length) {
    return "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces";
  }
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i] as (typeof FIELDS)[number];
    for (const part of (segments[i] as string).split(",")) {
      const error = cronPartError(part, field.min, field.max);
      if (error !== null) return `${field.name} field ${JSON.stringify(segments[i])}: ${error}`;
    }
  }
  return null;
}

function cronPartError(part: string, min: number, max: number): string | null {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1] as string);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  const range = stepParts[0] as string;
  if (range === "*") return null;
  const bounds = range.split("-");
  if (bounds.length > 2) return "a range is written a-b";
  const low = atoi(bounds[0] as string);
  if (low === null || low < min || low > max) return `values must be numbers from ${min} to ${max}`;
  if (bounds.length === 1) return step === 1 ? null : "a step needs * or a range before it";
  const high = atoi(bounds[1] as string);
  if (high === null || high < low || high > max) return `a range must end between its start and ${max}`;
  return null;
}
