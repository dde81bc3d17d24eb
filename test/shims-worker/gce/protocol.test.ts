// Over the house's ~400 lines (~420): the protocol's operations against the fake Compute Engine, one
// describe each (create and its fallbacks, errors, list/get/stop/start/delete), sharing one harness.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { validateProviderInstance, validateProviderInstanceList } from "../../../src/providers/shim-protocol";
import { bootstrap, CONTROLLER, faultText, IMAGE, inserts, OTHER_POOL, POOL, SECRET, type ShimWorld, shimWorld } from "./harness";

let w: ShimWorld;
beforeAll(async () => {
  w = await shimWorld();
});
let logs: string[] = [];
beforeEach(() => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const computeCalls = async () => (await w.project.requests()).filter((r) => r.method !== "oauth2.token");
const waitFor = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
};

describe("signatures, headers, configuration", () => {
  it("an unsigned or wrongly signed request is 401 before Google is called", async () => {
    await w.project.reset();
    const b = bootstrap();
    const unsigned = await w.call("POST", "/v1/instances", {
      body: b,
      headers: { "X-Edgerunner-Signature": undefined, "X-Edgerunner-Timestamp": undefined },
    });
    const wrong = await w.call("POST", "/v1/instances", { body: b, secret: "another-secret-of-16-chars" });
    expect([unsigned.status, wrong.status]).toEqual([401, 401]);
    expect(wrong.body.details.reason).toBe("bad_signature");
    expect(await w.project.requests()).toEqual([]);
  });

  it("a misconfigured Worker says which setting is wrong, never a key's content; another coordinator is 403", async () => {
    const none = await w.call("GET", "/v1/instances", { env: { GCE_SERVICE_ACCOUNT_KEY: "" } });
    expect(none.status).toBe(500);
    expect(none.body.error).toMatch(/GCE_SERVICE_ACCOUNT_KEY must be set/);
    const notKey = await w.call("GET", "/v1/instances", {
      env: { GCE_SERVICE_ACCOUNT_KEY: JSON.stringify({ type: "authorized_user", private_key: "SECRET-PART" }) },
    });
    expect(notKey.body.error).toMatch(/lacks type \(service_account\), client_email, token_uri, project_id/);
    expect(notKey.body.error).not.toContain("SECRET-PART");
    expect((await w.call("GET", "/v1/instances", { env: { GCE_ZONES: "moon-1" } })).body.error).toMatch(/GCE_ZONES must be zones/);
    expect((await w.call("GET", "/v1/instances", { env: { CONTROLLER_ID: "someone-else" } })).status).toBe(403);
    expect((await w.call("GET", "/v1/instances", { headers: { "X-Edgerunner-Pool-Id": undefined } })).status).toBe(400);
  });
});

describe("create", () => {
  it("inserts one labelled instance whose startup script fetches the install script with the instance token", async () => {
    await w.project.reset();
    const b = bootstrap({
      extra_specs: {
        labels: { team: "ci" },
        network_tags: ["ci-runner"],
        subnetwork: "runners",
        disk_size_gb: 50,
        disk_type: "pd-ssd",
        service_account: "runner@proj.iam.gserviceaccount.com",
      },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(201);
    expect(validateProviderInstance(res.body).ok).toBe(true);
    expect(res.body).toMatchObject({ name: b.name, status: "running", os_type: "linux", os_arch: "amd64" });
    expect(res.body.provider_fault).toBeUndefined();
    const [i] = await w.project.instances();
    expect(i).toMatchObject({
      id: res.body.provider_id,
      name: b.name,
      labels: { team: "ci", "edgerunner-controller-id": CONTROLLER, "edgerunner-pool-id": POOL },
      tags: { items: ["ci-runner"] },
      serviceAccounts: [{ email: "runner@proj.iam.gserviceaccount.com", scopes: ["https://www.googleapis.com/auth/cloud-platform"] }],
      scheduling: { provisioningModel: "STANDARD" },
    });
    expect(i!.zone).toMatch(/\/zones\/us-central1-a$/);
    expect(i!.machineType).toMatch(/\/zones\/us-central1-a\/machineTypes\/e2-standard-2$/);
    expect(i!.disks?.[0]).toMatchObject({ boot: true, autoDelete: true, diskSizeGb: "50" });
    expect(i!.disks?.[0]?.source).toMatch(/\/zones\/us-central1-a\/disks\//);
    expect(i!.networkInterfaces?.[0]).toMatchObject({
      subnetwork: "regions/us-central1/subnetworks/runners",
      accessConfigs: [{ type: "ONE_TO_ONE_NAT" }],
    });
    const script = i!.metadata?.items?.find((m) => m.key === "startup-script")?.value ?? "";
    expect(script).toMatch(/^#!\/bin\/bash\n/);
    expect(script).toContain(b["instance-token"]);
    const reqs = await w.project.requests();
    // GCE does not answer initializeParams for an instance: what the disk was made from is in the insert.
    const inserted = reqs.find((r) => r.method === "compute.instances.insert")?.body as { disks?: { initializeParams?: unknown }[] };
    expect(inserted.disks?.[0]?.initializeParams).toEqual({
      sourceImage: IMAGE,
      diskSizeGb: "50",
      diskType: "zones/us-central1-a/diskTypes/pd-ssd",
    });
    // One token for the whole create (its lookup, insert, wait and read-back).
    expect(reqs.filter((r) => r.method === "oauth2.token").length).toBeLessThanOrEqual(1);
    expect(reqs.filter((r) => r.method !== "oauth2.token").map((r) => r.method)).toEqual([
      "compute.instances.aggregatedList",
      "compute.instances.insert",
      "compute.zoneOperations.wait",
      "compute.instances.get",
    ]);
    // The log never carries the token.
    expect(logs.join("\n")).not.toContain(b["instance-token"]);
  });

  it("is idempotent on the name: a retried create answers the same machine and inserts nothing", async () => {
    await w.project.reset();
    const b = bootstrap();
    const first = await w.call("POST", "/v1/instances", { body: b });
    const again = await w.call("POST", "/v1/instances", { body: { ...b, "instance-token": "a-fresh-token" } });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.provider_id).toBe(first.body.provider_id);
    expect((await inserts(w.project)).length).toBe(1);
  });

  it("a name taken by another pool's machine is 409 and nothing is inserted", async () => {
    await w.project.reset();
    const b = bootstrap();
    await w.project.seedInstance({
      name: b.name,
      zone: "us-central1-b",
      labels: { "edgerunner-pool-id": OTHER_POOL, "edgerunner-controller-id": CONTROLLER },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(409);
    expect(res.body.error).toContain("us-central1-b");
    expect(await inserts(w.project)).toEqual([]);
  });

  it("falls back across zones on ZONE_RESOURCE_POOL_EXHAUSTED (reported on the operation) and records the attempts in the fault", async () => {
    await w.project.reset();
    await w.project.setFaults({ insert: [{ code: "ZONE_RESOURCE_POOL_EXHAUSTED", zone: "us-central1-a" }] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap() });
    expect(res.status).toBe(201);
    expect(faultText(res.body)).toBe(
      "launched as standard in us-central1-b after: standard in us-central1-a: ZONE_RESOURCE_POOL_EXHAUSTED",
    );
    expect(await inserts(w.project)).toEqual([
      { zone: "us-central1-a", model: "STANDARD", error: "ZONE_RESOURCE_POOL_EXHAUSTED" },
      { zone: "us-central1-b", model: "STANDARD", error: null },
    ]);
    const live = await w.project.instances();
    expect(live.map((i) => i.zone.split("/").pop())).toEqual(["us-central1-b"]);
  });

  it("Spot with on-demand fallback: Spot everywhere first, then standard; a Spot quota rules out the region's other zones", async () => {
    await w.project.reset();
    await w.project.setFaults({ insert: [{ code: "QUOTA_EXCEEDED", provisioning_model: "SPOT" }] });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ extra_specs: { capacity: "spot-with-fallback", zones: ["us-central1-a", "us-central1-b", "europe-west1-b"] } }),
    });
    expect(res.status).toBe(201);
    expect(await inserts(w.project)).toEqual([
      { zone: "us-central1-a", model: "SPOT", error: "QUOTA_EXCEEDED" },
      { zone: "europe-west1-b", model: "SPOT", error: "QUOTA_EXCEEDED" },
      { zone: "us-central1-a", model: "STANDARD", error: null },
    ]);
    expect(faultText(res.body)).toMatch(
      /^launched as standard in us-central1-a after: spot in us-central1-a: QUOTA_EXCEEDED; spot in europe-west1-b: QUOTA_EXCEEDED$/,
    );
    const [i] = await w.project.instances();
    expect(i!.scheduling).toMatchObject({ provisioningModel: "STANDARD" });
  });

  it("Spot machines are deleted on preemption; a 403 quotaExceeded on the HTTP answer also moves on", async () => {
    await w.project.reset();
    await w.project.setFaults({ insert: [{ code: "quotaExceeded", http: 403, zone: "us-central1-a" }] });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ extra_specs: { capacity: "spot", zones: ["us-central1-a", "us-central1-b", "europe-west1-b"] } }),
    });
    expect(res.status).toBe(201);
    // The quota is the region's: us-central1-b is not tried.
    expect((await inserts(w.project)).map((x) => `${x.zone} ${x.error}`)).toEqual(["us-central1-a quotaExceeded", "europe-west1-b null"]);
    const [i] = await w.project.instances();
    expect(i!.scheduling).toMatchObject({ provisioningModel: "SPOT", instanceTerminationAction: "DELETE" });
  });

  it("an insert still running at the create's deadline is answered as the machine it will be", async () => {
    await w.project.reset();
    await w.project.configure({ operation_ms: 2500 });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap(), env: { CREATE_DEADLINE_SECONDS: "1" } });
    await w.project.configure({ operation_ms: 10 });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("running");
    expect((await w.project.instances())[0]!.status).toBe("PROVISIONING");
  });

  it("no capacity anywhere is 503 with every attempt named", async () => {
    await w.project.reset();
    await w.project.setFaults({ insert: [{ code: "ZONE_RESOURCE_POOL_EXHAUSTED" }] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap() });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.body.error).toMatch(
      /no GCE capacity for .*: tried standard in us-central1-a: ZONE_RESOURCE_POOL_EXHAUSTED; standard in us-central1-b: ZONE_RESOURCE_POOL_EXHAUSTED$/,
    );
    expect(await w.project.instances()).toEqual([]);
  });

  it("refuses what GCE could not take: a bad image, machine type or name is 400; a missing image is 422; Windows is refused", async () => {
    await w.project.reset();
    const bad = await w.call("POST", "/v1/instances", { body: bootstrap({ image: "ubuntu:24.04", flavor: "c5.large", name: "Runner_1" }) });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([
      expect.stringMatching(/^image must be an image family or image URL/),
      expect.stringMatching(/^flavor must be a GCE machine type/),
      expect.stringMatching(/is not a GCE instance name/),
    ]);
    expect((await w.call("POST", "/v1/instances", { body: bootstrap({ os_type: "windows" }) })).status).toBe(400);
    const spec = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { zone: "us-central1-a" } }) });
    expect(spec.body.details).toEqual(["extra_specs.zone: unknown key; the GCE shim calls it zones"]);
    await w.project.configure({ missing_images: ["family/debian-99"] });
    const missing = await w.call("POST", "/v1/instances", {
      body: bootstrap({ image: "projects/debian-cloud/global/images/family/debian-99" }),
    });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatch(/GCE refused compute.instances.insert \(notFound: The resource/);
    await w.project.configure({ missing_images: [] });
  });

  it("labels that break GCE's rules are named; the ids become valid label values", async () => {
    const spec = await w.call("POST", "/v1/instances", {
      body: bootstrap({ extra_specs: { labels: { "edgerunner-x": "y", Team: "x", ok: "Upper" } } }),
    });
    expect(spec.status).toBe(400);
    expect(spec.body.details).toEqual([
      "extra_specs.labels.edgerunner-x: edgerunner-* labels are set by the shim",
      "extra_specs.labels.Team: label keys are lowercase letters, digits, _ and -, at most 63, starting with a letter",
      "extra_specs.labels.ok: label values are lowercase letters, digits, _ and -, at most 63",
    ]);
    await w.project.reset();
    const pool = "Pool/With Capitals and a very long name that GCE would never take as a label value";
    const b = bootstrap({ pool_id: pool });
    const res = await w.call("POST", "/v1/instances", { body: b, pool });
    expect(res.status).toBe(201);
    const [i] = await w.project.instances();
    expect(i!.labels!["edgerunner-pool-id"]).toMatch(/^[a-z0-9_-]{1,63}$/);
    const listed = await w.call("GET", "/v1/instances", { pool });
    expect(listed.body.map((x: { name: string }) => x.name)).toEqual([b.name]);
  });
});

describe("errors", () => {
  it("throttling (403 rateLimitExceeded, 429) is 503 with retry-after, so the coordinator backs off", async () => {
    await w.project.reset();
    await w.project.setFaults({
      methods: [{ method: "compute.instances.aggregatedList", status: 403, reason: "rateLimitExceeded", times: 1 }],
    });
    const a = await w.call("GET", "/v1/instances");
    await w.project.setFaults({
      methods: [{ method: "compute.instances.aggregatedList", status: 429, reason: "rateLimitExceeded", times: 1 }],
    });
    const b = await w.call("GET", "/v1/instances");
    expect([a.status, b.status]).toEqual([503, 503]);
    expect(a.headers.get("retry-after")).toBe("5");
    expect(a.body.error).toMatch(/throttling/);
    expect((await w.call("GET", "/v1/instances")).status).toBe(200);
  });

  it("a missing permission is 403 naming it and the role", async () => {
    await w.project.reset();
    await w.project.configure({ denied_permissions: ["compute.instances.create"] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap() });
    await w.project.configure({ denied_permissions: [] });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/may not call compute.instances.insert \(forbidden: Required 'compute.instances.create' permission/);
    expect(res.body.error).toMatch(/docs\/gce-shim.md/);
  });

  it("a key Google does not accept is 403 saying to check GCE_SERVICE_ACCOUNT_KEY", async () => {
    const other = await shimWorld();
    const forged = {
      ...w.project.service_account_key,
      private_key: other.project.service_account_key.private_key,
      private_key_id: "forged",
    };
    const res = await w.call("GET", "/v1/instances", { env: { GCE_SERVICE_ACCOUNT_KEY: JSON.stringify(forged) } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/invalid_grant.*check the Worker's GCE_SERVICE_ACCOUNT_KEY/);
  });

  it("the token endpoint failing is 502 (retried), not a credentials error", async () => {
    await w.project.setFaults({ methods: [{ method: "oauth2.token", status: 503, reason: "temporarily_unavailable", times: 1 }] });
    const key = { ...w.project.service_account_key, private_key_id: "fresh-cache-entry" };
    const res = await w.call("GET", "/v1/instances", { env: { GCE_SERVICE_ACCOUNT_KEY: JSON.stringify(key) } });
    expect(res.status).toBe(502);
    await w.project.setFaults({});
  });
});

describe("access tokens", () => {
  it("one token serves many requests until shortly before it expires; one Google revoked is replaced once", async () => {
    expect((await w.call("GET", "/v1/instances")).status).toBe(200);
    await w.project.reset();
    const tokens = async () => (await w.project.requests()).filter((r) => r.method === "oauth2.token").length;
    for (let i = 0; i < 3; i++) expect((await w.call("GET", "/v1/instances")).status).toBe(200);
    expect(await tokens()).toBe(0);
    await w.project.revokeTokens();
    expect((await w.call("GET", "/v1/instances")).status).toBe(200);
    expect((await w.project.requests()).map((r) => `${r.method} ${r.status}`)).toEqual([
      "compute.instances.aggregatedList 200",
      "compute.instances.aggregatedList 200",
      "compute.instances.aggregatedList 200",
      "compute.instances.aggregatedList 401",
      "oauth2.token 200",
      "compute.instances.aggregatedList 200",
    ]);
  });

  it("a token within five minutes of expiring is not used: another is minted", async () => {
    await w.project.reset();
    await w.project.configure({ token_ttl_s: 240 });
    const key = { ...w.project.service_account_key, private_key_id: "short-lived" };
    for (let i = 0; i < 2; i++)
      expect((await w.call("GET", "/v1/instances", { env: { GCE_SERVICE_ACCOUNT_KEY: JSON.stringify(key) } })).status).toBe(200);
    await w.project.configure({ token_ttl_s: 3600 });
    expect((await w.project.requests()).filter((r) => r.method === "oauth2.token").length).toBe(2);
  });
});

describe("list, get, delete, start, stop", () => {
  it("lists only this pool's machines across zones and pages", async () => {
    await w.project.reset();
    await w.project.configure({ page_size: 2 });
    const made = [];
    for (const zone of ["us-central1-a", "us-central1-a", "us-central1-b"]) {
      const r = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { zones: [zone] } }) });
      made.push(r.body.provider_id);
    }
    await w.project.seedInstance({
      name: "someone-elses",
      labels: { "edgerunner-pool-id": OTHER_POOL, "edgerunner-controller-id": CONTROLLER },
    });
    await w.project.seedInstance({ name: "unlabelled" });
    const res = await w.call("GET", "/v1/instances");
    await w.project.configure({ page_size: 500 });
    expect(res.status).toBe(200);
    expect(validateProviderInstanceList(res.body).ok).toBe(true);
    expect(res.body.map((i: { provider_id: string }) => i.provider_id).sort()).toEqual([...made].sort());
    expect(
      (await computeCalls()).filter((r) => r.method === "compute.instances.aggregatedList" && r.path.includes("pageToken")).length,
    ).toBeGreaterThan(0);
  });

  it("gets by id or name; another pool's machine is 404 and untouched", async () => {
    await w.project.reset();
    const b = bootstrap();
    const made = await w.call("POST", "/v1/instances", { body: b });
    expect((await w.call("GET", `/v1/instances/${made.body.provider_id}`)).body.name).toBe(b.name);
    expect((await w.call("GET", `/v1/instances/${b.name}`)).body.provider_id).toBe(made.body.provider_id);
    expect((await w.call("GET", `/v1/instances/${made.body.provider_id}`, { pool: OTHER_POOL })).status).toBe(404);
    expect((await w.call("DELETE", `/v1/instances/${made.body.provider_id}`, { pool: OTHER_POOL })).status).toBe(404);
    expect((await w.project.instances()).length).toBe(1);
  });

  it("answers a start while the instance is still stopping with a 409 to try again (GCE's resourceNotReady)", async () => {
    const slow = await shimWorld({ stop_delay_ms: 1_500 });
    const made = await slow.call("POST", "/v1/instances", { body: bootstrap() });
    const id = made.body.provider_id;
    const status = async () => (await slow.project.instances())[0]?.status;
    await waitFor(async () => (await status()) === "RUNNING", "running");
    expect((await slow.call("POST", `/v1/instances/${id}/stop`)).status).toBe(204);
    expect(await status()).toBe("STOPPING");
    const early = await slow.call("POST", `/v1/instances/${id}/start`);
    expect([early.status, early.body.error]).toEqual([409, expect.stringContaining("resourceNotReady")]);
    await waitFor(async () => (await status()) === "TERMINATED", "stopped");
    expect((await slow.call("POST", `/v1/instances/${id}/start`)).status).toBe(204);
    await waitFor(async () => (await status()) === "RUNNING", "started");
  });

  it("stop, start and delete act on the machine's zone", async () => {
    await w.project.reset();
    const made = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { zones: ["us-central1-b"] } }) });
    const id = made.body.provider_id;
    const status = async () => (await w.project.instances())[0]?.status;
    await waitFor(async () => (await status()) === "RUNNING", "running");
    expect((await w.call("POST", `/v1/instances/${id}/stop`)).status).toBe(204);
    await waitFor(async () => (await status()) === "TERMINATED", "stopped");
    expect((await w.call("GET", `/v1/instances/${id}`)).body.status).toBe("stopped");
    expect((await w.call("POST", `/v1/instances/${id}/start`)).status).toBe(204);
    await waitFor(async () => (await status()) === "RUNNING", "started");
    expect((await w.call("DELETE", `/v1/instances/${id}`)).status).toBe(204);
    await waitFor(async () => (await w.project.instances()).length === 0, "deleted");
    expect((await w.call("DELETE", `/v1/instances/${id}`)).status).toBe(404);
    const paths = (await computeCalls())
      .filter((r) => r.method.startsWith("compute.instances.") && r.http_method !== "GET")
      .map((r) => `${r.http_method} ${r.path.replace(/^\/compute\/v1\/projects\/[^/]+\//, "")}`);
    expect(paths.slice(1)).toEqual([
      `POST zones/us-central1-b/instances/${made.body.name}/stop`,
      `POST zones/us-central1-b/instances/${made.body.name}/start`,
      `DELETE zones/us-central1-b/instances/${made.body.name}`,
    ]);
  });

  it("remove-all deletes every machine of the pool and nothing else", async () => {
    await w.project.reset();
    await w.call("POST", "/v1/instances", { body: bootstrap() });
    await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { zones: ["us-central1-b"] } }) });
    await w.project.seedInstance({
      name: "someone-elses",
      labels: { "edgerunner-pool-id": OTHER_POOL, "edgerunner-controller-id": CONTROLLER },
    });
    expect((await w.call("DELETE", "/v1/instances")).status).toBe(204);
    await waitFor(async () => (await w.project.instances()).length === 1, "pool emptied");
    expect((await w.project.instances())[0]!.name).toBe("someone-elses");
  });
});

it("uses the signing secret only as the coordinator's", () => expect(SECRET.length).toBeGreaterThan(16));
