import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appWatchKey } from "../../../src/recovery/watch-list";
import { APP_ID, appKeyPkcs1, createEndpoint, INSTALLATION_ID, newWorld } from "../github-helpers";
import { api, unique } from "../helpers";
import { callsTo, jobsOf, lostJobs, pass, recoveriesOf, recoveryWorld, scaleSetOf, WEBHOOK_URL } from "./recovery-world";

const APP_SECRET = "app-webhook-secret-recovery";

describe("recovery through an App's own webhook", () => {
  it("lists the App's deliveries as the App, and a delivery speaks for the entities of the installation it names", async () => {
    const github = await newWorld();
    const endpoint = await createEndpoint(github);
    const made = await api.post("/api/v1/github/credentials", {
      name: unique("app"),
      endpoint,
      auth_type: "app",
      app: { app_id: APP_ID, installation_id: INSTALLATION_ID, private_key: appKeyPkcs1, webhook_secret: APP_SECRET },
    });
    expect(made.status, made.text).toBe(201);
    const creds = made.body;
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: creds.name,
      webhook_secret: "whsec-unused-1234",
    });
    const scaleSetId = await scaleSetOf("repositories", repo.body.id);
    await github.deliverWebhooksTo({ url: WEBHOOK_URL, secret: APP_SECRET, app_id: APP_ID, enterprise_host: "github.example.test" });
    const ids = await lostJobs(github, 2);

    await pass();
    expect(await jobsOf(repo.body.id)).toEqual(Object.fromEntries(ids.map((id) => [id, { status: "queued", scale_set_id: scaleSetId }])));
    const lists = await callsTo(github, "list_app_hook_deliveries");
    expect(lists.map((r) => r.auth)).toEqual(["app"]);
    expect((await callsTo(github, "get_app_hook_delivery")).map((r) => r.auth)).toEqual(["app", "app"]);
    const rows = await recoveriesOf(appWatchKey(endpoint, APP_ID));
    // The App's webhook feeds one entity here: each recovered delivery is counted under it.
    expect(rows.map((r) => [r.outcome, r.entity_id])).toEqual([
      ["recovered", repo.body.id],
      ["recovered", repo.body.id],
    ]);
  });
});

describe("the recovery object", () => {
  it("a poke schedules the next pass once; a pass runs on its alarm, counts what it spent, and re-arms", async () => {
    const w = await recoveryWorld();
    await lostJobs(w.github, 1);
    // The stub itself (recoveryObject's counts each call, and the test helpers want the runtime's own).
    const stub = env.DELIVERY_RECOVERY.get(env.DELIVERY_RECOVERY.idFromName("delivery-recovery"));
    const before = Date.now();
    await stub.poke();
    const armed = await stub.nextPassAt();
    // DELIVERY_RECOVERY_SECONDS is an hour in these tests.
    expect(armed).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    await stub.poke();
    expect(await stub.nextPassAt()).toBe(armed);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(Object.keys(await jobsOf(w.entityId))).toHaveLength(1);
    expect(await stub.nextPassAt()).toBeGreaterThan(Date.now() + 3_000_000);
    const last = await env.DB.prepare("SELECT * FROM recovery_last_pass WHERE id = 1").first<Record<string, number>>();
    expect(last!.calls).toBeGreaterThan(0);

    // The D1 round trips of a pass that finds nothing new do not grow with the number of watches.
    const quiet = await stub.runNow();
    expect(quiet.newFailures).toBe(0);
    expect(quiet.cost.d1RoundTrips).toBeLessThanOrEqual(3);
  });
});
