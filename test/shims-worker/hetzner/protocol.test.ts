import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { validateProviderInstance, validateProviderInstanceList } from "../../../src/providers/shim-protocol";
import { linuxBootstrapScript } from "../../fake-ec2/user-data-reader";
import { bootstrap, CONTROLLER, creates, faultText, OTHER_POOL, POOL, type ShimWorld, shimWorld } from "./harness";

let w: ShimWorld;
beforeAll(async () => {
  w = await shimWorld({ architectures: { cax11: "arm" } });
});
/** The Worker's log lines, kept instead of printed. */
let logs: string[] = [];
beforeEach(async () => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
  await w.project.reset();
});
afterEach(() => vi.restoreAllMocks());

const waitForStatus = async (id: string, status: string) => {
  for (let i = 0; i < 100; i++) {
    if ((await w.project.servers()).find((s) => String(s.id) === id)?.status === status) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`server ${id} never reached ${status}`);
};

describe("signatures, headers and settings", () => {
  it("an unsigned or wrongly signed request is 401 before Hetzner is called", async () => {
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

  it("capabilities: v1.2 with a flavor catalogue, synchronous, idempotent create, no batch create", async () => {
    const res = await w.call("GET", "/v1/capabilities");
    expect(res).toMatchObject({ status: 200 });
    expect(res.body).toEqual({ interface_version: "v1.2", async: false, idempotent_create: true, flavors: true, provider: "hetzner" });
  });

  it("ids that are not Hetzner label values are 400; a misconfigured Worker says what is missing, never the token", async () => {
    const long = await w.call("GET", "/v1/instances", { pool: "x".repeat(64) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatch(/label values/);
    expect((await w.call("GET", "/v1/instances", { env: { CONTROLLER_ID: "someone-else" } })).status).toBe(403);
    const broken = await w.call("GET", "/v1/instances", { env: { HCLOUD_TOKEN: "", HCLOUD_ENDPOINT: "not a url" } });
    expect(broken.status).toBe(500);
    expect(broken.body.error).toMatch(/HCLOUD_TOKEN must be set .*; HCLOUD_ENDPOINT must be a URL/);
  });
});

describe("create", () => {
  it("creates one labelled server whose user data fetches the install script with the instance token, with the extra specs applied", async () => {
    const b = bootstrap({
      "ssh-keys": ["ssh-ed25519 AAAA runner key"],
      extra_specs: {
        locations: ["nbg1"],
        placement_group: 7,
        firewalls: [11, 12],
        networks: [21],
        ssh_keys: ["ops"],
        enable_ipv4: false,
        labels: { team: "ci", "example.com/cost-center": "42" },
      },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(201);
    expect(validateProviderInstance(res.body).ok).toBe(true);
    expect(res.body).toMatchObject({ name: b.name, status: "running", os_type: "linux", os_arch: "amd64" });
    expect(res.body.provider_fault).toBeUndefined();
    // No public IPv4: the private network's address only.
    expect(res.body.addresses).toEqual([{ address: expect.stringMatching(/^10\.0\.0\./), type: "private" }]);
    const [s] = await w.project.servers();
    expect(s).toMatchObject({
      id: Number(res.body.provider_id),
      name: b.name,
      server_type: "cx22",
      location: "nbg1",
      image: "ubuntu-24.04",
      labels: { "edgerunner-controller-id": CONTROLLER, "edgerunner-pool-id": POOL, team: "ci", "example.com/cost-center": "42" },
      ssh_keys: ["ops"],
      firewalls: [11, 12],
      networks: [21],
      placement_group: 7,
      enable_ipv4: false,
      enable_ipv6: true,
    });
    expect(s!.user_data).toMatch(/^#cloud-config\n/);
    expect(s!.user_data).toContain('      - "ssh-ed25519 AAAA runner key"');
    const script = linuxBootstrapScript(s!.user_data!)!;
    expect(script).toContain(`METADATA_URL='${b["metadata-url"]}'`);
    expect(script).toContain(`INSTANCE_TOKEN='${b["instance-token"]}'`);
    // The create action was polled until it finished.
    expect((await w.project.requests()).some((r) => r.method === "GET" && r.path.startsWith("/actions/"))).toBe(true);
  });

  it("an Arm server type reports arm64", async () => {
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ flavor: "cax11", arch: "arm64" }) });
    expect(res.body.os_arch).toBe("arm64");
  });

  it("a retried create answers the same server (names are unique per project); another pool's name is 409", async () => {
    const b = bootstrap();
    const first = await w.call("POST", "/v1/instances", { body: b });
    const again = await w.call("POST", "/v1/instances", { body: { ...b, "instance-token": "a-fresh-token" } });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.provider_id).toBe(first.body.provider_id);
    expect(await w.project.servers()).toHaveLength(1);
    const other = await w.call("POST", "/v1/instances", { body: { ...b, pool_id: OTHER_POOL }, pool: OTHER_POOL });
    expect(other.status).toBe(409);
    expect(other.body.error).toContain(`taken by server ${first.body.provider_id}`);
  });

  it("falls back across locations, then server types, on capacity errors, and says so in the fault", async () => {
    await w.project.setFaults({
      create: [
        { code: "resource_unavailable", server_type: "cx22", location: "fsn1" },
        { code: "placement_error", server_type: "cx22", location: "nbg1" },
      ],
    });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ extra_specs: { locations: ["fsn1", "nbg1"], server_types: ["cpx21"] } }),
    });
    expect(res.status).toBe(201);
    expect(faultText(res.body)).toBe("created as cpx21 in fsn1 after: cx22 in fsn1: resource_unavailable; cx22 in nbg1: placement_error");
    expect((await creates(w.project)).map((c) => [c.type, c.location, c.error])).toEqual([
      ["cx22", "fsn1", "resource_unavailable"],
      ["cx22", "nbg1", "placement_error"],
      ["cpx21", "fsn1", null],
    ]);
  });

  it("a project limit rules the type out everywhere; no room anywhere is 503 listing every attempt", async () => {
    await w.project.setFaults({
      create: [
        { code: "resource_limit_exceeded", server_type: "cx22" },
        { code: "resource_unavailable", server_type: "cpx21" },
      ],
    });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ extra_specs: { locations: ["fsn1", "hel1"], server_types: ["cpx21"] } }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.body.error).toMatch(
      /^no Hetzner Cloud capacity for .*: tried cx22 in fsn1: resource_limit_exceeded; cpx21 in fsn1: resource_unavailable; cpx21 in hel1: resource_unavailable$/,
    );
    expect(await w.project.servers()).toEqual([]);
  });

  it("a create action that ends in error removes that server and tries the next attempt", async () => {
    await w.project.setFaults({ create_action_error: { code: "server_create_failed", times: 1 } });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { locations: ["fsn1", "hel1"] } }) });
    expect(res.status).toBe(201);
    expect(faultText(res.body)).toBe("created as cx22 in hel1 after: cx22 in fsn1: server_create_failed");
    const servers = await w.project.servers();
    expect(servers.map((s) => [s.location, Boolean(s.deleted)])).toEqual([
      ["fsn1", true],
      ["hel1", false],
    ]);
  });

  it("refuses what Hetzner cannot run before calling it: Windows, bad names, images, server types, extra specs, oversized user data", async () => {
    const bad = await w.call("POST", "/v1/instances", {
      body: bootstrap({
        os_type: "windows",
        name: "under_score",
        image: "Ubuntu 24",
        flavor: "C5.LARGE",
        extra_specs: { tags: {}, locations: ["FSN1"] },
      }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([
      "name must be a hostname (at most 63 letters, digits and '-'), as Hetzner requires of server names",
      'image must be a Hetzner image name such as ubuntu-24.04 or a snapshot id, not "Ubuntu 24"',
      "os_type must be linux (Hetzner Cloud has Linux images only)",
      'flavor must be a Hetzner server type such as cx22, not "C5.LARGE"',
      "extra_specs.locations.0: must be a location name such as fsn1",
      "extra_specs.tags: unknown key; the Hetzner shim calls it labels",
    ]);
    const reserved = await w.call("POST", "/v1/instances", { body: bootstrap({ extra_specs: { labels: { "edgerunner-pool-id": "x" } } }) });
    expect(reserved.body.error).toContain("extra_specs.labels.edgerunner-pool-id: edgerunner-* labels are set by the shim");
    const keys = Array.from({ length: 400 }, (_, i) => `ssh-ed25519 ${"A".repeat(80)}${i}`);
    const huge = await w.call("POST", "/v1/instances", { body: bootstrap({ "ssh-keys": keys }) });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toMatch(/over Hetzner's 32768/);
    expect(await w.project.requests()).toEqual([]);
  });

  it("Hetzner refusing the image is 422 with its message", async () => {
    await w.project.configure({ missing_images: ["debian-99"] });
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ image: "debian-99" }) });
    await w.project.configure({ missing_images: [] });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/Hetzner Cloud refused create a server \(invalid_input: invalid input in field 'image'\)/);
  });
});

describe("list, get, start, stop, delete", () => {
  it("lists only this pool's servers, following pages; gets by id or name; another pool's server is 404", async () => {
    await w.project.configure({ page_size: 2 });
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await w.call("POST", "/v1/instances", { body: bootstrap() })).body);
    await w.project.seedServer({ name: "not-ours", labels: { "edgerunner-pool-id": POOL } });
    const other = await w.project.seedServer({
      name: "other-pool",
      labels: { "edgerunner-controller-id": CONTROLLER, "edgerunner-pool-id": OTHER_POOL },
    });
    const list = await w.call("GET", "/v1/instances");
    await w.project.configure({ page_size: 50 });
    expect(list.status).toBe(200);
    expect(validateProviderInstanceList(list.body).ok).toBe(true);
    expect(list.body.map((i: any) => i.provider_id).sort()).toEqual(made.map((i) => i.provider_id).sort());
    const pages = (await w.project.requests()).filter((r) => r.method === "GET" && r.path.startsWith("/servers?"));
    expect(pages.map((r) => new URL(`http://x${r.path}`).searchParams.get("page"))).toEqual(["1", "2", "3"]);
    expect((await w.call("GET", `/v1/instances/${made[0].provider_id}`)).body.name).toBe(made[0].name);
    expect((await w.call("GET", `/v1/instances/${made[1].name}`)).body.provider_id).toBe(made[1].provider_id);
    expect((await w.call("GET", `/v1/instances/${other.id}`)).status).toBe(404);
    expect((await w.call("DELETE", `/v1/instances/${other.id}`)).status).toBe(404);
    expect((await w.call("GET", "/v1/instances/987654321")).status).toBe(404);
  });

  it("stop shuts down gracefully, start powers on, delete removes; delete all removes the pool's servers only", async () => {
    const a = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    const b = (await w.call("POST", "/v1/instances", { body: bootstrap() })).body;
    const outsider = await w.project.seedServer({ name: "outsider" });
    expect((await w.call("POST", `/v1/instances/${a.provider_id}/stop`)).status).toBe(204);
    await waitForStatus(a.provider_id, "off");
    expect((await w.call("GET", `/v1/instances/${a.provider_id}`)).body.status).toBe("stopped");
    expect((await w.call("POST", `/v1/instances/${a.provider_id}/start`)).status).toBe(204);
    await waitForStatus(a.provider_id, "running");
    const posts = (await w.project.requests()).filter((r) => r.method === "POST" && r.path.includes("/actions/")).map((r) => r.path);
    expect(posts).toEqual([`/servers/${a.provider_id}/actions/shutdown`, `/servers/${a.provider_id}/actions/poweron`]);
    expect((await w.call("DELETE", `/v1/instances/${b.name}`)).status).toBe(204);
    expect((await w.call("GET", `/v1/instances/${b.provider_id}`)).status).toBe(404);
    expect((await w.call("DELETE", "/v1/instances")).status).toBe(204);
    const left = (await w.project.servers()).filter((s) => !s.deleted).map((s) => s.id);
    expect(left).toEqual([outsider.id]);
  });
});

describe("Hetzner's errors", () => {
  it("a rate-limited project is 503 with Retry-After from RateLimit-Reset", async () => {
    await w.project.configure({ rate_limit: 1, refill_per_second: 0.1 });
    await w.call("GET", "/v1/instances");
    const res = await w.call("GET", "/v1/instances");
    await w.project.configure({ rate_limit: 3600, refill_per_second: 1 });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/rate limiting the project's API token \(rate_limit_exceeded\)/);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(1);
    expect(logs.some((l) => l.includes('"event":"hcloud_call_failed"') && l.includes('"code":"rate_limit_exceeded"'))).toBe(true);
  });

  it("a read-only token is 403 saying the token needs Read & Write; a wrong token is 403 naming HCLOUD_TOKEN", async () => {
    await w.project.configure({ read_only: true });
    const ro = await w.call("POST", "/v1/instances", { body: bootstrap() });
    await w.project.configure({ read_only: false });
    expect(ro.status).toBe(403);
    expect(ro.body.error).toMatch(/token_readonly.*needs the Read & Write permission/);
    const wrong = await w.call("GET", "/v1/instances", { env: { HCLOUD_TOKEN: "not-the-projects-token-0123456789" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toMatch(/refused the shim's API token on list servers \(unauthorized: .*\); set HCLOUD_TOKEN/);
    expect(JSON.stringify(wrong.body)).not.toContain("not-the-projects-token");
  });

  it("Hetzner's own trouble is retryable: locked and maintenance 503, a 500 is 502", async () => {
    await w.project.setFaults({ calls: [{ method: "GET", path: "/servers", code: "maintenance", times: 1 }] });
    expect((await w.call("GET", "/v1/instances")).status).toBe(503);
    await w.project.setFaults({ calls: [{ method: "GET", path: "/servers", code: "internal", status: 500, times: 1 }] });
    expect((await w.call("GET", "/v1/instances")).status).toBe(502);
  });
});
