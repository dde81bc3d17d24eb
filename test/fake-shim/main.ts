/**
 * Runs the fake provider shim on its own, for local end-to-end runs:
 *
 *   node --experimental-strip-types test/fake-shim/main.ts [--port 8788] [--secret S --callback-url URL]
 *
 * Prints one JSON line with the server URL (and, with --secret, a tenant ready to register
 * as a provider: its url is what `POST /api/v1/providers` takes). Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { startFakeShim } from "./server.ts";

const { values } = parseArgs({
  options: { port: { type: "string" }, secret: { type: "string" }, "callback-url": { type: "string" } },
});

const shim = await startFakeShim({ port: values.port ? Number(values.port) : 0 });
let tenant: unknown;
if (values.secret) {
  const res = await fetch(`${shim.url}/_control/tenants`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ secret: values.secret, callback_url: values["callback-url"] }),
  });
  tenant = await res.json();
}
console.log(JSON.stringify({ event: "fake_shim_started", url: shim.url, ...(tenant ? { tenant } : {}) }));

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void shim.stop().then(() => process.exit(0));
  });
}
