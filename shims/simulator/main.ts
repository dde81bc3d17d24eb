/**
 * Runs the simulator shim on its own:
 *
 *   node --experimental-strip-types shims/simulator/main.ts [--port 8790] [--boot-delay-ms 100] [--boot-jitter 0.1] [--job-ms 500]
 *        [--boot-failure-rate 0] [--batch-create-max 100 (0: protocol v1, no batch)]
 *        [--flavors catalogue.json | none (default: DEFAULT_SIMULATOR_FLAVORS; none: no catalogue, protocol v1.1)]
 *        [--secret S --callback-url URL] [--quiet]
 *
 * Prints one JSON line with the server URL (and, with --secret, a tenant to register as a provider),
 * then one JSON line per simulated runner event unless --quiet. Stops on SIGINT/SIGTERM.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { validateFlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import { startSimulator } from "./simulator.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    "boot-delay-ms": { type: "string" },
    "boot-jitter": { type: "string" },
    "job-ms": { type: "string" },
    "boot-failure-rate": { type: "string" },
    "batch-create-max": { type: "string" },
    flavors: { type: "string" },
    secret: { type: "string" },
    "callback-url": { type: "string" },
    quiet: { type: "boolean" },
  },
});
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
const config = Object.fromEntries(
  Object.entries({
    boot_delay_ms: num(values["boot-delay-ms"]),
    boot_jitter: num(values["boot-jitter"]),
    job_ms: num(values["job-ms"]),
    boot_failure_rate: num(values["boot-failure-rate"]),
  }).filter(([, v]) => v !== undefined),
);
/** --flavors: a FlavorCatalogue file, held to the coordinator's rule so a typo stops here rather than in every scale set. */
function flavorsOption(v: string | undefined) {
  if (v === undefined) return undefined;
  if (v === "none") return null;
  const checked = validateFlavorCatalogue(JSON.parse(readFileSync(v, "utf8")));
  if (!checked.ok) {
    console.error(`--flavors ${v} is not a valid flavor catalogue: ${checked.problems.join("; ")}`);
    process.exit(2);
  }
  return checked.value;
}
const sim = await startSimulator({
  port: values.port ? Number(values.port) : 0,
  config,
  batchCreateMax: num(values["batch-create-max"]),
  flavors: flavorsOption(values.flavors),
  log: values.quiet ? undefined : (line) => process.stderr.write(JSON.stringify(line) + "\n"),
});
let tenant: unknown;
if (values.secret) {
  const res = await fetch(`${sim.url}/_control/tenants`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ secret: values.secret, callback_url: values["callback-url"] }),
  });
  tenant = await res.json();
}
console.log(JSON.stringify({ event: "simulator_started", url: sim.url, config: sim.config, ...(tenant ? { tenant } : {}) }));

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void sim.stop().then(() => process.exit(0));
  });
}
