/**
 * `edgerunner setup --shim aws-ec2|gce|hetzner` as users run it: the real CLI process, in a
 * temporary checkout, against the fake wrangler (test/fake-wrangler) on PATH and a local server
 * playing the coordinator's provider routes. The same cases for each shim, then what is one
 * shim's own (GCE's key file).
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ProviderApi, startProviderApi } from "../../fake-wrangler/provider-api.ts";
import { freshState, makeWorkspace, type Workspace } from "../../fake-wrangler/workspace.ts";

// Each test starts the CLI (and through it the fake wrangler) a dozen times or more: seconds on a busy machine.
vi.setConfig({ testTimeout: 90_000 });

const sha = (v: string) => createHash("sha256").update(v).digest("hex");
const changes = (ws: Workspace) => ws.calls().map((c) => c.argv.join(" "));

const serviceAccountKey = JSON.stringify({
  type: "service_account",
  project_id: "runners-123",
  private_key_id: "0123abcd",
  private_key: "-----BEGIN PRIVATE KEY-----\nMIIEvAIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
  client_email: "edgerunner-shim@runners-123.iam.gserviceaccount.com",
  token_uri: "https://oauth2.googleapis.com/token",
});

/** Per shim: the credentials in the environment, an option with its var, and how a missing or bad value is refused. */
const SHIMS = [
  {
    shim: "aws-ec2",
    label: "EC2 shim",
    credentials: { AWS_ACCESS_KEY_ID: "AKIAEXAMPLEEXAMPLE01", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
    options: ["--aws-region", "eu-central-1"],
    vars: { AWS_REGION: "eu-central-1" },
    needs: "AWS_ACCESS_KEY_ID",
    hint: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    bad: { options: ["--aws-region", "Frankfurt"], says: '--aws-region: a region such as eu-central-1, not "Frankfurt"' },
  },
  {
    shim: "gce",
    label: "GCE shim",
    credentials: { GCE_SERVICE_ACCOUNT_KEY: serviceAccountKey },
    options: ["--gce-zones", "europe-west1-b, europe-west1-c", "--gce-project", "runners-prod-1"],
    vars: { GCE_ZONES: "europe-west1-b,europe-west1-c", GCE_PROJECT: "runners-prod-1" },
    needs: "GCE_SERVICE_ACCOUNT_KEY",
    hint: "set GOOGLE_APPLICATION_CREDENTIALS to the path of the shim's service account key file, or GCE_SERVICE_ACCOUNT_KEY to its JSON",
    bad: {
      options: ["--gce-zones", "europe-west1"],
      says: '--gce-zones: zones such as europe-west1-b,europe-west1-c, not "europe-west1"',
    },
  },
  {
    shim: "hetzner",
    label: "Hetzner shim",
    credentials: { HCLOUD_TOKEN: "jEheVytlAoFl7F8MqUQ7jAo2hOXASztX5c3q1tvmDzJ6FQ2Wg38fsVYxhGD3xD1e" },
    options: [],
    vars: {},
    needs: "HCLOUD_TOKEN",
    hint: "set HCLOUD_TOKEN to an API token (Read & Write) of the runners' Hetzner Cloud project",
    bad: { options: ["--gce-zones", "europe-west1-b"], says: "--gce-zones goes with --shim gce" },
  },
] as const;

let spaces: Workspace[] = [];
let apis: ProviderApi[] = [];
const workspace = () => {
  const ws = makeWorkspace(freshState());
  spaces.push(ws);
  return ws;
};
const providerApi = async () => {
  const api = await startProviderApi();
  apis.push(api);
  return api;
};
afterEach(() => {
  for (const ws of spaces) ws.remove();
  for (const api of apis) api.close();
  spaces = [];
  apis = [];
});

describe.each(SHIMS)("edgerunner setup --shim $shim", (s) => {
  const worker = `edgerunner-shim-${s.shim}`;
  const shimUrl = `https://${worker}.example.workers.dev`;
  const setup = (api: ProviderApi, more: readonly string[] = []) => ["setup", "--public-url", api.url, "--shim", s.shim, ...more];

  it("deploys the shim with its vars and secrets and registers it with the same SHIM_SECRET; a second run changes nothing", async () => {
    const api = await providerApi();
    const ws = workspace();
    const r = await ws.run(setup(api, s.options), s.credentials);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const shim = ws.state().workers[worker]!;
    expect(Object.keys(shim.secrets).sort()).toEqual([...Object.keys(s.credentials), "SHIM_SECRET"].sort());
    for (const [name, value] of Object.entries(s.credentials)) expect(shim.secrets[name]!.sha256).toBe(sha(value));
    expect(shim.deployments.at(-1)!.vars).toMatchObject(s.vars);
    const registered = api.providers.get(s.shim)!;
    expect(registered.url).toBe(shimUrl);
    expect(sha(registered.secret)).toBe(shim.secrets.SHIM_SECRET!.sha256);
    const token = /Admin token[^\n]*\n {2}(\S+)/.exec(r.stdout)![1]!;
    expect(api.seen.every((x) => x.auth === `Bearer ${token}`)).toBe(true);
    for (const value of [...Object.values(s.credentials), registered.secret]) expect(r.stdout).not.toContain(value);
    expect(r.stdout).toContain(`+ set ${s.label} secret ${s.needs} (from $${s.needs})`);
    expect(r.stdout).toContain(`${s.label} at ${shimUrl}, registered as provider "${s.shim}"`);

    // Again, with the token from the profile the first run saved: nothing to put, nothing to register.
    ws.clearCalls();
    api.seen.length = 0;
    const again = await ws.run(setup(api));
    expect(again.code).toBe(0);
    expect(changes(ws).filter((a) => a.startsWith("secret bulk"))).toEqual([]);
    expect(api.seen.map((x) => x.method)).toEqual(["GET"]);
    expect(again.stdout).toContain(`✓ provider "${s.shim}" already registered`);
    expect(ws.state().workers[worker]!.deployments.at(-1)!.vars).toMatchObject(s.vars);
  });

  it("a provider deleted since: a new SHIM_SECRET for the shim and the provider alike", async () => {
    const api = await providerApi();
    const ws = workspace();
    expect((await ws.run(setup(api), s.credentials)).code).toBe(0);
    const first = ws.state().workers[worker]!.secrets.SHIM_SECRET!.sha256;
    api.providers.clear();
    const r = await ws.run(setup(api));
    expect(r.code).toBe(0);
    const now = ws.state().workers[worker]!.secrets.SHIM_SECRET!.sha256;
    expect(now).not.toBe(first);
    expect(sha(api.providers.get(s.shim)!.secret)).toBe(now);
  });

  it("a provider in use at another URL: the shim gets a new SHIM_SECRET, sent with the new URL in one update", async () => {
    const api = await providerApi();
    const ws = workspace();
    expect((await ws.run(setup(api), s.credentials)).code).toBe(0);
    const first = ws.state().workers[worker]!.secrets.SHIM_SECRET!.sha256;
    // The account's workers.dev subdomain was renamed: the shim now deploys to another URL.
    ws.setState((st) => {
      st.subdomain = "renamed";
    });
    api.providers.get(s.shim)!.inUse = true;
    api.seen.length = 0;
    const r = await ws.run(setup(api));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const moved = `https://${worker}.renamed.workers.dev`;
    const now = ws.state().workers[worker]!.secrets.SHIM_SECRET!.sha256;
    expect(now).not.toBe(first);
    const put = api.seen.filter((x) => x.method === "PUT");
    expect(put).toHaveLength(1);
    expect(Object.keys(put[0]!.body as object).sort()).toEqual(["secret", "url"]);
    expect(api.providers.get(s.shim)!.url).toBe(moved);
    expect(sha(api.providers.get(s.shim)!.secret)).toBe(now);
    expect(r.stdout).toContain(`! provider "${s.shim}" is at ${shimUrl}: it moves to ${moved} with a new SHIM_SECRET`);
  });

  it("without the cloud's credentials and no terminal to ask in: says which variables to set, exit 2", async () => {
    const api = await providerApi();
    const ws = workspace();
    const r = await ws.run(setup(api), { CI: "true" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`edgerunner: the ${s.label} needs ${s.needs}\n${s.hint}`);
    expect(ws.state().workers[worker]).toBeUndefined();
    expect(api.providers.size).toBe(0);
  });

  it("a bad option value: refused before anything runs, exit 2", async () => {
    const ws = workspace();
    const r = await ws.run(["setup", "--shim", s.shim, ...s.bad.options], s.credentials);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`edgerunner: ${s.bad.says}`);
    expect(ws.calls()).toEqual([]);
  });
});

describe("edgerunner setup --shim gce, the key file", () => {
  it("reads the file GOOGLE_APPLICATION_CREDENTIALS names; the zones default to the committed ones", async () => {
    const api = await providerApi();
    const ws = workspace();
    const keyPath = join(ws.dir, "key.json");
    writeFileSync(keyPath, serviceAccountKey);
    const r = await ws.run(["setup", "--public-url", api.url, "--shim", "gce"], { GOOGLE_APPLICATION_CREDENTIALS: keyPath });
    expect(r.code).toBe(0);
    const shim = ws.state().workers["edgerunner-shim-gce"]!;
    expect(shim.secrets.GCE_SERVICE_ACCOUNT_KEY!.sha256).toBe(sha(serviceAccountKey));
    expect(shim.deployments.at(-1)!.vars.GCE_ZONES).toBe("us-central1-a,us-central1-b,us-central1-c");
    expect(shim.deployments.at(-1)!.vars).not.toHaveProperty("GCE_PROJECT");
    expect(r.stdout).toContain(`+ set GCE shim secret GCE_SERVICE_ACCOUNT_KEY (from the file GOOGLE_APPLICATION_CREDENTIALS=${keyPath})`);
    expect(readFileSync(join(ws.dir, "shims/gce/wrangler.deploy.toml"), "utf8")).toContain(
      'GCE_ZONES = "us-central1-a,us-central1-b,us-central1-c"',
    );
  });

  it("a person's login instead of a service account key: refused saying so, the shim gets no secret", async () => {
    const api = await providerApi();
    const ws = workspace();
    const keyPath = join(ws.dir, "application_default_credentials.json");
    const login = JSON.stringify({
      type: "authorized_user",
      client_id: "x",
      client_secret: "d-FL95Q19q7MQmFpd7hHD0Ty",
      refresh_token: "1//0e",
    });
    writeFileSync(keyPath, login);
    const r = await ws.run(["setup", "--public-url", api.url, "--shim", "gce"], { GOOGLE_APPLICATION_CREDENTIALS: keyPath });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `edgerunner: GCE_SERVICE_ACCOUNT_KEY from the file GOOGLE_APPLICATION_CREDENTIALS=${keyPath} is not a service account key (its type is authorized_user)`,
    );
    expect(r.stderr + r.stdout).not.toContain("d-FL95Q19q7MQmFpd7hHD0Ty");
    expect(ws.state().workers["edgerunner-shim-gce"]).toBeUndefined();
  });
});
