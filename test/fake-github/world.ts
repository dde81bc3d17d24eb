/**
 * One fake GitHub: its accounts, credentials, runners, hooks and jobs, and the REST endpoints
 * Edgerunner uses, answering in GitHub's wire format (checked against GitHub's OpenAPI by
 * test/contract). Plain web APIs only (fetch-style data, WebCrypto) so the same code serves
 * Node tests, workerd tests through the HTTP server, and e2e scripts.
 *
 * Each test gets its own world (see server.ts), so tests running in parallel never see each
 * other's state.
 *
 * Growing it: jobs, runners and hooks are plain maps on World, so playing workflows later
 * (queue a job, deliver signed workflow_job webhooks to the hooks' URLs, assign it to an
 * idle runner) is a set of World methods plus control routes in server.ts; new REST
 * endpoints go in `routes` (or a table of their own file, like apps/rest.ts, joined in ROUTES)
 * and are then covered by the contract test automatically.
 */

import type { components } from "@octokit/openapi-types";
import { ACTIONS_RUN_ROUTES, jobView } from "./actions-runs.ts";
import { APP_READ_ROUTES, setAppHook } from "./apps/reads.ts";
import { covers } from "./apps/registry.ts";
import { appRestRoutes, DEFAULT_INSTALLATION_PERMISSIONS } from "./apps/rest.ts";
import { hookKey, seedDeliveries } from "./deliveries.ts";
import { DELIVERY_ROUTES } from "./deliveries-rest.ts";
import { decodeJwt, importPublicKey, jwtTimeProblem, looksLikeJwt, verifyJwtSignature } from "./jwt.ts";
import { GithubLimits } from "./profile.ts";
import { error, json, page } from "./rest-answers.ts";
import type {
  FakeHook,
  FakeInstallation,
  FakeRunner,
  Fault,
  GithubProfile,
  RecordedRequest,
  Seed,
  SeedJob,
  SeedRunnerDownload,
  SeedRunnerGroup,
  WorldDump,
} from "./types.ts";

export interface FakeRequest {
  method: string;
  /** Path after the world prefix, possibly starting with /api/v3. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  body: unknown;
  /** Absolute URL of the world (no trailing slash), for links in answers. */
  baseUrl: string;
}

export interface FakeResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export { error };

export type Principal =
  | { kind: "pat"; token: string; login: string; entities: string[] | null }
  | { kind: "installation"; installationId: number; account: string }
  | { kind: "app"; appId: number };

interface App {
  id: number;
  clientId: string | null;
  key: CryptoKey;
}

interface RateWindow {
  limit: number;
  used: number;
  resetAt: number;
}

const TOKEN_TTL_MS = 60 * 60_000;
const PRIMARY_LIMIT = 5000;

const lc = (s: string) => s.toLowerCase();
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function randomToken(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const b64 = (s: string) => btoa(s);
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** A runner download as GitHub lists it (its OpenAPI schema `runner-application`). */
export type RunnerDownloadView = components["schemas"]["runner-application"];

export interface Route {
  method: string;
  pattern: RegExp;
  /** Name used in recorded requests and faults. */
  operation: string;
  handler?: (w: World, req: FakeRequest, m: RegExpExecArray, who: Principal) => FakeResponse | Promise<FakeResponse>;
  /** In place of `handler`, for the few operations GitHub answers without credentials (no principal, no rate window). */
  anonymous?: (w: World, req: FakeRequest, m: RegExpExecArray) => FakeResponse | Promise<FakeResponse>;
  /** Needs an App JWT rather than a token. */
  appJwt?: boolean;
}

const SCOPE = "(repos/[^/]+/[^/]+|orgs/[^/]+|enterprises/[^/]+)";

export class World {
  clockOffsetMs = 0;
  readonly apps = new Map<number, App>();
  readonly installations = new Map<number, FakeInstallation>();
  readonly pats = new Map<string, { token: string; login: string; entities: string[] | null }>();
  readonly installationTokens = new Map<string, { installationId: number; expiresAt: number }>();
  readonly registrationTokens = new Map<string, { scope: string; expiresAt: number }>();
  readonly repos = new Set<string>();
  readonly orgs = new Set<string>();
  readonly enterprises = new Set<string>();
  /** Enterprise slug → the logins of its organizations (Seed.enterprise_orgs), lower-cased. */
  readonly enterpriseOrgs = new Map<string, Set<string>>();
  /** When the world was made (seeded repositories were last pushed to then). */
  readonly createdAt = Date.now();
  readonly runnerGroups = new Map<string, SeedRunnerGroup[]>();
  readonly runners = new Map<number, FakeRunner>();
  readonly hooks = new Map<number, FakeHook>();
  readonly jobs = new Map<number, Required<SeedJob>>();
  readonly rateWindows = new Map<string, RateWindow>();
  /** Runner packages served by the world itself, by filename. */
  readonly runnerPackages = new Map<
    string,
    { os: string; architecture: string; filename: string; content: Uint8Array | null; sha256: string | null; token: string | null }
  >();
  downloadRequests: WorldDump["download_requests"] = [];
  readonly issuedRegistrationTokens: string[] = [];
  /** The JIT files handed out, by runner name (base64 each, as inside encoded_jit_config). */
  readonly jitConfigs = new Map<string, Record<string, string>>();
  faults: Fault[] = [];
  requests: RecordedRequest[] = [];
  /** Latency and secondary limits (PUT /_fake/profile); null: answers at once, no secondary limits. */
  limits: GithubLimits | null = null;
  private nextId = 1000;

  readonly id: string;

  constructor(id: string) {
    this.id = id;
  }

  /** A clock held still (setNow with `freeze`): a test's own clock, read the same by every request until it moves it. */
  private frozenAt: number | null = null;

  now(): number {
    return this.frozenAt ?? Date.now() + this.clockOffsetMs;
  }

  /**
   * Sets the fake's clock (token expiry, JWT checks, rate-limit resets) to `ms`; with `freeze` it
   * stays there until set again. A test whose calls land exactly a minute apart on its own clock
   * needs that: a clock running on with real time would put them a few ms either side of the
   * secondary limit's minute, differently on each run.
   */
  setNow(ms: number, freeze = false) {
    this.clockOffsetMs = ms - Date.now();
    this.frozenAt = freeze ? ms : null;
  }

  /** Moves the fake's clock on by `ms` (held still if it was). */
  advance(ms: number) {
    this.clockOffsetMs += ms;
    if (this.frozenAt !== null) this.frozenAt += ms;
  }

  newId(): number {
    return this.nextId++;
  }

  async seed(seed: Seed): Promise<void> {
    for (const a of seed.apps ?? []) {
      this.apps.set(a.id, { id: a.id, clientId: a.client_id ?? null, key: await importPublicKey(a.public_key) });
    }
    for (const i of seed.installations ?? []) {
      this.installations.set(i.id, { id: i.id, appId: i.app_id, account: lc(i.account), permissions: i.permissions, events: i.events });
    }
    for (const p of seed.pats ?? []) {
      this.pats.set(p.token, { token: p.token, login: p.login ?? "octocat", entities: p.entities?.map(lc) ?? null });
    }
    for (const r of seed.repos ?? []) this.repos.add(lc(r));
    for (const o of seed.orgs ?? []) this.orgs.add(lc(o));
    for (const e of seed.enterprises ?? []) this.enterprises.add(lc(e));
    for (const [e, orgs] of Object.entries(seed.enterprise_orgs ?? {})) {
      this.enterprises.add(lc(e));
      for (const o of orgs) this.orgs.add(lc(o));
      this.enterpriseOrgs.set(lc(e), new Set([...(this.enterpriseOrgs.get(lc(e)) ?? []), ...orgs.map(lc)]));
    }
    for (const [scope, groups] of Object.entries(seed.runner_groups ?? {})) this.runnerGroups.set(lc(scope), groups);
    for (const r of seed.runners ?? []) {
      const id = r.id ?? this.newId();
      this.runners.set(id, {
        id,
        name: r.name,
        os: r.os ?? "linux",
        status: r.status ?? "online",
        busy: r.busy ?? false,
        labels: (r.labels ?? ["self-hosted"]).map((name) => this.label(name)),
        runner_group_id: r.runner_group_id ?? 1,
        ephemeral: r.ephemeral ?? false,
        scope: lc(r.scope),
      });
    }
    for (const h of seed.hooks ?? []) {
      const id = this.newId();
      const t = iso(this.now());
      this.hooks.set(id, {
        id,
        scope: lc(h.scope),
        name: "web",
        active: h.active ?? true,
        events: h.events ?? ["push"],
        config: { url: h.url, content_type: h.content_type ?? "json", insecure_ssl: "0", ...(h.secret && { secret: h.secret }) },
        created_at: t,
        updated_at: t,
      });
      if (h.deliveries) seedDeliveries(this, hookKey(id), h.url, h.deliveries, null);
    }
    for (const j of seed.jobs ?? []) this.putJob(j);
    for (const h of seed.app_hooks ?? []) setAppHook(this, h);
  }

  putJob(j: SeedJob) {
    const prior = this.jobs.get(j.id);
    this.jobs.set(j.id, {
      id: j.id,
      repository: lc(j.repository),
      run_id: j.run_id ?? j.id * 10,
      status: j.status ?? "queued",
      conclusion: j.conclusion ?? null,
      name: j.name ?? "build",
      labels: j.labels ?? ["self-hosted"],
      runner_id: j.runner_id ?? null,
      runner_name: j.runner_name ?? null,
      workflow_name: j.workflow_name ?? "CI",
      queued_at: j.queued_at ?? prior?.queued_at ?? this.now(),
      run_attempt: j.run_attempt ?? prior?.run_attempt ?? 1,
      // Every change moves it, as GitHub moves a run's updated_at when its jobs change.
      updated_at: this.now(),
    });
  }

  dump(): WorldDump {
    return {
      now: this.now(),
      runners: [...this.runners.values()],
      hooks: [...this.hooks.values()],
      installation_tokens: [...this.installationTokens.values()].map((t) => ({
        installation_id: t.installationId,
        expires_at: iso(t.expiresAt),
      })),
      registration_tokens: this.registrationTokens.size,
      issued_registration_tokens: this.issuedRegistrationTokens,
      faults: this.faults,
      download_requests: this.downloadRequests,
      jit_configs: Object.fromEntries(this.jitConfigs),
    };
  }

  /** Serves a runner package from this world and lists it (see SeedRunnerDownload). */
  async addRunnerPackage(d: SeedRunnerDownload, origin: string): Promise<RunnerDownloadView> {
    const content = d.content_base64 === undefined ? null : Uint8Array.from(atob(d.content_base64), (c) => c.charCodeAt(0));
    const real = content ? hex(new Uint8Array(await crypto.subtle.digest("SHA-256", content))) : null;
    this.runnerPackages.set(d.filename, {
      os: d.os,
      architecture: d.architecture,
      filename: d.filename,
      content,
      sha256: d.sha256_checksum === undefined ? real : d.sha256_checksum,
      token: d.temp_download_token === undefined ? randomToken("dltok_") : d.temp_download_token,
    });
    return this.downloadList(origin).find((x) => x.filename === d.filename)!;
  }

  /** GitHub's download list, with this world's own packages in place of the defaults for their os/architecture. */
  downloadList(origin: string): RunnerDownloadView[] {
    const own = [...this.runnerPackages.values()].map((p) => ({
      os: p.os,
      architecture: p.architecture,
      download_url: `${origin}/_fake/downloads/${encodeURIComponent(p.filename)}`,
      filename: p.filename,
      ...(p.token !== null && { temp_download_token: p.token }),
      ...(p.sha256 !== null && { sha256_checksum: p.sha256 }),
    }));
    return [...own, ...downloads().filter((d) => !own.some((o) => o.os === d.os && o.architecture === d.architecture))];
  }

  /** GET /_fake/downloads/{filename}: the package, for the bearer temp download token only. */
  download(filename: string, authorization: string | undefined): { status: number; body: Uint8Array | string } {
    const p = this.runnerPackages.get(filename);
    const answer = (status: number, body: Uint8Array | string) => {
      this.downloadRequests.push({ filename, authorization: authorization ?? null, status });
      return { status, body };
    };
    if (!p?.content) return answer(404, "Not Found");
    if (p.token !== null && authorization !== `Bearer ${p.token}`) return answer(401, "Unauthorized");
    return answer(200, p.content);
  }

  private label(name: string) {
    const readOnly = ["self-hosted", "linux", "windows", "macos", "x64", "arm64", "arm"].includes(lc(name));
    return { id: this.newId(), name, type: readOnly ? ("read-only" as const) : ("custom" as const) };
  }

  /** Handles one REST request; records it. */
  async handle(req: FakeRequest): Promise<FakeResponse> {
    const ghes = req.path === "/api/v3" || req.path.startsWith("/api/v3/");
    const path = ghes ? req.path.slice("/api/v3".length) || "/" : req.path;
    const base = ghes ? `${req.baseUrl}/api/v3` : req.baseUrl;
    const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(path));
    const match = route ? route.pattern.exec(path)! : null;
    const arrivedAt = this.now();
    const record = (
      status: number,
      auth: RecordedRequest["auth"],
      principal: string | null,
      secondary?: RecordedRequest["secondary_limit"],
    ) =>
      this.requests.push({
        at: this.now(),
        arrived_at: arrivedAt,
        method: req.method,
        path,
        query: req.query,
        ghes,
        auth,
        principal,
        status,
        user_agent: req.headers["user-agent"] ?? null,
        api_version: req.headers["x-github-api-version"] ?? null,
        body: req.body ?? null,
        operation: route?.operation ?? null,
        ...(secondary && { secondary_limit: secondary }),
      });

    if (route?.anonymous && match) {
      const res = await route.anonymous(this, { ...req, path, baseUrl: base }, match);
      record(res.status, "none", null);
      return res;
    }
    const auth = await this.authenticate(req.headers.authorization, !!route?.appJwt);
    if ("denied" in auth) {
      record(auth.denied.status, auth.kind, null);
      return auth.denied;
    }
    const who = auth.principal;
    const principalName = who.kind === "pat" ? who.login : who.kind === "installation" ? String(who.installationId) : String(who.appId);

    const limits = this.limits;
    if (!limits) return this.answer(req, path, base, route, match, who, (status) => record(status, who.kind, principalName));
    const key = this.rateKey(who);
    const refused = limits.enter(key, req.method, this.now());
    if (refused) {
      const res = error(refused.status, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.");
      const final = {
        ...res,
        headers: { ...this.rateHeaders(who), ...(refused.retryAfterS !== null && { "retry-after": String(refused.retryAfterS) }) },
      };
      record(final.status, who.kind, principalName, refused.kind);
      return final;
    }
    try {
      await new Promise((r) => setTimeout(r, limits.latencyMs(route?.operation ?? null)));
      return await this.answer(req, path, base, route, match, who, (status) => record(status, who.kind, principalName));
    } finally {
      limits.leave(key);
    }
  }

  /** Answers an authenticated request (faults, then the route), adds the rate-limit headers and records it. */
  private async answer(
    req: FakeRequest,
    path: string,
    base: string,
    route: Route | undefined,
    match: RegExpExecArray | null,
    who: Principal,
    record: (status: number) => void,
  ): Promise<FakeResponse> {
    const fault = this.takeFault(req.method, path);
    if (fault?.kind === "latency") await new Promise((r) => setTimeout(r, fault.latency_ms ?? 1000));
    let res: FakeResponse;
    if (fault && fault.kind !== "latency") {
      res = this.faultResponse(fault, req.method, path, who);
    } else if (!route?.handler || !match) {
      res = error(404, "Not Found");
    } else {
      res = await route.handler(this, { ...req, path, baseUrl: base }, match, who);
    }
    const final = { ...res, headers: { ...this.rateHeaders(who), ...res.headers } };
    record(final.status);
    return final;
  }

  private async authenticate(
    header: string | undefined,
    wantsJwt: boolean,
  ): Promise<{ principal: Principal } | { denied: FakeResponse; kind: RecordedRequest["auth"] }> {
    const m = /^(?:bearer|token)\s+(\S+)$/i.exec(header ?? "");
    if (!m) return { denied: error(401, "Requires authentication"), kind: "none" };
    const token = m[1]!;
    if (looksLikeJwt(token)) {
      const decoded = decodeJwt(token);
      if (!decoded) return { denied: error(401, "A JSON web token could not be decoded"), kind: "invalid" };
      if (!wantsJwt) return { denied: error(401, "'Authorization' header is not a valid token for this endpoint"), kind: "invalid" };
      if (decoded.header.alg !== "RS256") return { denied: error(401, "A JSON web token could not be decoded"), kind: "invalid" };
      const iss = String(decoded.claims.iss ?? "");
      const app = [...this.apps.values()].find((a) => String(a.id) === iss || (a.clientId !== null && a.clientId === iss));
      if (!app) return { denied: error(401, "Integration not found"), kind: "invalid" };
      if (!(await verifyJwtSignature(token, app.key)))
        return { denied: error(401, "A JSON web token could not be decoded"), kind: "invalid" };
      const problem = jwtTimeProblem(decoded.claims, Math.floor(this.now() / 1000));
      if (problem) return { denied: error(401, problem), kind: "invalid" };
      return { principal: { kind: "app", appId: app.id } };
    }
    if (wantsJwt) return { denied: error(401, "A JSON web token could not be decoded"), kind: "invalid" };
    const pat = this.pats.get(token);
    if (pat) return { principal: { kind: "pat", ...pat } };
    const inst = this.installationTokens.get(token);
    if (inst && inst.expiresAt > this.now()) {
      const installation = this.installations.get(inst.installationId);
      if (installation) return { principal: { kind: "installation", installationId: installation.id, account: installation.account } };
    }
    return { denied: error(401, "Bad credentials"), kind: "invalid" };
  }

  takeFault(method: string, path: string): Fault | null {
    const i = this.faults.findIndex(
      (f) =>
        (!f.method || f.method.toUpperCase() === method) &&
        (!f.path || path.includes(f.path)) &&
        (f.probability === undefined || Math.random() < f.probability),
    );
    if (i < 0) return null;
    const f = this.faults[i]!;
    const times = f.times ?? 1;
    if (times > 0) {
      if (times === 1) this.faults.splice(i, 1);
      else this.faults[i] = { ...f, times: times - 1 };
    }
    return f;
  }

  private faultResponse(f: Fault, method: string, path: string, who: Principal): FakeResponse {
    switch (f.kind) {
      case "rate_limit": {
        const status = f.status ?? 403;
        if (f.retry_after !== undefined) {
          return {
            ...error(status, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
            headers: { "retry-after": String(f.retry_after) },
          };
        }
        const w = this.rateWindow(who);
        w.used = w.limit;
        w.resetAt = this.now() + (f.reset_in ?? 60) * 1000;
        return error(
          status,
          `API rate limit exceeded for ${who.kind === "installation" ? "installation ID " + who.installationId : "user"}.`,
        );
      }
      case "server_error":
        return error(f.status ?? 502, f.status === 500 ? "Server Error" : "Bad Gateway");
      case "busy_runner":
        return error(422, `Bad request - Runner "${path.split("/").pop()}" is still running a job"`);
      case "duplicate_runner":
        return error(409, "Already exists - A runner with the name already exists.");
      case "unauthorized":
        return error(401, "Bad credentials");
      case "forbidden":
        return error(403, "Resource not accessible by integration");
      default:
        return error(500, `fake: unknown fault on ${method} ${path}`);
    }
  }

  /** Sets (or with null, clears) the world's production-like profile. */
  setProfile(profile: GithubProfile | null) {
    if (!profile || (!profile.latency && !profile.secondary)) this.limits = null;
    else if (this.limits) this.limits.profile = profile;
    else this.limits = new GithubLimits(profile);
  }

  private rateKey(who: Principal) {
    return who.kind === "pat" ? `pat:${who.token}` : who.kind === "installation" ? `inst:${who.installationId}` : `app:${who.appId}`;
  }

  rateWindow(who: Principal): RateWindow {
    const key = this.rateKey(who);
    let w = this.rateWindows.get(key);
    if (!w || w.resetAt <= this.now()) {
      w = { limit: PRIMARY_LIMIT, used: 0, resetAt: this.now() + 60 * 60_000 };
      this.rateWindows.set(key, w);
    }
    return w;
  }

  private rateHeaders(who: Principal): Record<string, string> {
    const w = this.rateWindow(who);
    // A refusal for an exhausted window does not count; everything else does.
    if (w.used < w.limit) w.used++;
    return {
      "x-ratelimit-limit": String(w.limit),
      "x-ratelimit-remaining": String(w.limit - w.used),
      "x-ratelimit-used": String(w.used),
      "x-ratelimit-reset": String(Math.ceil(w.resetAt / 1000)),
      "x-ratelimit-resource": "core",
    };
  }

  /** 404 unless the scope exists and the principal may act on it (GitHub hides what you may not see). */
  scopeAccess(scope: string, who: Principal): FakeResponse | null {
    const [kind, a, b] = scope.split("/") as [string, string, string | undefined];
    const exists =
      kind === "repos"
        ? this.repos.has(`${a}/${b}`)
        : kind === "orgs"
          ? this.orgs.has(a)
          : kind === "enterprises" && this.enterprises.has(a);
    if (!exists) return error(404, "Not Found");
    if (who.kind === "app") return error(403, "Resource not accessible by integration");
    if (who.kind === "installation") {
      if (kind === "enterprises") return error(403, "Resource not accessible by integration");
      if (a !== who.account) return error(404, "Not Found");
      const inst = this.installations.get(who.installationId);
      if (kind === "repos" && inst && !covers(inst, `${a}/${b}`)) return error(404, "Not Found");
    }
    if (who.kind === "pat" && who.entities) {
      const allowed = who.entities.includes(scope) || (kind === "repos" && who.entities.includes(`orgs/${a}`));
      if (!allowed) return error(404, "Not Found");
    }
    return null;
  }

  /**
   * Registers an ephemeral, offline runner and hands out its JIT files (what both the REST
   * generate-jitconfig and the Actions service's scale set generatejitconfig do). serverUrl:
   * where the runner talks to GitHub (this world, for the simulator's runners).
   */
  issueJitRunner(o: { scope: string; name: string; labels: string[]; runnerGroupId: number; serverUrl: string; workFolder: string }): {
    runner: FakeRunner;
    encoded: string;
  } {
    const id = this.newId();
    const runner: FakeRunner = {
      id,
      name: o.name,
      os: "unknown",
      status: "offline",
      busy: false,
      labels: o.labels.map((l) => ({ id: this.newId(), name: l, type: "custom" as const })),
      runner_group_id: o.runnerGroupId,
      ephemeral: true,
      scope: o.scope,
    };
    this.runners.set(id, runner);
    const files = {
      ".runner": b64(
        JSON.stringify({
          agentId: id,
          agentName: runner.name,
          poolId: o.runnerGroupId,
          serverUrl: o.serverUrl,
          workFolder: o.workFolder,
          ephemeral: true,
        }),
      ),
      ".credentials": b64(JSON.stringify({ scheme: "OAuthAccessToken", data: { clientId: crypto.randomUUID() } })),
      ".credentials_rsaparams": b64(JSON.stringify({ d: randomToken(""), modulus: randomToken("") })),
    };
    this.jitConfigs.set(runner.name, files);
    return { runner, encoded: b64(JSON.stringify(files)) };
  }

  groupsOf(scope: string): SeedRunnerGroup[] {
    const seeded = this.runnerGroups.get(scope) ?? [];
    return seeded.some((g) => g.default) ? seeded : [{ id: 1, name: "Default", default: true }, ...seeded];
  }
}

const scopeOf = (m: RegExpExecArray) => lc(decodeURIComponent(m[1]!));

const runnerView = (r: FakeRunner) => ({
  id: r.id,
  runner_group_id: r.runner_group_id,
  name: r.name,
  os: r.os,
  status: r.status,
  busy: r.busy,
  ephemeral: r.ephemeral,
  labels: r.labels,
});

function hookView(h: FakeHook, base: string) {
  const [kind] = h.scope.split("/");
  const url = `${base}/${h.scope}/hooks/${h.id}`;
  const common = {
    type: kind === "repos" ? "Repository" : "Organization",
    id: h.id,
    name: h.name,
    active: h.active,
    events: h.events,
    config: {
      content_type: h.config.content_type,
      insecure_ssl: h.config.insecure_ssl,
      url: h.config.url,
      ...(h.config.secret !== undefined && { secret: "********" }),
    },
    updated_at: h.updated_at,
    created_at: h.created_at,
    url,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
  };
  return kind === "repos" ? { ...common, test_url: `${url}/test`, last_response: { code: null, status: "unused", message: null } } : common;
}

function runnerGroupView(scope: string, g: SeedRunnerGroup, base: string) {
  const enterprise = scope.startsWith("enterprises/");
  return {
    id: g.id,
    name: g.name,
    visibility: "all",
    default: g.default ?? false,
    runners_url: `${base}/${scope}/actions/runner-groups/${g.id}/runners`,
    ...(enterprise
      ? { selected_organizations_url: `${base}/${scope}/actions/runner-groups/${g.id}/organizations` }
      : { inherited: false, selected_repositories_url: `${base}/${scope}/actions/runner-groups/${g.id}/repositories` }),
    allows_public_repositories: false,
    restricted_to_workflows: false,
    selected_workflows: [],
    workflow_restrictions_read_only: false,
  };
}

const DOWNLOAD_VERSION = "2.330.0";
const downloads = () =>
  [
    ["osx", "x64"],
    ["osx", "arm64"],
    ["linux", "x64"],
    ["linux", "arm"],
    ["linux", "arm64"],
    ["win", "x64"],
    ["win", "arm64"],
  ].map(([os, architecture]) => {
    const filename = `actions-runner-${os}-${architecture}-${DOWNLOAD_VERSION}.${os === "win" ? "zip" : "tar.gz"}`;
    return {
      os: os!,
      architecture: architecture!,
      download_url: `https://github.com/actions/runner/releases/download/v${DOWNLOAD_VERSION}/${filename}`,
      filename,
      sha256_checksum: Array.from(filename)
        .reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)
        .toString(16)
        .padStart(64, "0"),
    };
  });

/** The runner APIs answer 422 with plain-string errors (GitHub's validation-error-simple). */
function validationFailed(field: string, message: string): FakeResponse {
  return error(422, "Validation Failed", { errors: [`${field}: ${message}`] });
}

const routes: Route[] = [
  {
    method: "POST",
    pattern: /^\/app\/installations\/(\d+)\/access_tokens$/,
    operation: "create_installation_token",
    appJwt: true,
    handler: (w, _req, m, who) => {
      const inst = w.installations.get(Number(m[1]));
      if (!inst || who.kind !== "app" || inst.appId !== who.appId) return error(404, "Not Found");
      const token = randomToken("ghs_");
      const expiresAt = w.now() + TOKEN_TTL_MS;
      w.installationTokens.set(token, { installationId: inst.id, expiresAt });
      return json(201, {
        token,
        expires_at: iso(expiresAt),
        permissions: inst.permissions ?? DEFAULT_INSTALLATION_PERMISSIONS,
        repository_selection: inst.repositorySelection ?? "all",
      });
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/${SCOPE}/actions/runners$`),
    operation: "list_runners",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const name = req.query.name;
      const all = [...w.runners.values()].filter((r) => r.scope === scope && (!name || lc(r.name) === lc(name)));
      const { items, link } = page(req, all);
      return json(200, { total_count: all.length, runners: items.map(runnerView) }, link ? { link } : {});
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/${SCOPE}/actions/runners/downloads$`),
    operation: "list_runner_downloads",
    handler: (w, req, m, who) => w.scopeAccess(scopeOf(m), who) ?? json(200, w.downloadList(req.baseUrl.replace(/\/api\/v3$/, ""))),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/${SCOPE}/actions/runners/(\\d+)$`),
    operation: "get_runner",
    handler: (w, _req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const r = w.runners.get(Number(m[2]));
      return r && r.scope === scope ? json(200, runnerView(r)) : error(404, "Not Found");
    },
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/${SCOPE}/actions/runners/(\\d+)$`),
    operation: "delete_runner",
    handler: (w, _req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const r = w.runners.get(Number(m[2]));
      if (!r || r.scope !== scope) return error(404, "Not Found");
      if (r.busy) return error(422, `Bad request - Runner "${r.name}" is still running a job"`);
      w.runners.delete(r.id);
      return json(204, null);
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^/${SCOPE}/actions/runners/registration-token$`),
    operation: "create_registration_token",
    handler: (w, _req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const token = randomToken("A").toUpperCase().slice(0, 29);
      const expiresAt = w.now() + TOKEN_TTL_MS;
      w.registrationTokens.set(token, { scope, expiresAt });
      w.issuedRegistrationTokens.push(token);
      return json(201, { token, expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, ".000+00:00") });
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^/${SCOPE}/actions/runners/generate-jitconfig$`),
    operation: "generate_jit_config",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const body = (req.body ?? {}) as { name?: unknown; runner_group_id?: unknown; labels?: unknown; work_folder?: unknown };
      if (typeof body.name !== "string" || !body.name) return validationFailed("name", "name is required");
      if (typeof body.runner_group_id !== "number") return validationFailed("runner_group_id", "runner_group_id is required");
      if (
        !Array.isArray(body.labels) ||
        body.labels.length < 1 ||
        body.labels.length > 100 ||
        !body.labels.every((l) => typeof l === "string")
      ) {
        return validationFailed("labels", "labels must have 1 to 100 entries");
      }
      const groups = scope.startsWith("repos/") ? [{ id: 1, name: "Default", default: true }] : w.groupsOf(scope);
      if (!groups.some((g) => g.id === body.runner_group_id)) return error(404, "Not Found");
      if ([...w.runners.values()].some((r) => r.scope === scope && lc(r.name) === lc(body.name as string))) {
        return error(409, "Already exists - A runner with the name already exists.");
      }
      const { runner, encoded } = w.issueJitRunner({
        scope,
        name: body.name,
        labels: body.labels as string[],
        runnerGroupId: body.runner_group_id,
        serverUrl: req.baseUrl.replace(/\/api\/v3$/, ""),
        workFolder: typeof body.work_folder === "string" ? body.work_folder : "_work",
      });
      return json(201, { runner: runnerView(runner), encoded_jit_config: encoded });
    },
  },
  {
    method: "GET",
    pattern: /^\/(orgs\/[^/]+|enterprises\/[^/]+)\/actions\/runner-groups$/,
    operation: "list_runner_groups",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const all = w.groupsOf(scope).map((g) => runnerGroupView(scope, g, req.baseUrl));
      const { items, link } = page(req, all);
      return json(200, { total_count: all.length, runner_groups: items }, link ? { link } : {});
    },
  },
  {
    method: "GET",
    pattern: /^\/repos\/([^/]+\/[^/]+)\/actions\/jobs\/(\d+)$/,
    operation: "get_job",
    handler: (w, req, m, who) => {
      const repo = lc(decodeURIComponent(m[1]!));
      const denied = w.scopeAccess(`repos/${repo}`, who);
      if (denied) return denied;
      const j = w.jobs.get(Number(m[2]));
      if (!j || j.repository !== repo) return error(404, "Not Found");
      return json(200, jobView(j, repo, req.baseUrl));
    },
  },
  {
    method: "GET",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks$/,
    operation: "list_hooks",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const all = [...w.hooks.values()].filter((h) => h.scope === scope).map((h) => hookView(h, req.baseUrl));
      const { items, link } = page(req, all);
      return json(200, items, link ? { link } : {});
    },
  },
  {
    method: "POST",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks$/,
    operation: "create_hook",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const body = (req.body ?? {}) as { name?: unknown; config?: Record<string, unknown>; events?: unknown; active?: unknown };
      const url = body.config?.url;
      if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
        return error(422, "Validation Failed", {
          errors: [{ resource: "Hook", code: "custom", message: "Config must contain URL for webhooks" }],
        });
      }
      if (scope.startsWith("orgs/") && body.name !== "web") {
        return error(422, "Validation Failed", {
          errors: [{ resource: "Hook", code: "custom", field: "name", message: "Name must be web" }],
        });
      }
      if ([...w.hooks.values()].some((h) => h.scope === scope && h.config.url === url)) {
        return error(422, "Validation Failed", {
          errors: [{ resource: "Hook", code: "custom", message: "Hook already exists on this repository" }],
        });
      }
      const id = w.newId();
      const t = iso(w.now());
      const hook: FakeHook = {
        id,
        scope,
        name: "web",
        active: body.active === undefined ? true : Boolean(body.active),
        events: Array.isArray(body.events) ? (body.events as string[]) : ["push"],
        config: {
          url,
          content_type: String(body.config?.content_type ?? "form"),
          insecure_ssl: String(body.config?.insecure_ssl ?? "0"),
          ...(typeof body.config?.secret === "string" && body.config.secret ? { secret: body.config.secret } : {}),
        },
        created_at: t,
        updated_at: t,
      };
      w.hooks.set(id, hook);
      return json(201, hookView(hook, req.baseUrl), { location: `${req.baseUrl}/${scope}/hooks/${id}` });
    },
  },
  {
    method: "GET",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks\/(\d+)$/,
    operation: "get_hook",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const h = w.hooks.get(Number(m[2]));
      return h && h.scope === scope ? json(200, hookView(h, req.baseUrl)) : error(404, "Not Found");
    },
  },
  {
    method: "PATCH",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks\/(\d+)$/,
    operation: "update_hook",
    handler: (w, req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const h = w.hooks.get(Number(m[2]));
      if (!h || h.scope !== scope) return error(404, "Not Found");
      const body = (req.body ?? {}) as { config?: Record<string, unknown>; events?: unknown; active?: unknown };
      if (body.config) {
        const url = body.config.url ?? h.config.url;
        if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
          return error(422, "Validation Failed", {
            errors: [{ resource: "Hook", code: "custom", message: "Config must contain URL for webhooks" }],
          });
        }
        h.config = {
          url,
          content_type: String(body.config.content_type ?? h.config.content_type),
          insecure_ssl: String(body.config.insecure_ssl ?? h.config.insecure_ssl),
          ...(typeof body.config.secret === "string"
            ? body.config.secret
              ? { secret: body.config.secret }
              : {}
            : h.config.secret
              ? { secret: h.config.secret }
              : {}),
        };
      }
      if (Array.isArray(body.events)) h.events = body.events as string[];
      if (body.active !== undefined) h.active = Boolean(body.active);
      h.updated_at = iso(w.now());
      return json(200, hookView(h, req.baseUrl));
    },
  },
  {
    method: "DELETE",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks\/(\d+)$/,
    operation: "delete_hook",
    handler: (w, _req, m, who) => {
      const scope = scopeOf(m);
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const h = w.hooks.get(Number(m[2]));
      if (!h || h.scope !== scope) return error(404, "Not Found");
      w.hooks.delete(h.id);
      return json(204, null);
    },
  },
];

const ROUTES: Route[] = [...routes, ...appRestRoutes, ...APP_READ_ROUTES, ...DELIVERY_ROUTES, ...ACTIONS_RUN_ROUTES];

/** The REST operations the fake implements (for the contract test). */
export const FAKE_OPERATIONS = ROUTES.map((r) => ({ method: r.method, pattern: r.pattern, operation: r.operation }));
