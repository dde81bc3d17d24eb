import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { fromBase64 } from "../../src/crypto/base64url";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { mintInstanceToken } from "../../src/scaleset/runner/instance-token";
import { type ApiResponse, api, dumpDb, expectRejectedWithoutWrites, inScaleSetObject, transitionsOf } from "./helpers";
import { queueJobs, reconcile, type ScaleSetWorld, scaleSetWorld } from "./scaleset-world";

// The routes a booting runner machine uses (GARM's metadata and callback routes), driven with the
// instance token the scale set object really minted and handed to the (fake) shim.

const SHIM_SECRET = "runner-bootstrap-shim-secret";
const ORIGIN = "https://edgerunner.test";

const setup = (over: Record<string, unknown> = {}) => scaleSetWorld(SHIM_SECRET, { runner_prefix: "rb", ...over });
const queueJob = (scaleSetId: string) => queueJobs(scaleSetId, 1);

const instanceRow = async (name: string) =>
  (await env.DB.prepare("SELECT * FROM instances WHERE name = ?").bind(name).first<Record<string, any>>())!;

interface Runner {
  name: string;
  token: string;
  bootstrap: Record<string, any>;
}

/** Queues a job and lets the object create its runner; returns the machine's name and instance token. */
async function createRunner(s: ScaleSetWorld): Promise<Runner> {
  const before = new Set((await s.shim.machines()).map((m) => m.name));
  await queueJob(s.scaleSetId);
  await reconcile(s.scaleSetId);
  const machine = (await s.shim.machines()).find((m) => !before.has(m.name));
  if (!machine) throw new Error("the object created no machine");
  const bootstrap = machine.bootstrap as Record<string, any>;
  return { name: machine.name, token: bootstrap["instance-token"], bootstrap };
}

/** A call as a runner machine makes it: bearer token, and exactly the headers given (no default Content-Type). */
async function runnerCall(
  method: string,
  path: string,
  token: string | null,
  opts: { body?: string; contentType?: string; authorization?: string } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  else if (token !== null) headers.authorization = `Bearer ${token}`;
  if (opts.contentType) headers["content-type"] = opts.contentType;
  const res = await exports.default.fetch(new Request(`${ORIGIN}/api/v1${path}`, { method, headers, body: opts.body }));
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // raw text (scripts, tokens, files)
  }
  return { status: res.status, body: body as any, text, headers: res.headers };
}

const report = (token: string, status: string, extra: Record<string, unknown> = {}, path = "/callbacks/status") =>
  runnerCall("POST", path, token, { body: JSON.stringify({ status, message: `now ${status}`, ...extra }) });

const alarmOf = (scaleSetId: string) => inScaleSetObject(scaleSetId, (_o, state) => state.storage.getAlarm());
const clearAlarm = (scaleSetId: string) => inScaleSetObject(scaleSetId, (_o, state) => state.storage.deleteAlarm());

/** The JIT files GitHub gave the runner, decoded from what the object sealed. */
async function jitFiles(name: string): Promise<Record<string, string>> {
  const row = await instanceRow(name);
  const encoded = await open(await keyringFor(env), row.jit_config_enc, secretContext.jitConfig(row.id));
  return JSON.parse(new TextDecoder().decode(fromBase64(encoded)));
}

/** Every instance-authenticated route, as a machine would call it. */
const EVERY_ROUTE: [string, string, string?][] = [
  ["GET", "/metadata/runner-metadata"],
  ["GET", "/metadata/install-script"],
  ["GET", "/metadata/credentials/runner"],
  ["GET", "/metadata/credentials/credentials"],
  ["GET", "/metadata/credentials/credentials_rsaparams"],
  ["GET", "/metadata/runner-registration-token"],
  ["GET", "/metadata/system/service-name"],
  ["GET", "/metadata/systemd/unit-file?runAsUser=runner"],
  ["GET", "/metadata/system/cert-bundle"],
  ["POST", "/callbacks/status", JSON.stringify({ status: "installing", message: "x" })],
  ["POST", "/callbacks/system-info", JSON.stringify({ os_name: "Ubuntu", os_version: "24.04" })],
];

/**
 * Every route refuses `token` (or the raw Authorization header) with 401 and writes nothing;
 * once the runner `reportedIn`, its credentials files answer 409 instead (served only while it
 * bootstraps: the machine learns it asks too late, not that its token is bad).
 */
async function expectRefusedEverywhere(token: string | null, authorization?: string, reportedIn = false) {
  for (const [method, path, body] of EVERY_ROUTE) {
    for (const p of [path, path.replace(/(\?|$)/, "/$1")]) {
      if (reportedIn && p.startsWith("/metadata/credentials/")) {
        const res = await expectRejectedWithoutWrites(409, () => runnerCall(method, p, token, { body, authorization }));
        expect(res.body, `${method} ${p}`).toMatchObject({ code: "conflict", details: { runner_status: "idle" } });
        continue;
      }
      const res = await expectRejectedWithoutWrites(401, () => runnerCall(method, p, token, { body, authorization }));
      expect(res.body, `${method} ${p}`).toMatchObject({ error: "unauthorized", code: "unauthorized", details: null });
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  }
}

describe("runner bootstrap: metadata routes (JIT)", () => {
  it("serves every route with and without a trailing slash", async () => {
    // The JIT config the object sealed before the create (on-boot mints: jit-on-boot.test.ts).
    const s = await setup({ jit_config_timing: "before_create" });
    const r = await createRunner(s);
    const row = await instanceRow(r.name);
    const files = await jitFiles(r.name);

    for (const slash of ["", "/"]) {
      const meta = await runnerCall("GET", `/metadata/runner-metadata${slash}`, r.token);
      expect(meta.status).toBe(200);
      expect(meta.body).toMatchObject({
        name: r.name,
        scale_set_id: s.scaleSetId,
        repo_url: "https://github.example.test/octo/app",
        labels: ["linux", "self-hosted"],
        jit_config_enabled: true,
        service_name: "actions.runner.octo.app",
        "metadata-url": "https://edgerunner.test/api/v1/metadata",
        "callback-url": "https://edgerunner.test/api/v1/callbacks",
      });

      const script = await runnerCall("GET", `/metadata/install-script${slash}`, r.token);
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(script.text).toMatch(/^#!\/usr\/bin\/env bash\n/);
      expect(script.text).toContain(`TOKEN='${r.token}'`);
      expect(script.text).toContain("METADATA_URL='https://edgerunner.test/api/v1/metadata'");
      expect(script.text).toContain("JIT_CONFIG='true'");
      // The linux/x64 runner from GitHub's download list (GARM's amd64 is GitHub's x64).
      const tool = r.bootstrap.tools.find((t: any) => t.os === "linux" && t.architecture === "x64");
      expect(script.text).toContain(`DOWNLOAD_URL='${tool.download_url}'`);
      expect(script.text).toContain(`DOWNLOAD_SHA256='${tool.sha256_checksum}'`);

      for (const [route, file] of [
        ["runner", ".runner"],
        ["credentials", ".credentials"],
        ["credentials_rsaparams", ".credentials_rsaparams"],
      ] as const) {
        const res = await exports.default.fetch(
          new Request(`${ORIGIN}/api/v1/metadata/credentials/${route}${slash}`, { headers: { authorization: `Bearer ${r.token}` } }),
        );
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/octet-stream");
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(fromBase64(files[file]!));
      }
      // The decoded .runner is the runner GitHub registered for this instance.
      expect(JSON.parse(new TextDecoder().decode(fromBase64(files[".runner"]!)))).toMatchObject({
        agentId: row.agent_id,
        agentName: r.name,
      });

      expect((await runnerCall("GET", `/metadata/credentials/nope${slash}`, r.token)).status).toBe(404);
      const reg = await runnerCall("GET", `/metadata/runner-registration-token${slash}`, r.token);
      expect(reg.status).toBe(404);
      expect(reg.body.error).toMatch(/JIT/);

      const service = await runnerCall("GET", `/metadata/system/service-name${slash}`, r.token);
      expect([service.status, service.text]).toEqual([200, "actions.runner.octo.app"]);
      const unit = await runnerCall("GET", `/metadata/systemd/unit-file${slash}?runAsUser=ci`, r.token);
      expect(unit.status).toBe(200);
      expect(unit.text).toContain("User=ci\n");
      expect(unit.text).toContain("Description=GitHub Actions Runner (actions.runner.octo.app)");
      const certs = await runnerCall("GET", `/metadata/system/cert-bundle${slash}`, r.token);
      expect([certs.status, certs.body]).toEqual([200, { root_certificates: {} }]);
    }
    // Reading metadata changes nothing about the instance.
    expect(await instanceRow(r.name)).toEqual(row);
  });

  it("refuses a hostile runAsUser without writing", async () => {
    const s = await setup();
    const r = await createRunner(s);
    for (const path of ["/metadata/systemd/unit-file?runAsUser=", "/metadata/install-script?runAsUser="]) {
      const res = await expectRejectedWithoutWrites(400, () => runnerCall("GET", path + encodeURIComponent("x; rm -rf /"), r.token));
      expect(res.body.error).toMatch(/runAsUser/);
    }
  });

  it("hands out the endpoint's CA bundle", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const row = await instanceRow(r.name);
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const ep = await env.DB.prepare(
      "SELECT g.name FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_endpoints g ON g.name = e.endpoint_name WHERE s.id = ?",
    )
      .bind(row.scale_set_id)
      .first<{ name: string }>();
    await env.DB.prepare("UPDATE github_endpoints SET ca_cert_bundle = ? WHERE name = ?").bind(pem, ep!.name).run();
    const certs = await runnerCall("GET", "/metadata/system/cert-bundle", r.token);
    expect(certs.body).toEqual({ root_certificates: { "endpoint-ca.pem": btoa(pem) } });
  });
});

describe("runner bootstrap: Windows", () => {
  it("serves the PowerShell script for a Windows scale set, with the Windows runner", async () => {
    const s = await setup({ os_type: "windows" });
    const r = await createRunner(s);
    const script = await runnerCall("GET", "/metadata/install-script/", r.token);
    expect(script.status).toBe(200);
    expect(script.text).toMatch(/^# Edgerunner runner bootstrap for /);
    expect(script.text).toContain(`$Token = '${r.token}'`);
    const tool = r.bootstrap.tools.find((t: any) => t.os === "win" && t.architecture === "x64");
    expect(script.text).toContain(`$DownloadUrl = '${tool.download_url}'`);
    expect(script.text).toContain("$JitConfig = $true");
  });
});

describe("runner bootstrap: status callbacks", () => {
  it("reads bodies as JSON with no Content-Type and with the form type, and records each report", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const body = JSON.stringify({ status: "installing", message: "downloading runner", agent_id: null });
    const none = await runnerCall("POST", "/callbacks/status", r.token, { body });
    expect([none.status, none.text]).toEqual([200, ""]);
    const form = await runnerCall("POST", "/callbacks/status/", r.token, {
      body: JSON.stringify({ status: "installing", message: "unpacking runner" }),
      contentType: "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(200);
    const row = await instanceRow(r.name);
    expect(row).toMatchObject({ runner_status: "installing", status_message: "unpacking runner", status: "running" });
    const history = (await transitionsOf(row.id))
      .filter((t) => t.field === "runner_status")
      .map(({ field, from_value, to_value, reason }) => ({ field, from_value, to_value, reason }));
    expect(history).toEqual([
      { field: "runner_status", from_value: "pending", to_value: "installing", reason: "downloading runner" },
      { field: "runner_status", from_value: "installing", to_value: "installing", reason: "unpacking runner" },
    ]);
  });

  it("takes a status posted to the callback URL itself, as older GARM templates do", async () => {
    const s = await setup();
    const r = await createRunner(s);
    expect(r.bootstrap["callback-url"]).toBe(`${ORIGIN}/api/v1/callbacks`);
    for (const path of ["/callbacks", "/callbacks/"]) {
      const res = await report(r.token, "installing", {}, path);
      expect([res.status, res.text]).toEqual([200, ""]);
    }
    expect(await instanceRow(r.name)).toMatchObject({ runner_status: "installing", status_message: "now installing" });
    // The same rules as /status: a token is needed, and a forbidden change writes nothing.
    expect((await runnerCall("POST", "/callbacks", null, { body: JSON.stringify({ status: "idle" }) })).status).toBe(401);
    await expectRejectedWithoutWrites(400, () => report(r.token, "pending", {}, "/callbacks"));
  });

  it("records system info, without letting the machine change its JIT runner id", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const agentId = (await instanceRow(r.name)).agent_id;
    for (const path of ["/callbacks/system-info", "/callbacks/system-info/"]) {
      const res = await runnerCall("POST", path, r.token, {
        body: JSON.stringify({ os_name: "Ubuntu", os_version: "24.04", agent_id: 999_999 }),
      });
      expect(res.status).toBe(200);
    }
    expect(await instanceRow(r.name)).toMatchObject({ os_name: "Ubuntu", os_version: "24.04", agent_id: agentId });
    await expectRejectedWithoutWrites(400, () => runnerCall("POST", "/callbacks/system-info", r.token, { body: "{not json" }));
    await expectRejectedWithoutWrites(400, () =>
      runnerCall("POST", "/callbacks/system-info", r.token, { body: JSON.stringify({ os_name: 5 }) }),
    );
  });

  it("refuses forbidden runner-status changes and bad bodies with 400, writing nothing", async () => {
    const s = await setup();
    const r = await createRunner(s);
    // From pending: a runner cannot be busy, online or pending again before it is installed.
    for (const status of ["active", "online", "pending"]) {
      const res = await expectRejectedWithoutWrites(400, () => report(r.token, status));
      expect(res.body).toMatchObject({
        error: `runner status cannot go from pending to ${status}`,
        code: "invalid_transition",
        details: { from: "pending", to: status },
      });
    }
    expect((await report(r.token, "installing")).status).toBe(200);
    const back = await expectRejectedWithoutWrites(400, () => report(r.token, "pending"));
    expect(back.body.details).toEqual({ from: "installing", to: "pending" });
    await expectRejectedWithoutWrites(400, () => report(r.token, "bogus"));
    await expectRejectedWithoutWrites(400, () => runnerCall("POST", "/callbacks/status", r.token, { body: "status=idle" }));
    await expectRejectedWithoutWrites(400, () =>
      runnerCall("POST", "/callbacks/status", r.token, { body: JSON.stringify({ message: "no status" }) }),
    );
    await expectRejectedWithoutWrites(400, () =>
      runnerCall("POST", "/callbacks/status", r.token, { body: JSON.stringify({ status: "idle", agent_id: "x" }) }),
    );
  });

  it("idle makes the runner available at once (nudges the object) and spends the token", async () => {
    const s = await setup();
    const r = await createRunner(s);
    await clearAlarm(s.scaleSetId);
    expect((await report(r.token, "installing")).status).toBe(200);
    // Progress reports do not wake the object.
    expect(await alarmOf(s.scaleSetId)).toBeNull();
    expect((await report(r.token, "idle", { agent_id: 123456 })).status).toBe(200);
    expect(await alarmOf(s.scaleSetId)).not.toBeNull();
    const row = await instanceRow(r.name);
    expect(row).toMatchObject({ runner_status: "idle", status: "running", status_message: "now idle" });
    // The JIT runner keeps the id GitHub gave it, whatever the machine claims.
    expect(row.agent_id).not.toBe(123456);
    // The object counts it as idle (available) right away.
    const status = await reconcile(s.scaleSetId);
    expect(status.last_reconcile.summary).toMatchObject({ idle: 1, available: 1 });

    // Replay after idle: every route refuses the spent token.
    await expectRefusedEverywhere(r.token, undefined, true);
  });

  it("failed sends the instance to deletion through the object", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const agentId = (await instanceRow(r.name)).agent_id;
    await clearAlarm(s.scaleSetId);
    expect((await report(r.token, "installing")).status).toBe(200);
    expect((await report(r.token, "failed", { message: "runner checksum does not match" })).status).toBe(200);
    expect(await instanceRow(r.name)).toMatchObject({
      status: "pending_delete",
      runner_status: "failed",
      status_message: "runner checksum does not match",
    });
    expect(await alarmOf(s.scaleSetId)).not.toBeNull();
    await expectRefusedEverywhere(r.token);

    await reconcile(s.scaleSetId);
    expect((await instanceRow(r.name)).status).toBe("deleted");
    expect((await s.shim.machines()).map((m) => m.name)).not.toContain(r.name);
    const machine = (await s.shim.requests()).find((q) => q.operation === "create" && (q.body as any)?.name === r.name);
    expect(machine).toBeDefined();
    expect(
      (await s.shim.requests()).filter(
        (q) => (q.operation === "delete" && q.status === 200) || (q.operation === "delete" && q.status === 204),
      ),
    ).toHaveLength(1);
    expect((await s.github.state()).runners.map((g) => g.id)).not.toContain(agentId);
  });
});

describe("runner bootstrap: token misuse", () => {
  const mint = (
    claims: { instance: string; scaleSetId: string; createAttempt?: number; timeout?: number },
    nowMs = Date.now(),
    secret = env.INSTANCE_TOKEN_SECRET,
  ) =>
    mintInstanceToken(
      secret,
      {
        instance: claims.instance,
        scaleSetId: claims.scaleSetId,
        createAttempt: claims.createAttempt ?? 1,
        bootstrapTimeoutMinutes: claims.timeout ?? 20,
      },
      nowMs,
    );

  it("refuses no token, malformed tokens and tokens signed with another secret", async () => {
    const s = await setup();
    const r = await createRunner(s);
    await expectRefusedEverywhere(null);
    await expectRefusedEverywhere(null, "Bearer");
    await expectRefusedEverywhere(null, `Basic ${btoa("runner:secret")}`);
    await expectRefusedEverywhere("not-a-token");
    await expectRefusedEverywhere(r.token.slice(0, -2) + (r.token.endsWith("AA") ? "BB" : "AA"));
    await expectRefusedEverywhere(await mint({ instance: r.name, scaleSetId: s.scaleSetId }, Date.now(), "some-other-secret"));
    // The unsigned `none` algorithm.
    const [, payload] = r.token.split(".");
    await expectRefusedEverywhere(`${btoa(JSON.stringify({ alg: "none", typ: "JWT" })).replace(/=+$/, "")}.${payload}.`);
    // The right token still works: nothing above spent it.
    expect((await runnerCall("GET", "/metadata/system/service-name", r.token)).status).toBe(200);
  });

  it("refuses an expired token (bootstrap timeout + 5 minutes)", async () => {
    const s = await setup({ bootstrap_timeout: 10 });
    const r = await createRunner(s);
    const issuedLongAgo = Date.now() - (10 * 60 + 5 * 60 + 5) * 1000;
    await expectRefusedEverywhere(await mint({ instance: r.name, scaleSetId: s.scaleSetId, timeout: 10 }, issuedLongAgo));
    // Still inside its lifetime, the same claims work.
    const recent = Date.now() - (10 * 60 + 4 * 60) * 1000;
    expect(
      (
        await runnerCall(
          "GET",
          "/metadata/system/service-name",
          await mint({ instance: r.name, scaleSetId: s.scaleSetId, timeout: 10 }, recent),
        )
      ).status,
    ).toBe(200);
  });

  it("refuses a token for another create attempt, another scale set or an unknown instance", async () => {
    const s = await setup();
    const other = await setup();
    const r = await createRunner(s);
    const o = await createRunner(other);
    await expectRefusedEverywhere(await mint({ instance: r.name, scaleSetId: s.scaleSetId, createAttempt: 2 }));
    await expectRefusedEverywhere(await mint({ instance: r.name, scaleSetId: s.scaleSetId, createAttempt: 0 }));
    await expectRefusedEverywhere(await mint({ instance: r.name, scaleSetId: other.scaleSetId }));
    await expectRefusedEverywhere(await mint({ instance: "rb-doesnotexist", scaleSetId: s.scaleSetId }));

    // One instance's token only ever touches that instance.
    const before = await instanceRow(o.name);
    expect((await report(r.token, "installing")).status).toBe(200);
    expect(await instanceRow(o.name)).toEqual(before);
    const mine = await runnerCall("GET", "/metadata/runner-metadata", r.token);
    expect(mine.body.name).toBe(r.name);
  });

  it("refuses the token of an instance being deleted or deleted", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const del = await api.delete(`/api/v1/instances/${r.name}`);
    expect(del.status, del.text).toBe(202);
    expect((await instanceRow(r.name)).status).toBe("pending_delete");
    await expectRefusedEverywhere(r.token);
    await reconcile(s.scaleSetId);
    expect((await instanceRow(r.name)).status).toBe("deleted");
    await expectRefusedEverywhere(r.token);
  });

  it("refuses the token of an instance that has not been created yet (pending_create) or failed to create", async () => {
    const s = await setup();
    const r = await createRunner(s);
    const row = await instanceRow(r.name);
    for (const status of ["pending_create", "error", "stopped"]) {
      await env.DB.prepare("UPDATE instances SET status = ? WHERE id = ?").bind(status, row.id).run();
      await expectRefusedEverywhere(r.token);
    }
    await env.DB.prepare("UPDATE instances SET status = 'creating' WHERE id = ?").bind(row.id).run();
    expect((await runnerCall("GET", "/metadata/system/service-name", r.token)).status).toBe(200);
  });
});

describe("runner bootstrap: registration token (JIT off)", () => {
  it("the scale set API takes jit_config_enabled (default true) and validates it", async () => {
    const s = await setup();
    expect((await api.get(`/api/v1/scalesets/${s.scaleSetId}`)).body.jit_config_enabled).toBe(true);
    const off = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_enabled: false });
    expect([off.status, off.body.jit_config_enabled]).toEqual([200, false]);
    expect((await api.get(`/api/v1/scalesets/${s.scaleSetId}`)).body.jit_config_enabled).toBe(false);
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_enabled: "no" }));
    const created = await setup({ jit_config_enabled: false });
    expect((await api.get(`/api/v1/scalesets/${created.scaleSetId}`)).body.jit_config_enabled).toBe(false);
  });

  it("creates the runner without a JIT config and mints one registration token per create attempt, served again to a retry", async () => {
    const s = await setup({ jit_config_enabled: false, runner_group: "" });
    const r = await createRunner(s);
    expect(r.bootstrap).toMatchObject({
      jit_config_enabled: false,
      labels: ["linux", "self-hosted"],
      repo_url: "https://github.example.test/octo/app",
    });
    const row = await instanceRow(r.name);
    expect(row).toMatchObject({ jit_config_enc: null, agent_id: null, registration_token_served_at: null, status: "running" });
    // No runner was registered at GitHub by the coordinator: the machine does it.
    expect((await s.github.state()).runners).toEqual([]);

    const meta = await runnerCall("GET", "/metadata/runner-metadata", r.token);
    expect(meta.body.jit_config_enabled).toBe(false);
    for (const file of ["runner", "credentials", "credentials_rsaparams"]) {
      await expectRejectedWithoutWrites(404, () => runnerCall("GET", `/metadata/credentials/${file}`, r.token));
    }
    const script = await runnerCall("GET", "/metadata/install-script", r.token);
    expect(script.text).toContain("JIT_CONFIG='false'");
    expect(script.text).toContain("REPO_URL='https://github.example.test/octo/app'");
    expect(script.text).toContain("RUNNER_LABELS='linux,self-hosted'");

    const first = await runnerCall("GET", "/metadata/runner-registration-token/", r.token);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^text\/plain/);
    const issued = (await s.github.state()).issued_registration_tokens;
    expect(issued).toHaveLength(1);
    expect(first.text).toBe(issued[0]);
    expect((await instanceRow(r.name)).registration_token_served_at).toEqual(expect.any(Number));

    // The machine's answer may have been lost (a cut connection, a restart): it asks again and gets
    // the same token, sealed at rest, with nothing changed and nothing asked of GitHub.
    const before = await dumpDb();
    for (const path of ["/metadata/runner-registration-token", "/metadata/runner-registration-token/"]) {
      const again = await runnerCall("GET", path, r.token);
      expect([again.status, again.text]).toEqual([200, first.text]);
    }
    expect(await dumpDb()).toEqual(before);
    expect((await s.github.state()).issued_registration_tokens).toHaveLength(1);
    const sealed = (await instanceRow(r.name)).registration_token_enc;
    expect(sealed).toMatch(/^er1\./);
    expect(sealed).not.toContain(first.text);

    // The machine reports the id config.sh got: kept as its claim, not as GitHub's id.
    expect((await report(r.token, "idle", { agent_id: 4242 })).status).toBe(200);
    expect(await instanceRow(r.name)).toMatchObject({ agent_id: null, reported_agent_id: 4242 });
  });

  it("keeps each instance in the mode it was created in when the setting changes", async () => {
    const s = await setup();
    const jit = await createRunner(s);
    expect((await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_enabled: false, max_runners: 10 })).status).toBe(200);
    const plain = await createRunner(s);
    expect(plain.bootstrap.jit_config_enabled).toBe(false);
    expect((await runnerCall("GET", "/metadata/install-script", jit.token)).text).toContain("JIT_CONFIG='true'");
    expect((await runnerCall("GET", "/metadata/credentials/runner", jit.token)).status).toBe(200);
    expect((await runnerCall("GET", "/metadata/runner-registration-token", jit.token)).status).toBe(404);
    expect((await runnerCall("GET", "/metadata/install-script", plain.token)).text).toContain("JIT_CONFIG='false'");
    expect((await runnerCall("GET", "/metadata/runner-registration-token", plain.token)).status).toBe(200);
  });

  it("mints one token for racing requests: the others wait for it, then get the same one", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    const answers = await Promise.all(Array.from({ length: 4 }, () => runnerCall("GET", "/metadata/runner-registration-token", r.token)));
    const issued = (await s.github.state()).issued_registration_tokens;
    expect(issued).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const a of answers) {
      if (a.status === 200) expect(a.text).toBe(issued[0]);
      else
        expect([a.status, a.headers.get("retry-after"), a.body.details]).toEqual([503, "1", { reason: "minting", retry_after_seconds: 1 }]);
    }
    const retried = await runnerCall("GET", "/metadata/runner-registration-token", r.token);
    expect([retried.status, retried.text]).toEqual([200, issued[0]]);
  });

  it("no longer serves a token once its runner reports: the instance token is closed", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    expect((await runnerCall("GET", "/metadata/runner-registration-token", r.token)).status).toBe(200);
    expect((await report(r.token, "idle")).status).toBe(200);
    await expectRejectedWithoutWrites(401, () => runnerCall("GET", "/metadata/runner-registration-token", r.token));
    expect((await s.github.state()).issued_registration_tokens).toHaveLength(1);
  });

  it("gives the claim back when GitHub refuses, so the machine can try again", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    await s.github.fault({ kind: "busy_runner", path: "registration-token" });
    const before = await dumpDb();
    const failed = await runnerCall("GET", "/metadata/runner-registration-token", r.token);
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatch(/registration token/);
    expect(await dumpDb()).toEqual(before);
    const ok = await runnerCall("GET", "/metadata/runner-registration-token", r.token);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe((await s.github.state()).issued_registration_tokens[0]);
  });
});

/** GitHub's runners in the world, by name. */
const githubRunners = async (s: ScaleSetWorld) => new Map((await s.github.state()).runners.map((r) => [r.name, r.id]));
/** Runners the machines registered themselves with their registration tokens (what config.sh does). */
async function registerAtGithub(s: ScaleSetWorld, ...names: string[]): Promise<number[]> {
  await s.github.seed({ runners: names.map((name) => ({ scope: "repos/octo/app", name })) });
  const ids = await githubRunners(s);
  return names.map((n) => ids.get(n)!);
}
const runnerDeletes = async (s: ScaleSetWorld) =>
  (await s.github.requests())
    .filter((q) => q.method === "DELETE" && /\/actions\/runners\/\d+$/.test(q.path))
    .map((q) => Number(q.path.split("/").pop()));

/** Runs `fn` and returns the JSON log events it wrote with this name. */
async function eventsDuring(event: string, fn: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const spy = vi.spyOn(console, "log");
  try {
    await fn();
    return spy.mock.calls
      .map((args) => {
        try {
          return JSON.parse(String(args[0]));
        } catch {
          return null;
        }
      })
      .filter((e) => e?.event === event);
  } finally {
    spy.mockRestore();
  }
}

describe("runner bootstrap: a runner id a machine reports is a claim", () => {
  it("without JIT, a machine naming another runner's id cannot get it removed; its own runner (by name) is", async () => {
    const s = await setup({ jit_config_enabled: false });
    const victim = await createRunner(s);
    const culprit = await createRunner(s);
    const [victimId, culpritId] = await registerAtGithub(s, victim.name, culprit.name);
    await s.github.clearRequests();

    let shown: Record<string, unknown> = {};
    const rejected = await eventsDuring("runner_id_claim_rejected", async () => {
      const info = await runnerCall("POST", "/callbacks/system-info", culprit.token, {
        body: JSON.stringify({ os_name: "Ubuntu", agent_id: victimId }),
      });
      expect(info.status).toBe(200);
      shown = (await api.get(`/api/v1/instances/${culprit.name}`)).body;
      expect((await report(culprit.token, "failed", { message: "it broke" })).status).toBe(200);
      await reconcile(s.scaleSetId);
    });

    expect(await runnerDeletes(s)).toEqual([culpritId]);
    const left = await githubRunners(s);
    expect(left.get(victim.name)).toBe(victimId);
    expect(left.has(culprit.name)).toBe(false);
    expect(await instanceRow(victim.name)).toMatchObject({ status: "running", agent_id: null });
    // GitHub's id for the culprit's runner, found by its name, is what the row keeps.
    expect(await instanceRow(culprit.name)).toMatchObject({ status: "deleted", agent_id: culpritId, reported_agent_id: victimId });
    expect(rejected).toEqual([
      expect.objectContaining({ scale_set: s.scaleSetId, instance: culprit.name, runner_id: victimId, runner_name: victim.name }),
    ]);
    // While it bootstrapped, the id was shown as what it is: the machine's claim, not GitHub's id.
    expect(shown).toMatchObject({ agent_id: null, reported_agent_id: victimId });
  });

  it("without JIT, a claim made with the idle report does not survive an admin delete either", async () => {
    const s = await setup({ jit_config_enabled: false });
    const victim = await createRunner(s);
    const culprit = await createRunner(s);
    const [victimId] = await registerAtGithub(s, victim.name);
    expect((await report(culprit.token, "idle", { agent_id: victimId })).status).toBe(200);
    const shown = (await api.get(`/api/v1/instances/${culprit.name}`)).body;
    await s.github.clearRequests();

    expect((await api.delete(`/api/v1/instances/${culprit.name}`)).status).toBe(202);
    await reconcile(s.scaleSetId);
    expect(await runnerDeletes(s)).toEqual([]);
    expect((await githubRunners(s)).get(victim.name)).toBe(victimId);
    expect(await instanceRow(culprit.name)).toMatchObject({ status: "deleted", agent_id: null });
    expect(shown).toMatchObject({ agent_id: null, reported_agent_id: victimId });
  });

  it("without JIT, a machine's own id is confirmed at GitHub before it is removed", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    const [ownId] = await registerAtGithub(s, r.name);
    expect((await report(r.token, "idle", { agent_id: ownId })).status).toBe(200);
    await s.github.clearRequests();

    expect((await api.delete(`/api/v1/instances/${r.name}`)).status).toBe(202);
    await reconcile(s.scaleSetId);
    const calls = (await s.github.requests())
      .filter((q) => q.path.includes("/actions/runners/"))
      .map((q) => `${q.method} ${q.path.split("/").pop()}`);
    expect(calls).toEqual([`GET ${ownId}`, `DELETE ${ownId}`]);
    expect(await instanceRow(r.name)).toMatchObject({ status: "deleted", agent_id: ownId });
  });

  it("without JIT, a machine that fetched a registration token and reported no id has its runner found by name", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    expect((await runnerCall("GET", "/metadata/runner-registration-token", r.token)).status).toBe(200);
    const [ownId] = await registerAtGithub(s, r.name);
    expect((await report(r.token, "failed", { message: "service did not start" })).status).toBe(200);
    await reconcile(s.scaleSetId);
    expect(await runnerDeletes(s)).toEqual([ownId]);
    expect(await instanceRow(r.name)).toMatchObject({ status: "deleted", agent_id: ownId });
  });

  it("with JIT, a reported id is ignored (and logged): removal uses the id GitHub gave", async () => {
    const s = await setup({ jit_config_timing: "before_create" });
    const victim = await createRunner(s);
    const culprit = await createRunner(s);
    const victimId = (await instanceRow(victim.name)).agent_id;
    const jitId = (await instanceRow(culprit.name)).agent_id;
    expect([victimId, jitId]).toEqual([expect.any(Number), expect.any(Number)]);
    await s.github.clearRequests();

    const rejected = await eventsDuring("runner_id_claim_rejected", async () => {
      await runnerCall("POST", "/callbacks/system-info", culprit.token, { body: JSON.stringify({ agent_id: victimId }) });
      expect((await report(culprit.token, "failed", { agent_id: victimId })).status).toBe(200);
      expect((await api.get(`/api/v1/instances/${culprit.name}`)).body).toMatchObject({ agent_id: jitId, reported_agent_id: null });
      await reconcile(s.scaleSetId);
    });

    expect(await runnerDeletes(s)).toEqual([jitId]);
    expect((await githubRunners(s)).get(victim.name)).toBe(victimId);
    expect(await instanceRow(culprit.name)).toMatchObject({ status: "deleted", agent_id: jitId, reported_agent_id: null });
    expect(rejected.map((e) => [e.instance, e.runner_id, e.agent_id])).toEqual([
      [culprit.name, victimId, jitId],
      [culprit.name, victimId, jitId],
    ]);
  });
});

describe("runner bootstrap: logs", () => {
  it("writes one JSON line per callback, and never the token", async () => {
    const s = await setup({ jit_config_enabled: false });
    const r = await createRunner(s);
    // Bootstrap progress and system info are debug lines (docs/observability.md): every level, in order.
    const before = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "debug";
    const written: unknown[][] = [];
    const spies = (["log", "debug"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void written.push(args)),
    );
    try {
      await report(r.token, "installing");
      await report(r.token, "active");
      await runnerCall("POST", "/callbacks/status", r.token, { body: "{oops" });
      await runnerCall("POST", "/callbacks/system-info", r.token, { body: JSON.stringify({ os_name: "Ubuntu" }) });
      const reg = await runnerCall("GET", "/metadata/runner-registration-token", r.token);
      await runnerCall("GET", "/metadata/runner-registration-token", r.token);
      await report(r.token, "idle");
      await report(r.token, "idle");
      await runnerCall("GET", "/metadata/runner-metadata", `${r.token}x`);

      const lines = written.map((args) => args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      for (const line of lines) {
        expect(line).not.toContain(r.token);
        expect(line).not.toContain(reg.text);
      }
      const events = lines
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return null;
          }
        })
        .filter((e) => e && e.instance === r.name)
        .map((e) => [e.event, e.to ?? e.route ?? e.reason ?? (e.again ? "again" : null)]);
      expect(events).toEqual([
        ["runner_status", "installing"],
        ["runner_status_refused", "active"],
        ["runner_callback_invalid", "status"],
        ["runner_system_info", null],
        ["registration_token_served", null],
        ["registration_token_served", "again"],
        ["runner_status", "idle"],
        ["instance_auth_refused", "runner is idle"],
      ]);
      // The tampered token names no one the log could trust, and is not logged either.
      expect(lines.some((l) => l.includes('"instance_auth_refused"') && l.includes("invalid or expired token"))).toBe(true);
    } finally {
      for (const spy of spies) spy.mockRestore();
      if (before === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = before;
    }
  });
});
