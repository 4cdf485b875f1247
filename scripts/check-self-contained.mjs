#!/usr/bin/env node
// Usage: node scripts/check-self-contained.mjs [pb_hooks/fleet.pb.js]
// Exits 1 and names each identifier a handler uses but does not carry.
import { readFileSync } from "node:fs";
import { checkSelfContained } from "./build/self-contained.mjs";

const file = process.argv[2] ?? "pb_hooks/fleet.pb.js";
let source;
try {
  source = readFileSync(file, "utf8");
} catch (err) {
  console.error(`check-self-contained: cannot read ${file} (${err.code ?? err.message}). Run \`npm run build\` first, or pass the hooks file to check.`);
  process.exit(2);
}
const { violations, handlers } = checkSelfContained(source);
for (const h of handlers) console.log(`${h.name}: ${h.bytes} bytes, uses ${h.freeIdentifiers.join(" ") || "no globals"}`);
if (violations.length > 0) {
  for (const v of violations) console.error(`NOT SELF-CONTAINED: ${v}`);
  process.exit(1);
}
console.log(`${file}: ${handlers.length} handlers, all self-contained`);
