// Providers that hang, flood or crowd the bridge: per-call timeouts that kill the whole
// process group, an output cap, and a concurrency limit with a bounded queue.
import { afterEach, describe, expect, it } from "vitest";
import { bootstrap, makeProviderWorld, type ProviderWorld, processAlive, send, startTestBridge, type TestBridge } from "./harness";

let world: ProviderWorld | undefined;
let bridge: TestBridge | undefined;
afterEach(async () => {
  await bridge?.stop();
  world?.cleanup();
  bridge = undefined;
  world = undefined;
});

const waitFor = async (check: () => boolean, ms = 3000) => {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  return check();
};

describe("timeouts", () => {
  it("kills a hanging provider and its children and answers 504", async () => {
    world = makeProviderWorld();
    bridge = await startTestBridge(world, { timeout_seconds: 0.6 });
    world.configure({ faults: { GetInstance: { child_hang: true, stderr: "" } } });
    const started = Date.now();
    const res = await send(bridge, "GET", "/v1/instances/vm-stuck");
    expect(res.status).toBe(504);
    expect(res.body.error).toMatch(/GetInstance did not finish within 600 ms and was killed/);
    expect(Date.now() - started).toBeLessThan(5000);
    const [call] = world.calls();
    expect(call?.child_pid).toBeTypeOf("number");
    expect(await waitFor(() => !processAlive(call!.pid) && !processAlive(call!.child_pid!))).toBe(true);
    expect(bridge.logs.find((l) => l.event === "provider_exec")).toMatchObject({ command: "GetInstance", result: "timeout" });
  });

  it("does not wait for a daemon that keeps the output pipes open after the provider exits", async () => {
    world = makeProviderWorld();
    const script = world.script(
      "daemonizing-provider",
      `#!/bin/sh\n# leaves a background job holding stdout, as a careless provider might\n(sleep 30) &\necho '[]'\nexit 0\n`,
    );
    bridge = await startTestBridge(world, { provider_executable: script, timeout_seconds: 20 });
    const started = Date.now();
    const res = await send(bridge, "GET", "/v1/instances");
    expect(res).toMatchObject({ status: 200, body: [] });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("output", () => {
  it("kills a provider that writes more than allowed and answers 502", async () => {
    world = makeProviderWorld();
    bridge = await startTestBridge(world, { max_output_bytes: 64 * 1024 });
    world.configure({ faults: { ListInstances: { huge_bytes: 8 * 1024 * 1024 } } });
    const res = await send(bridge, "GET", "/v1/instances");
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(/ListInstances wrote more stdout than allowed/);
  });

  it("keeps a huge error output out of the answer beyond a readable snippet", async () => {
    world = makeProviderWorld();
    bridge = await startTestBridge(world);
    world.configure({ faults: { ListInstances: { exit: 3, stderr: "E".repeat(100_000) } } });
    const res = await send(bridge, "GET", "/v1/instances");
    expect(res.status).toBe(500);
    expect(res.body.error.length).toBeLessThan(5000);
    expect(res.body.error).toContain("(100000 bytes)");
  });
});

describe("concurrency", () => {
  it("runs at most `concurrency` providers at once and refuses with 503 when the queue is full", async () => {
    world = makeProviderWorld();
    bridge = await startTestBridge(world, { concurrency: 2, max_queue: 2 });
    world.configure({ sleep_ms: 300 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(bridge!, "GET", "/v1/instances")));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 503, 503]);
    const busy = answers.find((a) => a.status === 503)!;
    expect(busy.body.error).toMatch(/bridge busy: 2 provider calls running and 2 queued/);
    expect(busy.headers.get("retry-after")).toBe("5");

    // Never more than two at once: at the moment each call started, count the calls running.
    // (Pairwise overlap is not it: B may overlap A at its start and C at its end, under load.)
    const calls = world.calls();
    expect(calls).toHaveLength(4);
    for (const c of calls) {
      const runningAtItsStart = calls.filter((o) => o.started <= c.started && c.started < o.ended);
      expect(runningAtItsStart.length).toBeLessThanOrEqual(2);
    }
  });
});

describe("stopping", () => {
  it("lets a create under way finish and answer before the bridge stops", async () => {
    world = makeProviderWorld();
    bridge = await startTestBridge(world);
    world.configure({ create_sleep_ms: 500 });
    const creating = send(bridge, "POST", "/v1/instances", JSON.stringify(bootstrap("runner-stopping")));
    await new Promise((r) => setTimeout(r, 200));
    const stopped = bridge.stop();
    expect(await creating).toMatchObject({ status: 201, body: { name: "runner-stopping" } });
    await stopped;
    bridge = undefined;
    expect(world.calls().filter((c) => c.command === "CreateInstance")).toHaveLength(1);
  });
});
