/**
 * PocketBase's cron expression grammar and matching (tools/cron/schedule.go,
 * the same from 0.22 to 0.40): a macro, or exactly five single-space-separated
 * fields, each a comma-separated list of `*`, `n` or `a-b`, the star and
 * ranges optionally followed by a step `/n`. Parsed once here: the validator
 * (an invalid PB_FLEET_SWEEP_CRON is reported, in /api/fleet/stats too, before
 * cronAdd is handed it) and the matcher (probe_schedules rows, which pb-fleet
 * runs itself) take the same expressions PocketBase takes.
 */

/** schedule.go's `macros`: only these exact texts, expanded before parsing. */
const MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/**
 * minute, hour, day of month, month, day of week. Day of week is 0-6, Sunday
 * 0: PocketBase refuses 7 (schedule.go:122, parseCronSegment(segments[4], 0, 6)).
 */
const FIELDS: readonly { name: string; min: number; max: number }[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 6 },
];

/** The values each field allows. */
export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 = Sunday, as Go's time.Weekday. */
  daysOfWeek: ReadonlySet<number>;
}

export type CronParse = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

/** Go's strconv.Atoi on a cron field's decimal text: a sign and leading zeros are allowed. */
function atoi(text: string): number | null {
  return /^[+-]?\d+$/.test(text) ? Number(text) : null;
}

/** NewSchedule: the schedule PocketBase would build, or why it refuses the expression. */
export function parseCron(expression: string): CronParse {
  const expanded = Object.prototype.hasOwnProperty.call(MACROS, expression) ? (MACROS[expression] as string) : expression;
  const segments = expanded.split(" ");
  if (segments.length !== FIELDS.length) {
    return { ok: false, error: "it must be a macro (@hourly, @daily, ...) or exactly 5 fields separated by single spaces" };
  }
  const sets: Set<number>[] = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i] as (typeof FIELDS)[number];
    const values = new Set<number>();
    for (const part of (segments[i] as string).split(",")) {
      const error = addCronPart(values, part, field.min, field.max);
      if (error !== null) return { ok: false, error: `${field.name} field ${JSON.stringify(segments[i])}: ${error}` };
    }
    sets.push(values);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets as [
    Set<number>, Set<number>, Set<number>, Set<number>, Set<number>,
  ];
  return { ok: true, schedule: { minutes, hours, daysOfMonth, months, daysOfWeek } };
}

/** Why PocketBase would refuse the expression, or null when it takes it. */
export function cronScheduleError(expression: string): string | null {
  const parsed = parseCron(expression);
  return parsed.ok ? null : parsed.error;
}

/** parseCronSegment for one list item: adds its values, or says why it is refused. */
function addCronPart(values: Set<number>, part: string, min: number, max: number): string | null {
  const stepParts = part.split("/");
  if (stepParts.length > 2) return "a step is written */n or a-b/n";
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = atoi(stepParts[1] as string);
    if (parsed === null || parsed < 1 || parsed > max) return `the step must be a number from 1 to ${max}`;
    step = parsed;
  }
  let low = min;
  let high = max;
  const range = stepParts[0] as string;
  if (range !== "*") {
    const bounds = range.split("-");
    if (bounds.length > 2) return "a range is written a-b";
    const first = atoi(bounds[0] as string);
    if (first === null || first < min || first > max) return `values must be numbers from ${min} to ${max}`;
    low = first;
    high = first;
    if (bounds.length === 1) {
      if (step !== 1) return "a step needs * or a range before it";
    } else {
      const last = atoi(bounds[1] as string);
      if (last === null || last < first || last > max) return `a range must end between its start and ${max}`;
      high = last;
    }
  }
  for (let v = low; v <= high; v += step) values.add(v);
  return null;
}

/**
 * Whether the schedule is due in the UTC minute holding `epochMs`, as
 * Schedule.IsDue judges it. Two differences from Vixie cron, both PocketBase's:
 * - day of month AND day of week must both match (schedule.go:50-56 in
 *   v0.22.21: IsDue returns false on a miss of either), so "0 0 13 * 5" is Friday the 13th only, not every 13th and
 *   every Friday;
 * - UTC: cron.New() sets `timezone: time.UTC` (tools/cron/cron.go:43 in
 *   v0.22.21) and runDue judges `NewMoment(t.In(c.timezone))` (cron.go:200);
 *   neither jsvm's scheduler (plugins/jsvm/binds.go:112) nor the app's
 *   (core/base.go, 0.23+) calls SetTimezone.
 */
export function cronMatchesMinute(schedule: CronSchedule, epochMs: number): boolean {
  const t = new Date(epochMs);
  return (
    schedule.minutes.has(t.getUTCMinutes()) &&
    schedule.hours.has(t.getUTCHours()) &&
    schedule.daysOfMonth.has(t.getUTCDate()) &&
    schedule.daysOfWeek.has(t.getUTCDay()) &&
    schedule.months.has(t.getUTCMonth() + 1)
  );
}
