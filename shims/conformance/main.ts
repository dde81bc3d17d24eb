/**
 * npm run shim:conformance -- --url URL --secret S [--provider-config JSON|@file] [--machines N]
 *   [--callback-port P] [--wait-seconds N] [--timeout-seconds N] [--controller-id ID]
 *
 * Drives the shim at URL through the whole provider shim protocol and prints a pass/fail table;
 * exits 1 if any check failed. The secret may also come from EDGERUNNER_SHIM_SECRET.
 * --provider-config sets what the machines are made from: {"image","flavor","os_type","arch","extra_specs"}.
 */
import "../ts-resolve.ts";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { formatResult, formatTotals, runConformance } = await import("./kit.ts");

const usage =
  "usage: npm run shim:conformance -- --url URL --secret S [--provider-config JSON|@file] [--machines N] [--callback-port P] [--wait-seconds N] [--timeout-seconds N] [--controller-id ID]";
let values;
try {
  ({ values } = parseArgs({
    options: {
      url: { type: "string" },
      secret: { type: "string" },
      "provider-config": { type: "string" },
      machines: { type: "string" },
      "callback-port": { type: "string" },
      "wait-seconds": { type: "string" },
      "timeout-seconds": { type: "string" },
      "controller-id": { type: "string" },
      help: { type: "boolean" },
    },
  }));
} catch (err) {
  console.error(`${(err as Error).message}\n${usage}`);
  process.exit(2);
}
const secret = values.secret ?? process.env.EDGERUNNER_SHIM_SECRET;
if (values.help || !values.url || !secret) {
  console.error(usage);
  process.exit(values.help ? 0 : 2);
}
const pc = values["provider-config"];
const provider = pc ? JSON.parse(pc.startsWith("@") ? readFileSync(pc.slice(1), "utf8") : pc) : {};
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

console.log(`shim conformance: ${values.url}`);
const report = await runConformance({
  url: values.url,
  secret,
  provider,
  controllerId: values["controller-id"],
  machines: num(values.machines),
  callbackPort: num(values["callback-port"]),
  waitMs: values["wait-seconds"] ? Number(values["wait-seconds"]) * 1000 : undefined,
  requestTimeoutMs: values["timeout-seconds"] ? Number(values["timeout-seconds"]) * 1000 : undefined,
  onResult: (r) => console.log(formatResult(r)),
});
console.log(formatTotals(report));
process.exit(report.failed ? 1 : 0);
