/**
 * src/lib/job-schema.ts is the one description of probe_jobs the code derives
 * from (migrations-lines.test.ts holds both migration lines to its columns).
 * Here: its status classes cover JOB_STATUSES as docs/queue.md describes them,
 * and the lists derived from the column table agree with its roles.
 */
import { describe, expect, it } from "vitest";
import { bulkPatchStatement } from "../../src/lib/bulk";
import {
  COMPLETED_STATUSES, HELD_STATUSES, JOB_COLUMNS, JOB_JSON_FIELDS, JOB_PATCH_JSON_FIELDS, JOB_PATCH_NUMBER_FIELDS, JOB_PATCH_TEXT_FIELDS,
  JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS, jobColumnsWhere, LIVE_STATUSES,
  RETRYABLE_STATUSES, statusInSql, TERMINAL_STATUSES,
} from "../../src/lib/job-schema";
import { isHeldStatus, isRetryable, isTerminalStatus } from "../../src/lib/transitions";
import { JOB_STATUSES } from "../../src/lib/types";

describe("the job schema", () => {
  it("puts every status in exactly one of live and terminal; held is live, completed and retryable are terminal", () => {
    expect([...LIVE_STATUSES, ...TERMINAL_STATUSES].sort()).toEqual([...JOB_STATUSES].sort());
    for (const s of HELD_STATUSES) expect(LIVE_STATUSES).toContain(s);
    for (const s of [...COMPLETED_STATUSES, ...RETRYABLE_STATUSES]) expect(TERMINAL_STATUSES).toContain(s);
  });

  it("answers the status functions from the classes, for any stored text", () => {
    for (const s of [...JOB_STATUSES, "", "Claimed", "bogus"]) {
      expect(isHeldStatus(s), s).toBe((HELD_STATUSES as readonly string[]).includes(s));
      expect(isTerminalStatus(s), s).toBe((TERMINAL_STATUSES as readonly string[]).includes(s));
      expect(isRetryable(s), s).toBe((RETRYABLE_STATUSES as readonly string[]).includes(s));
    }
    expect(statusInSql(HELD_STATUSES, "j.status")).toBe("j.status IN ('claimed', 'running')");
  });

  it("reads every JobRow column once, by its kind", () => {
    const read = [...JOB_ROW_TEXT_FIELDS, ...JOB_ROW_NUMBER_FIELDS, ...JOB_ROW_FLOW_TEXT_FIELDS, ...JOB_ROW_FLOW_NUMBER_FIELDS];
    expect([...read].sort()).toEqual(jobColumnsWhere((c) => c.row !== undefined).sort());
    expect(new Set(read).size).toBe(read.length);
    for (const f of [...JOB_ROW_NUMBER_FIELDS, ...JOB_ROW_FLOW_NUMBER_FIELDS]) expect(JOB_COLUMNS[f].kind).toBe("number");
    expect(JOB_JSON_FIELDS).toEqual(jobColumnsWhere((c) => c.kind === "json"));
  });

  it("lets the bulk write set exactly the columns a patch may write", () => {
    const patchable = [...JOB_PATCH_TEXT_FIELDS, ...JOB_PATCH_NUMBER_FIELDS, ...JOB_PATCH_JSON_FIELDS];
    expect(patchable.sort()).toEqual(jobColumnsWhere((c) => c.patch === true).sort());
    for (const column of patchable) {
      expect(bulkPatchStatement([{ id: "a", patch: { [column]: 1 } }], "now").sql).toContain(`${column} = CASE`);
    }
    for (const column of jobColumnsWhere((c) => c.patch !== true)) {
      expect(() => bulkPatchStatement([{ id: "a", patch: { [column]: 1 } as never }], "now"), column).toThrow(/no column/);
    }
  });
});
