/**
 * How claim-next and the sweep read and write many rows in one transaction
 * (heartbeat and complete judge and write in SQL: batch-plans.ts) without paying PocketBase's record load
 * and save per row: the rows come back as one JSON text (one value crosses
 * from Go to JavaScript, not one per field), and the patches go back as one
 * UPDATE ... FROM json_each. Every decision is still made by src/lib on the
 * row as read inside the transaction; only the transport changes. Realtime
 * does not see such an UPDATE, so the adapter saves one probe_job_events
 * record per transaction listing each job as written (job-events.ts).
 */
import { LEASE_AS_JUDGED_SQL } from "./lease.js";
import type { JobPatch, JobRow } from "./job-row.js";
import {
  JOB_PATCH_JSON_FIELDS, JOB_PATCH_NUMBER_FIELDS, JOB_PATCH_TEXT_FIELDS,
  JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS,
} from "./job-schema.js";
import type { WhereClause } from "./queries.js";

/** The lease column as the lease rule judges it (LEASE_AS_JUDGED_SQL without its alias). */
const JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");

const textMembers = (fields: readonly string[]) =>
  fields.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ");
const numberMembers = (fields: readonly string[]) => fields.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ");
const BASE_MEMBERS = `'id', id, ${textMembers(JOB_ROW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_NUMBER_FIELDS)}`;
/** A row without a group, a timeout or a start_by: its flow fields are left out (absent reads as empty). */
const NO_FLOW_FIELDS = "COALESCE(group_key, '') = '' AND COALESCE(timeout_seconds, 0) = 0 AND COALESCE(start_by, '') = ''";

/**
 * A JobRow as a JSON object, in SQL: text columns never NULL, the lease as
 * judged. Flow control's four fields only on a row that uses them (measured:
 * four more members per row were most of what flow control added to the
 * batch endpoints' CPU).
 */
export const ROW_AS_JSON = `CASE WHEN ${NO_FLOW_FIELDS} THEN json_object(${BASE_MEMBERS}) ` +
  `ELSE json_object(${BASE_MEMBERS}, ${textMembers(JOB_ROW_FLOW_TEXT_FIELDS)}, ${numberMembers(JOB_ROW_FLOW_NUMBER_FIELDS)}) END`;

/**
 * The rows matching a where clause, in an order, at most `limit`, as one JSON
 * array in the column `rows` (read into JOB_ROWS_SHAPE; parse with parseJobRows).
 */
export function jobRowsQuery(where: WhereClause, order: readonly string[], limit: number): WhereClause {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs ` +
      `WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params,
  };
}
export const JOB_ROWS_SHAPE = { rows: "" };

export function parseJobRows(text: string): JobRow[] {
  return JSON.parse(text) as JobRow[];
}

/** The columns a JobPatch may write (job-schema.ts), by how the statement reads them back from JSON. */
const PATCH_TEXT: readonly string[] = JOB_PATCH_TEXT_FIELDS;
const PATCH_NUMBER: readonly string[] = JOB_PATCH_NUMBER_FIELDS;
/** Sent as their JSON text (a string), so the column stores JSON, as PocketBase's record save does. */
const PATCH_JSON: readonly string[] = JOB_PATCH_JSON_FIELDS;

/**
 * One statement writing every patch (at most one per id: merge them first).
 * A column is set only on the rows whose patch names it. `updated` is
 * stamped as PocketBase's record save would.
 */
export function bulkPatchStatement(patches: readonly { id: string; patch: JobPatch }[], updated: string): WhereClause {
  const columns: string[] = [];
  const items = patches.map(({ id, patch }) => {
    const item: { [field: string]: unknown } = { id };
    for (const field in patch) {
      const value = (patch as { [field: string]: unknown })[field];
      if (value === undefined) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) =>
    `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p ` +
      "WHERE probe_jobs.id = json_extract(p.value, '$.id')",
    params: { patches: JSON.stringify(items), updated },
  };
}
