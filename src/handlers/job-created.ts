/** The probe_jobs create hook (see the adapter's stampDueTime): rows created through the record API get a due time. */
export { stampDueTime } from "@pb-fleet/adapter";
