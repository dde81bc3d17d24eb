import { z } from "@hono/zod-openapi";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { actRunnerInstallScript, defaultActRunnerUrl } from "../bootstrap/act-runner-script";
import { pickTool, renderInstallScript } from "../bootstrap/install-script";
import { serviceName, systemdUnit } from "../bootstrap/runner-service";
import { fromBase64 } from "../crypto/base64url";
import { keyringFor } from "../crypto/keyring";
import { open, seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { findInstanceAndSetup } from "../db/runner/instance-lookups";
import { readAndClaimJitMint, releaseJitMint } from "../db/runner/jit-mint-store";
import { claimRegistrationToken, releaseRegistrationToken, sealRegistrationToken } from "../db/runner/registration-token-store";
import { loadRunnerSetup, type RunnerSetup } from "../db/scaleset/runner-setup-store";
import { forgejoInstallScript, forgejoRunnerEnvFile, forgejoRunnerToken, type MetadataAnswer } from "../forges/forgejo/runner-metadata";
import { afterResponse } from "../http/after-response";
import { ApiError, errorResponse } from "../http/errors";
import { type CallingInstance, type InstanceAppEnv, instanceAuthWith } from "../http/instance-auth";
import { errorJson } from "../http/openapi";
import type { Router } from "../http/router";
import { errorText, logEvent as log } from "../observability/log";
import { onBootJitConfig, onBootTiming } from "../scaleset/jit/jit-on-boot";
import { githubRunnerPort, runnerPortForScaleSet } from "../scaleset/ports-factory";
import { entityUrl } from "../scaleset/runner/bootstrap";
import type { InstanceTokenClaims } from "../scaleset/runner/instance-token";
import { REGISTRATION_TOKEN_MINT_STALE_MS, registrationTokenStep } from "../scaleset/runner/registration-token";

/**
 * What a booting machine fetches about itself (GARM's metadata routes, same formats), each
 * behind the instance's own token.
 */

/** The machine registers with a JIT config: sealed before its create, or minted when it first asks. */
const registersWithJit = (inst: CallingInstance) => inst.hasJitConfig || inst.jitOnBoot;
const plainToken = (token: string) =>
  new Response(token, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
/** Served only while the runner bootstraps: once it reported in, a fetch is refused with 409. */
const CREDENTIALS_PATH = /\/metadata\/credentials\//;
/**
 * The first credentials file a machine fetches: the one that mints an on-boot config, and the one
 * it asks again while it waits in line for the GitHub budget. The other two read what it sealed.
 */
const MINT_PATH = /\/metadata\/credentials\/runner$/;
/** A Forgejo runner's registration (forges/forgejo/runner-metadata.ts): read with the sealed registration. */
const FORGEJO_PATH = /\/metadata\/forgejo\/(runner-env|runner-token)$/;
/** Paths that need the scale set's runner setup, read with the instance in one D1 round trip (instanceAuthWith's read). */
const SETUP_PATH =
  /\/metadata\/(runner-metadata|install-script|system\/service-name|systemd\/unit-file|system\/cert-bundle|credentials\/runner|forgejo\/runner-env)$/;

const JIT_FILES = { runner: ".runner", credentials: ".credentials", credentials_rsaparams: ".credentials_rsaparams" } as const;
const RUN_AS_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

const base = (publicUrl: string) => publicUrl.replace(/\/+$/, "");
// biome-ignore lint/suspicious/noExplicitAny: RunnerSetup carries the entity columns entityUrl reads, not the whole row type
const repoUrl = (ctx: RunnerSetup) => entityUrl({ entity: ctx.entity as any, endpoint: { baseUrl: ctx.baseUrl, caCertBundle: null } });
const text = (body: string, status = 200) => new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** A Forgejo metadata answer: its text (never cached: it may hold the runner's token), or the refusal. */
const answered = (c: Context, a: MetadataAnswer) =>
  a.ok
    ? new Response(a.body, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } })
    : fail(c, a.status, a.message);

const fail = (c: Context, status: ContentfulStatusCode, message: string, details?: unknown) =>
  errorResponse(c, new ApiError(status, message, details));
const invalidRunAsUser = (c: Context) =>
  errorResponse(c, new ApiError(400, "invalid runAsUser", { pattern: RUN_AS_USER.source }, { code: "invalid_parameter" }));

async function readWithSetup(c: Context<InstanceAppEnv>, name: string, scaleSetId: string, withJitConfig: boolean) {
  const found = await findInstanceAndSetup(c.env.DB, name, scaleSetId, { withJitConfig });
  c.set("runnerSetup", found.setup);
  return found.instance;
}

/**
 * The first credentials file also claims an on-boot mint in the same round trip (the claim holds
 * the token rule, so a refused request claims nothing): a machine waiting in line for the GitHub
 * budget asks again every minute or so, and each ask read, read the setup, claimed and kept.
 */
async function readClaimingMint(c: Context<InstanceAppEnv>, claims: InstanceTokenClaims) {
  const at = Date.now();
  const found = await readAndClaimJitMint(
    c.env.DB,
    { name: claims.sub, scaleSetId: claims.ss, createAttempt: claims.att },
    at,
    at - onBootTiming(c.env).staleClaimMs,
  );
  c.set("runnerSetup", found.setup);
  c.set("jitClaimedAt", found.claimed ? at : null);
  return found.instance;
}

/** The runner setup read with the instance (SETUP_PATH), or read now. */
async function runnerSetup(c: Context<InstanceAppEnv>): Promise<RunnerSetup | null> {
  const read = c.get("runnerSetup");
  return read !== undefined ? read : loadRunnerSetup(c.env.DB, c.get("instance").scaleSetId, c.get("instance").name);
}

async function jitFiles(env: InstanceAppEnv["Bindings"], instanceId: string, sealed: string): Promise<Record<string, string>> {
  const encoded = await open(await keyringFor(env), sealed, secretContext.jitConfig(instanceId));
  return JSON.parse(new TextDecoder().decode(fromBase64(encoded))) as Record<string, string>;
}

/** A Gitea scale set's machine installs act_runner (src/bootstrap/act-runner-script.ts); Linux only for now. */
function giteaInstallScript(c: Context<InstanceAppEnv>, name: string, ctx: RunnerSetup): Response {
  if (ctx.osType !== "linux")
    return fail(c, 409, `no act_runner install script for ${ctx.osType} yet: Gitea scale sets run Linux machines`);
  const downloadUrl = ctx.runnerDownloadUrl ?? defaultActRunnerUrl(ctx.osArch);
  if (!downloadUrl) {
    return fail(
      c,
      409,
      `no default act_runner release for ${ctx.osArch}: set the scale set's runner_download_url (and runner_download_sha256)`,
    );
  }
  const user = c.req.query("runAsUser") ?? "runner";
  if (!RUN_AS_USER.test(user)) return invalidRunAsUser(c);
  return text(
    actRunnerInstallScript({
      instanceName: name,
      metadataUrl: `${base(c.env.PUBLIC_URL)}/api/v1/metadata`,
      callbackUrl: `${base(c.env.PUBLIC_URL)}/api/v1/callbacks`,
      token: /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")![1]!,
      instanceUrl: ctx.baseUrl,
      labels: ctx.labels,
      downloadUrl,
      // A URL set without its checksum is checked against the .sha256 published beside it, like the default.
      downloadSha256: ctx.runnerDownloadSha256,
      runAsUser: user,
    }),
  );
}

export const metadataRoutes = new Hono<InstanceAppEnv>()
  .use(
    "/metadata/*",
    instanceAuthWith({
      servedOnce: (path) => CREDENTIALS_PATH.test(path),
      withJitConfig: (path) => CREDENTIALS_PATH.test(path) || FORGEJO_PATH.test(path),
      // The token names the scale set: its setup is read alongside, used only if the instance is in it.
      read: (c, claims, withJitConfig) =>
        MINT_PATH.test(c.req.path)
          ? readClaimingMint(c, claims)
          : SETUP_PATH.test(c.req.path)
            ? readWithSetup(c, claims.sub, claims.ss, withJitConfig)
            : undefined,
    }),
  )
  .get("/metadata/runner-metadata", async (c) => {
    const inst = c.get("instance");
    const ctx = await runnerSetup(c);
    if (!ctx) return fail(c, 401, "unauthorized");
    return c.json({
      name: inst.name,
      scale_set_id: inst.scaleSetId,
      repo_url: repoUrl(ctx),
      labels: ctx.labels,
      runner_group: ctx.runnerGroup,
      os_type: ctx.osType,
      os_arch: ctx.osArch,
      jit_config_enabled: registersWithJit(inst),
      service_name: serviceName(ctx.entity),
      // github, gitea or forgejo: which runner the machine runs (act_runner on Gitea, forgejo-runner
      // one-job on Forgejo), and the forge's web URL it registers with.
      forge: ctx.forge,
      forge_url: ctx.baseUrl,
      "metadata-url": `${base(c.env.PUBLIC_URL)}/api/v1/metadata`,
      "callback-url": `${base(c.env.PUBLIC_URL)}/api/v1/callbacks`,
    });
  })
  .get("/metadata/install-script", async (c) => {
    const inst = c.get("instance");
    const ctx = await runnerSetup(c);
    if (!ctx) return fail(c, 401, "unauthorized");
    if (ctx.forge === "gitea") return giteaInstallScript(c, inst.name, ctx);
    if (ctx.forge === "forgejo") {
      const user = c.req.query("runAsUser") ?? "runner";
      if (!RUN_AS_USER.test(user)) return invalidRunAsUser(c);
      const script = forgejoInstallScript(ctx, {
        instanceName: inst.name,
        metadataUrl: `${base(c.env.PUBLIC_URL)}/api/v1/metadata`,
        callbackUrl: `${base(c.env.PUBLIC_URL)}/api/v1/callbacks`,
        token: /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")![1]!,
        runAsUser: user,
      });
      return answered(c, script);
    }
    let tools;
    try {
      tools = await githubRunnerPort(c.env, ctx.entity).runnerDownloads();
    } catch (e) {
      return fail(c, 502, "could not get the runner downloads from GitHub", { reason: errorText(e) });
    }
    const tool = pickTool(tools, ctx.osType, ctx.osArch);
    if (!tool) return fail(c, 409, `GitHub offers no runner for ${ctx.osType}/${ctx.osArch}`);
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")![1]!;
    const user = c.req.query("runAsUser") ?? "runner";
    if (!RUN_AS_USER.test(user)) return invalidRunAsUser(c);
    return text(
      renderInstallScript(ctx.osType, {
        instanceName: inst.name,
        metadataUrl: `${base(c.env.PUBLIC_URL)}/api/v1/metadata`,
        callbackUrl: `${base(c.env.PUBLIC_URL)}/api/v1/callbacks`,
        token,
        tool,
        runAsUser: user,
        serviceName: serviceName(ctx.entity),
        // An instance without a sealed JIT config was created to register with a token.
        registration: registersWithJit(inst) ? null : { repoUrl: repoUrl(ctx), labels: ctx.labels, runnerGroup: ctx.runnerGroup },
      }),
    );
  })
  .get("/metadata/credentials/:file", async (c) => {
    const inst = c.get("instance");
    const file = JIT_FILES[c.req.param("file") as keyof typeof JIT_FILES];
    if (!file) return fail(c, 404, "unknown credentials file", { allowed: Object.keys(JIT_FILES) });
    // Read with the instance on this path only (instanceAuthWith's withJitConfig).
    if (inst.jitConfigEnc === undefined) throw new Error("the credentials route's instance was read without its JIT config");
    let sealed = inst.jitConfigEnc;
    if (sealed === null && inst.jitOnBoot) {
      const setup = await runnerSetup(c);
      const claimedAt = c.get("jitClaimedAt");
      if (!setup) {
        if (typeof claimedAt === "number") await releaseJitMint(c.env.DB, inst.id, claimedAt, Date.now());
        return fail(c, 401, "unauthorized");
      }
      // Finishes even if the machine hangs up (a curl timeout): the mint lands in D1 for its retry
      // rather than leaving a claim nobody keeps.
      const minting = onBootJitConfig(c.env, inst, setup, claimedAt);
      afterResponse(
        c,
        minting.catch(() => {}),
      );
      const jit = await minting;
      if (jit.kind === "busy") {
        const wait = jit.reason === "github_budget" ? "GitHub budget" : "mint by another request";
        return errorResponse(
          c,
          new ApiError(
            503,
            `still waiting for the ${wait}; try again`,
            { reason: jit.reason, retry_after_seconds: jit.retryAfterSeconds },
            {
              headers: { "retry-after": String(jit.retryAfterSeconds) },
            },
          ),
        );
      }
      if (jit.kind === "gone") return fail(c, 409, "this runner is no longer bootstrapping", { instance: inst.name });
      if (jit.kind === "failed") {
        log({ event: "jit_mint_failed", scale_set: inst.scaleSetId, instance: inst.name, error: jit.reason });
        return fail(c, 502, "could not get a JIT configuration from GitHub", { reason: jit.reason });
      }
      sealed = jit.jitConfigEnc;
    }
    if (sealed === null) return fail(c, 404, "this runner has no JIT configuration");
    const files = await jitFiles(c.env, inst.id, sealed);
    if (!files[file]) return fail(c, 404, "this runner has no JIT configuration");
    return new Response(fromBase64(files[file]), { headers: { "content-type": "application/octet-stream" } });
  })
  .get("/metadata/forgejo/runner-env", async (c) => {
    const ctx = await runnerSetup(c);
    if (ctx?.forge !== "forgejo") return fail(c, 404, "this runner is not a Forgejo runner");
    return answered(c, await forgejoRunnerEnvFile(c.env, c.get("instance"), ctx));
  })
  .get("/metadata/forgejo/runner-token", async (c) => answered(c, await forgejoRunnerToken(c.env, c.get("instance"))))
  .get("/metadata/runner-registration-token", async (c) => {
    const inst = c.get("instance");
    if (registersWithJit(inst)) return fail(c, 404, "this runner registers with a JIT configuration; it has no registration token");
    // One token per create attempt (scaleset/runner/registration-token.ts): the claim's winner mints and
    // seals it before answering; a retry of the same machine gets the sealed one.
    const now = Date.now();
    const claim = await claimRegistrationToken(c.env.DB, inst, now, now - REGISTRATION_TOKEN_MINT_STALE_MS);
    const step = registrationTokenStep(claim, now);
    if (step.kind === "again") {
      const token = await open(await keyringFor(c.env), claim.sealed!, secretContext.registrationToken(inst.id));
      log({ event: "registration_token_served", scale_set: inst.scaleSetId, instance: inst.name, again: true });
      return plainToken(token);
    }
    if (step.kind === "wait") {
      const wait = { headers: { "retry-after": String(step.retryAfterSeconds) } };
      const details = { reason: "minting", retry_after_seconds: step.retryAfterSeconds };
      return errorResponse(c, new ApiError(503, "the registration token is being minted; try again", details, wait));
    }
    if (step.kind === "refuse") {
      log({ event: "registration_token_refused", scale_set: inst.scaleSetId, instance: inst.name, reason: step.reason });
      const why =
        step.reason === "expired"
          ? "was served more than 2 minutes ago; it is served again only to a quick retry"
          : "belongs to another create attempt";
      return fail(c, 409, `the registration token for this runner ${why}`, { instance: inst.name, reason: step.reason });
    }
    try {
      const port = await runnerPortForScaleSet(c.env, inst.scaleSetId);
      if (!port) throw new Error("scale set is gone");
      const token = await port.registrationToken();
      const sealed = await seal(await keyringFor(c.env), token, secretContext.registrationToken(inst.id));
      if (!(await sealRegistrationToken(c.env.DB, inst, now, sealed))) throw new Error("the claim was taken over by a later request");
      log({ event: "registration_token_served", scale_set: inst.scaleSetId, instance: inst.name });
      return plainToken(token);
    } catch (e) {
      await releaseRegistrationToken(c.env.DB, inst.id, now);
      const reason = errorText(e);
      log({ event: "registration_token_failed", scale_set: inst.scaleSetId, instance: inst.name, error: reason });
      return fail(c, 502, "could not get a registration token from GitHub", { reason });
    }
  })
  .get("/metadata/system/service-name", async (c) => {
    const ctx = await runnerSetup(c);
    if (!ctx) return fail(c, 401, "unauthorized");
    return text(serviceName(ctx.entity));
  })
  .get("/metadata/systemd/unit-file", async (c) => {
    const ctx = await runnerSetup(c);
    if (!ctx) return fail(c, 401, "unauthorized");
    const user = c.req.query("runAsUser") ?? "runner";
    if (!RUN_AS_USER.test(user)) return invalidRunAsUser(c);
    return text(systemdUnit(serviceName(ctx.entity), user));
  })
  .get("/metadata/system/cert-bundle", async (c) => {
    const ctx = await runnerSetup(c);
    if (!ctx) return fail(c, 401, "unauthorized");
    const certs: Record<string, string> = {};
    if (ctx.caCertBundle) certs["endpoint-ca.pem"] = btoa(ctx.caCertBundle);
    return c.json({ root_certificates: certs });
  });

const instanceSecurity = [{ instanceToken: [] }];
const unauthorized = { 401: errorJson("Missing, invalid or spent instance token") };

export function documentMetadata(app: Router, prefix: string) {
  const doc = (path: string, summary: string, content: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    app.openAPIRegistry.registerPath({
      method: "get",
      path: `${prefix}/metadata${path}`,
      tags: ["Runner bootstrap"],
      summary,
      security: instanceSecurity,
      // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI registry types responses per route; these documented-only routes share one builder
      responses: { 200: { description: summary, content: content as any }, ...unauthorized, ...extra } as any,
    });
  const plain = { "text/plain": { schema: z.string() } };
  doc("/runner-metadata", "The instance's runner metadata", { "application/json": { schema: z.record(z.string(), z.unknown()) } });
  doc("/install-script", "The rendered bootstrap script (bash or PowerShell; ?runAsUser=)", plain, {
    400: errorJson("Invalid runAsUser"),
    409: errorJson("GitHub offers no runner for the scale set's OS and architecture"),
    502: errorJson("GitHub's runner downloads could not be read"),
  });
  doc(
    "/credentials/{file}",
    "A decoded JIT file: runner, credentials or credentials_rsaparams",
    { "application/octet-stream": { schema: z.string() } },
    {
      404: errorJson("No such file, or no JIT configuration"),
      409: errorJson("The runner has reported in (served only while it bootstraps), or is no longer bootstrapping"),
      502: errorJson("GitHub did not give a JIT configuration (on-boot mint)"),
      503: errorJson("Still waiting in line for the GitHub budget or another request's mint: try again after Retry-After"),
    },
  );
  doc("/runner-registration-token", "The runner's one-time registration token, raw text (scale sets without JIT)", plain, {
    404: errorJson("The runner registers with a JIT configuration"),
    409: errorJson("Already served for this create attempt"),
    502: errorJson("GitHub did not give a token"),
  });
  doc("/forgejo/runner-env", "A Forgejo runner's uuid, job handle, Forgejo URL and runner id, as shell assignments", plain, {
    404: errorJson("Not a Forgejo runner, or it has no registration"),
    409: errorJson("The job the runner was made for left the queue"),
  });
  doc("/forgejo/runner-token", "A Forgejo runner's token, raw text (the file forgejo-runner one-job --token-url reads)", plain, {
    404: errorJson("The runner has no Forgejo registration"),
  });
  doc("/system/service-name", "The runner service name", plain);
  doc("/systemd/unit-file", "A systemd unit for the runner (?runAsUser=)", plain, { 400: errorJson("Invalid runAsUser") });
  doc("/system/cert-bundle", "Extra CA certificates to trust", {
    "application/json": { schema: z.object({ root_certificates: z.record(z.string(), z.string()) }) },
  });
}
