/**
 * The simulator records each machine's timeline and keeps it once the machine is deleted
 * (GET /_control/simulator/timeline): a real simulator, machines created and deleted through the
 * signed shim protocol, booting against a stand-in coordinator that serves the JIT files.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type MachineTimeline, type Simulator, startSimulator } from "../../shims/simulator/simulator.ts";
import { createTenant, type FakeShimTenant } from "../fake-shim/control.ts";
import { garmBootstrap } from "../fixtures/bootstrap-instance.ts";

const SECRET = "simulator-timeline-secret-0001";
let sim: Simulator;
let coordinator: Server;
let base: string;
let tenants: FakeShimTenant[];

beforeAll(async () => {
  // What a machine asks the coordinator for on boot; GitHub (serverUrl) refuses it afterwards, which ends its runner.
  coordinator = createServer((req, res) => {
    const files: Record<string, unknown> = {
      "/runner-metadata": { "callback-url": base, jit_config_enabled: true, os_type: "linux" },
      "/credentials/runner": { agentId: 7, agentName: "m", serverUrl: base },
      "/credentials/credentials": { data: { clientId: "c" } },
      "/credentials/credentials_rsaparams": {},
    };
    const body = files[req.url ?? ""];
    req.resume();
    res.writeHead(body === undefined ? (req.method === "POST" ? 200 : 404) : 200, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((r) => coordinator.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(coordinator.address() as AddressInfo).port}`;
  sim = await startSimulator({ config: { boot_delay_ms: 0, poll_ms: 10 } });
  tenants = [await createTenant(sim.url, { secret: SECRET }), await createTenant(sim.url, { secret: SECRET })];
});
afterAll(async () => {
  await sim.stop();
  await new Promise((r) => coordinator.close(r));
});

async function send(t: FakeShimTenant, method: string, route: string, pool: string, body = "") {
  const url = t.url + route;
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac("sha256", SECRET)
    .update(`${ts}\n${method}\n${new URL(url).pathname}\n${body}`)
    .digest("hex");
  const res = await fetch(url, {
    method,
    headers: {
      "x-edgerunner-timestamp": ts,
      "x-edgerunner-signature": `sha256=${sig}`,
      "x-edgerunner-controller-id": "ctrl",
      "x-edgerunner-pool-id": pool,
      "x-edgerunner-pool-extra-specs": Buffer.from("{}").toString("base64"),
      ...(body && { "content-type": "application/json" }),
    },
    ...(body && { body }),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as { provider_id: string } | null };
}

const create = (t: FakeShimTenant, name: string, pool: string) =>
  send(
    t,
    "POST",
    "/v1/instances",
    pool,
    JSON.stringify({ ...garmBootstrap, name, pool_id: pool, "metadata-url": base, "callback-url": base }),
  );

async function timeline(query: string): Promise<MachineTimeline[]> {
  const res = await fetch(`${sim.url}/_control/simulator/timeline${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as MachineTimeline[];
}

it("records when each machine was created, booted and configured, and keeps it after the delete, by tenant and pool", async () => {
  const [a, b] = tenants as [FakeShimTenant, FakeShimTenant];
  const before = Date.now();
  const made = await create(a, "m-1", "pool-1");
  expect(made.status).toBe(201);
  await create(a, "m-2", "pool-2");
  await create(b, "m-3", "pool-1");
  await expect
    .poll(async () => (await timeline(`?tenant=${a.id}&pool=pool-1`)).map((t) => t.configured_at !== null), { timeout: 10_000 })
    .toEqual([true]);
  expect((await send(a, "DELETE", `/v1/instances/${made.body!.provider_id}`, "pool-1")).status).toBeLessThan(300);

  const [kept] = await timeline(`?tenant=${a.id}&pool=pool-1&since=${before}`);
  expect(kept).toMatchObject({ tenant: a.id, pool_id: "pool-1", name: "m-1", boot_delay_ms: 0 });
  expect(kept!.created_at).toBeGreaterThanOrEqual(before);
  expect(kept!.booted_at).toBeGreaterThanOrEqual(kept!.created_at);
  expect(kept!.configured_at).toBeGreaterThanOrEqual(kept!.booted_at!);
  expect(kept!.deleted_at).toBeGreaterThanOrEqual(kept!.configured_at!);
  expect(sim.runners.has(made.body!.provider_id)).toBe(false);

  expect((await timeline(`?tenant=${a.id}`)).map((t) => t.name).sort()).toEqual(["m-1", "m-2"]);
  expect((await timeline(`?pool=pool-1`)).map((t) => t.name).sort()).toEqual(["m-1", "m-3"]);
  expect(await timeline(`?tenant=${a.id}&since=${Date.now() + 60_000}`)).toEqual([]);
});

it("refuses a since that is not milliseconds", async () => {
  const res = await fetch(`${sim.url}/_control/simulator/timeline?since=yesterday`);
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ error: expect.stringMatching(/milliseconds/) });
});

it("takes boot_jitter as a knob", async () => {
  const res = await fetch(`${sim.url}/_control/simulator`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ boot_jitter: 0.1 }),
  });
  expect(await res.json()).toMatchObject({ boot_jitter: 0.1, boot_delay_ms: 0 });
});
