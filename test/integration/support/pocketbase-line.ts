// The hooks line of the server under test (global-setup.ts provides it) and
// what follows from it, from the one home of those facts
// (scripts/pocketbase/lines.mjs): where the line's bundle, migrations and
// test-only hooks are, and how its admins (0.22) or superusers (0.23+) are
// made and sign in. Tests ask here instead of branching on a version.
import { inject } from "vitest";
import { HOOKS_LINES, lineLayout } from "../../../scripts/pocketbase/lines.mjs";

export type Line = keyof typeof HOOKS_LINES;

export function pbLine(): Line {
  return inject("pbLine");
}

/** The admin/superuser facts of the server under test (noun, auth path, password bounds, CLI). */
export function account(line: Line = pbLine()) {
  return HOOKS_LINES[line].admin;
}

/** Absolute paths of the line's bundle, migrations, Docker hooks and test-only hooks. */
export function layout(line: Line = pbLine()) {
  return lineLayout(line);
}
