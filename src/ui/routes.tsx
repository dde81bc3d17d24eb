import { Hono, type Context } from "hono";
import { mapLimit } from "../lib/map-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv, Env } from "../env";
import { constantTimeEqual } from "../crypto/constant-time";
import { clientKey, countLoginAttempt } from "../http/auth-throttle";
import { errorResponse } from "../http/errors";
import { logEvent } from "../observability/log";
import type { ScaleSetStatus } from "../scaleset/scaleset-object";
import { scaleSetObject } from "../scaleset/stub";
import { checkCsrf, createSession, csrfToken, readSession, SESSION_COOKIE, SESSION_TTL_MS, type Session } from "./session";
import { clip, duration, labelList, when } from "./format";
import { Action, Badge, Flash, LoginPage, Page } from "./views";

/**
 * The dashboard at /ui: server-rendered pages over D1 and the scale set objects' status, and
 * POST forms for the few actions an operator takes while jobs wait. Actions go through the
 * admin API itself (dispatched in-process), so they validate, nudge and log exactly as the API does.
 */

export type ApiDispatch = (req: Request, env: Env, ctx: ExecutionContext | undefined) => Response | Promise<Response>;

type UiEnv = AppEnv & { Variables: { session: Session; csrf: string } };
type C = Context<UiEnv>;

/** Scale sets whose object is asked for its status per overview render; more are shown without it. */
const STATUS_FAN_OUT = 50;
const STATUS_CONCURRENCY = 8;

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Not no-referrer: with it Chromium sends `Origin: null` on our own form posts.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

const FLASH: Record<string, string> = {
  paused: "Scale set paused: it creates nothing and keeps cleaning up.",
  resumed: "Scale set resumed.",
  reconciled: "Reconciled.",
  reset: "Create backoff lifted.",
  deleting: "Instance sent to deletion.",
  force_deleting: "Instance sent to forced deletion (provider errors are ignored).",
};

function executionCtx(c: C): ExecutionContext | undefined {
  try {
    return c.executionCtx as ExecutionContext;
  } catch {
    return undefined;
  }
}


function publicOrigin(url: string | undefined): string | null {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
}

const rows = <T,>(r: D1Result | undefined) => (r?.results ?? []) as T[];

export function createUiRoutes(dispatch: ApiDispatch) {
  const ui = new Hono<UiEnv>();

  ui.use("*", async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
  });

  ui.get("/login", (c) => c.html(<LoginPage />));

  ui.post("/login", async (c) => {
    // Every attempt counts, and a client over the limit is refused before its token is read.
    const client = clientKey(c.req.header("cf-connecting-ip"));
    const throttled = client && (await countLoginAttempt(c.env, client));
    if (throttled) {
      // A browser gets the page back; anything else (a script) gets the API's Error shape.
      if (!/\btext\/html\b/.test(c.req.header("accept") ?? "")) return errorResponse(c, throttled);
      return c.html(<LoginPage error="Too many login attempts from this address. Wait a minute and try again." />, 429, throttled.headers);
    }
    const expected = c.env.ADMIN_TOKEN;
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    if (!expected || !token || !(await constantTimeEqual(token, expected))) {
      logEvent({ event: "ui_login_failed" });
      return c.html(<LoginPage error="That is not the admin token." />, 401);
    }
    const { cookie } = await createSession(expected);
    setCookie(c, SESSION_COOKIE, cookie, { httpOnly: true, secure: true, sameSite: "Strict", path: "/ui", maxAge: SESSION_TTL_MS / 1000 });
    logEvent({ event: "ui_login" });
    return c.redirect("/ui", 303);
  });

  // Everything else needs a session; POSTs also need the session's CSRF token.
  ui.use("*", async (c, next) => {
    const expected = c.env.ADMIN_TOKEN;
    const session = expected ? await readSession(expected, getCookie(c, SESSION_COOKIE)) : null;
    if (!session) {
      if (c.req.method === "GET" || c.req.method === "HEAD") return c.redirect("/ui/login", 303);
      return c.html(
        <Page title="Not logged in">
          <p class="flash bad">Not logged in (or the session expired).</p>
          <a href="/ui/login">Log in</a>
        </Page>,
        401,
      );
    }
    c.set("session", session);
    c.set("csrf", await csrfToken(expected, session));
    if (c.req.method === "POST") {
      const origin = c.req.header("origin");
      const form = await c.req.parseBody();
      // Our own pages post from the request's origin, or from PUBLIC_URL's when a proxy (wrangler dev) rewrites the URL.
      const sameOrigin = !origin || origin === new URL(c.req.url).origin || origin === publicOrigin(c.env.PUBLIC_URL);
      const tokenOk = await checkCsrf(expected, session, form._csrf);
      if (!sameOrigin || !tokenOk) {
        const why = !tokenOk ? "missing or invalid CSRF token" : "cross-origin form";
        logEvent({ event: "ui_csrf_refused", path: c.req.path, origin: origin ?? null, error: why });
        return c.html(
          <Page title="Refused" csrf={c.get("csrf")}>
            <p class="flash bad">{`Refused (${why}): this form did not carry a valid CSRF token from this dashboard. Reload the page and try again.`}</p>
          </Page>,
          403,
        );
      }
    }
    await next();
  });

  ui.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/ui", secure: true, httpOnly: true, sameSite: "Strict" });
    return c.redirect("/ui/login", 303);
  });

  /** Calls the admin API in-process with the admin token. */
  async function api(c: C, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const req = new Request(new URL(`/api/v1${path}`, c.req.url), {
      method,
      headers: { authorization: `Bearer ${c.env.ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const res = await dispatch(req, c.env, executionCtx(c));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // keep text
    }
    return { status: res.status, body: parsed };
  }

  function afterAction(c: C, r: { status: number; body: any }, back: string, flash: string) {
    if (r.status >= 200 && r.status < 300) return c.redirect(`${back}${back.includes("?") ? "&" : "?"}done=${flash}`, 303);
    const details = r.body && typeof r.body === "object" ? JSON.stringify(r.body.details ?? "") : "";
    return c.html(
      <Page title="Action failed" csrf={c.get("csrf")}>
        <p class="flash bad">
          {`The action failed (${r.status}): ${r.body?.error ?? r.body}`} {details && details !== '""' ? details : ""}
        </p>
        <a href={back}>Back</a>
      </Page>,
      r.status >= 400 && r.status < 600 ? (r.status as 400) : 500,
    );
  }

  const flashOf = (c: C) => FLASH[c.req.query("done") ?? ""] ?? null;

  // ---- overview --------------------------------------------------------------------------

  ui.get("/", async (c) => {
    const db = c.env.DB;
    const [sets, counts, queued, creds, provs, calls, unmatched] = await db.batch([
      db.prepare(
        `SELECT s.id, s.name, s.enabled, s.max_runners, s.min_idle_runners, s.labels, p.name AS provider,
                e.kind, e.owner || CASE WHEN e.name = '' THEN '' ELSE '/' || e.name END AS entity
         FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id ORDER BY entity, s.name`,
      ),
      db.prepare(
        `SELECT scale_set_id,
                COUNT(*) AS live,
                SUM(CASE WHEN status = 'running' AND runner_status IN ('idle', 'online') AND job_id IS NULL THEN 1 ELSE 0 END) AS idle,
                SUM(CASE WHEN runner_status = 'active' OR job_id IS NOT NULL THEN 1 ELSE 0 END) AS busy,
                SUM(CASE WHEN status IN ('pending_create', 'creating') OR (status = 'running' AND runner_status IN ('pending', 'installing')) THEN 1 ELSE 0 END) AS starting,
                SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END) AS errored
         FROM instances WHERE status != 'deleted' GROUP BY scale_set_id`,
      ),
      db.prepare(`SELECT scale_set_id, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'waiting') AND scale_set_id IS NOT NULL GROUP BY 1`),
      db.prepare(
        `SELECT c.name, c.endpoint_name, c.auth_type, s.health, s.failure_reason, s.rate_limit_limit, s.rate_limit_remaining, s.rate_limit_reset_at, s.blocked_until
         FROM github_credentials c LEFT JOIN github_credential_state s ON s.credential_id = c.id ORDER BY c.name`,
      ),
      db.prepare(
        `SELECT p.name, p.url, (SELECT COUNT(*) FROM scale_sets s WHERE s.provider_id = p.id) AS scale_sets,
                (SELECT COUNT(*) FROM instances i JOIN scale_sets s ON s.id = i.scale_set_id WHERE s.provider_id = p.id AND i.status = 'error') AS errored
         FROM providers p ORDER BY p.name`,
      ),
      db.prepare(`SELECT name, value FROM counters WHERE name LIKE 'shim.%'`),
      db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE scale_set_id IS NULL AND status IN ('queued', 'waiting')`),
    ]);
    const scaleSets = rows<Record<string, any>>(sets);
    const byId = new Map(rows<Record<string, any>>(counts).map((r) => [r.scale_set_id, r]));
    const queuedBy = new Map(rows<{ scale_set_id: string; n: number }>(queued).map((r) => [r.scale_set_id, r.n]));
    const statuses = await mapLimit(scaleSets.slice(0, STATUS_FAN_OUT), STATUS_CONCURRENCY, (s) =>
      scaleSetObject(c.env, s.id)
        .status(s.id)
        .catch(() => null as ScaleSetStatus | null),
    );
    const shimCalls = new Map<string, { calls: number; errors: number }>();
    for (const r of rows<{ name: string; value: number }>(calls)) {
      const [family, , provider = ""] = r.name.split("|");
      const t = shimCalls.get(provider) ?? { calls: 0, errors: 0 };
      if (family === "shim.calls") t.calls += r.value;
      if (family === "shim.errors") t.errors += r.value;
      shimCalls.set(provider, t);
    }
    const now = Date.now();
    const unmatchedCount = rows<{ n: number }>(unmatched)[0]?.n ?? 0;
    return c.html(
      <Page title="Overview" csrf={c.get("csrf")}>
        <h1>Overview</h1>
        {unmatchedCount > 0 && (
          <p class="flash bad">
            {`${unmatchedCount} queued job(s) match no scale set. `}
            <a href="/ui/jobs?unmatched=true">See them</a>
          </p>
        )}
        <h2>Scale sets</h2>
        <table id="scalesets">
          <thead>
            <tr>
              <th>Scale set</th>
              <th>Entity</th>
              <th>Provider</th>
              <th>State</th>
              <th class="num">Desired</th>
              <th class="num">Live</th>
              <th class="num">Idle</th>
              <th class="num">Busy</th>
              <th class="num">Starting</th>
              <th class="num">Queued jobs</th>
              <th class="num">Max</th>
              <th>Backoff</th>
              <th>Last reconcile</th>
            </tr>
          </thead>
          <tbody>
            {scaleSets.length === 0 && (
              <tr>
                <td colspan={13} class="mut">
                  No scale sets yet: create one through the admin API.
                </td>
              </tr>
            )}
            {scaleSets.map((s, i) => {
              const n = byId.get(s.id) ?? {};
              const st = statuses[i] ?? null;
              const lr = st?.last_reconcile ?? null;
              const b = st?.create_backoff;
              const backoff = !st
                ? "—"
                : b?.hard_limited_at
                  ? `hard limit since ${when(Date.parse(b.hard_limited_at))}`
                  : b?.create_allowed_at && Date.parse(b.create_allowed_at) > now
                    ? `${b.failures} failure(s); creates again in ${duration(Date.parse(b.create_allowed_at) - now)}`
                    : "none";
              return (
                <tr data-scaleset={s.id}>
                  <td>
                    <a href={`/ui/scalesets/${s.id}`}>{s.name}</a>
                  </td>
                  <td>{`${s.kind}: ${s.entity}`}</td>
                  <td>{s.provider}</td>
                  <td>{s.enabled ? <span class="badge ok">enabled</span> : <span class="badge warn">paused</span>}</td>
                  <td class="num">{lr?.summary ? String(lr.summary.desired) : "—"}</td>
                  <td class="num">{String(n.live ?? 0)}</td>
                  <td class="num">{String(n.idle ?? 0)}</td>
                  <td class="num">{String(n.busy ?? 0)}</td>
                  <td class="num">{String(n.starting ?? 0)}</td>
                  <td class="num">{String(queuedBy.get(s.id) ?? 0)}</td>
                  <td class="num">{String(s.max_runners)}</td>
                  <td class={backoff === "none" || backoff === "—" ? "mut" : "bad"}>{backoff}</td>
                  <td class="small">
                    {lr ? `${duration(now - lr.at)} ago, ${lr.durationMs} ms` : "never"}
                    {lr?.error ? <div class="bad">{lr.error}</div> : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {scaleSets.length > STATUS_FAN_OUT && <p class="mut small">{`Object status shown for the first ${STATUS_FAN_OUT} scale sets.`}</p>}

        <h2>GitHub credentials</h2>
        <table id="credentials">
          <thead>
            <tr>
              <th>Name</th>
              <th>Endpoint</th>
              <th>Kind</th>
              <th>Health</th>
              <th class="num">Rate limit left</th>
              <th>Resets</th>
              <th>Problem</th>
            </tr>
          </thead>
          <tbody>
            {rows<Record<string, any>>(creds).map((cr) => (
              <tr>
                <td>{cr.name}</td>
                <td>{cr.endpoint_name}</td>
                <td>{cr.auth_type}</td>
                <td>
                  <Badge v={cr.health ?? "ok"} />
                  {cr.blocked_until && cr.blocked_until > now ? <span class="badge bad">{`rate limited ${duration(cr.blocked_until - now)}`}</span> : null}
                </td>
                <td class="num">{cr.rate_limit_limit == null ? "—" : `${cr.rate_limit_remaining} / ${cr.rate_limit_limit}`}</td>
                <td>{when(cr.rate_limit_reset_at)}</td>
                <td class="fault">{cr.failure_reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>

        <h2>Providers</h2>
        <table id="providers">
          <thead>
            <tr>
              <th>Name</th>
              <th>URL</th>
              <th class="num">Scale sets</th>
              <th class="num">Shim calls</th>
              <th class="num">Failed calls</th>
              <th class="num">Instances in error</th>
            </tr>
          </thead>
          <tbody>
            {rows<Record<string, any>>(provs).map((p) => {
              const t = shimCalls.get(p.name) ?? { calls: 0, errors: 0 };
              return (
                <tr>
                  <td>{p.name}</td>
                  <td class="small">{p.url}</td>
                  <td class="num">{String(p.scale_sets)}</td>
                  <td class="num">{String(t.calls)}</td>
                  <td class={t.errors ? "num bad" : "num"}>{String(t.errors)}</td>
                  <td class={p.errored ? "num bad" : "num"}>{String(p.errored)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </Page>,
    );
  });

  // ---- one scale set ---------------------------------------------------------------------

  ui.get("/scalesets/:id", async (c) => {
    const id = c.req.param("id");
    const db = c.env.DB;
    const [sets, insts, trans, jobs] = await db.batch([
      db.prepare(
        `SELECT s.*, p.name AS provider, e.kind, e.owner || CASE WHEN e.name = '' THEN '' ELSE '/' || e.name END AS entity
         FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id WHERE s.id = ?`,
      ).bind(id),
      db.prepare(
        `SELECT * FROM (SELECT * FROM instances WHERE scale_set_id = ? AND status != 'deleted'
         UNION ALL SELECT * FROM (SELECT * FROM instances WHERE scale_set_id = ? AND status = 'deleted' ORDER BY status_changed_at DESC LIMIT 20))
         ORDER BY status = 'deleted', created_at`,
      ).bind(id, id),
      db.prepare(
        `SELECT t.at, t.field, t.from_value, t.to_value, t.reason, i.name FROM instance_transitions t JOIN instances i ON i.id = t.instance_id
         WHERE i.scale_set_id = ? ORDER BY t.id DESC LIMIT 50`,
      ).bind(id),
      db.prepare(`SELECT * FROM jobs WHERE scale_set_id = ? ORDER BY id DESC LIMIT 50`).bind(id),
    ]);
    const s = rows<Record<string, any>>(sets)[0];
    if (!s) return c.html(<Page title="Not found" csrf={c.get("csrf")}><p class="flash bad">No such scale set.</p></Page>, 404);
    const st = await scaleSetObject(c.env, id)
      .status(id)
      .catch(() => null);
    const csrf = c.get("csrf");
    const now = Date.now();
    const back = `/ui/scalesets/${id}`;
    const lr = st?.last_reconcile;
    return c.html(
      <Page title={s.name} csrf={csrf}>
        <h1>
          {`Scale set ${s.name} `}
          {s.enabled ? <span class="badge ok">enabled</span> : <span class="badge warn">paused</span>}
        </h1>
        <Flash message={flashOf(c)} />
        <div class="actions">
          {s.enabled ? (
            <Action action={`${back}/enabled`} csrf={csrf} label="Pause" fields={{ enabled: "false" }} />
          ) : (
            <Action action={`${back}/enabled`} csrf={csrf} label="Resume" fields={{ enabled: "true" }} />
          )}
          <Action action={`${back}/reconcile`} csrf={csrf} label="Reconcile now" />
          {st && (st.create_backoff.failures > 0 || st.create_backoff.hard_limited_at) ? (
            <Action action={`${back}/reset`} csrf={csrf} label="Lift create backoff" />
          ) : null}
        </div>
        <dl class="kv">
          <dt>Entity</dt>
          <dd>{`${s.kind}: ${s.entity}`}</dd>
          <dt>Provider</dt>
          <dd>{s.provider}</dd>
          <dt>Labels</dt>
          <dd>{(JSON.parse(s.labels ?? "[]") as string[]).join(", ")}</dd>
          <dt>Runners</dt>
          <dd>{`min idle ${s.min_idle_runners}, max ${s.max_runners}; ${s.image} on ${s.flavor} (${s.os_type}/${s.os_arch})`}</dd>
          <dt>Last plan</dt>
          <dd>
            {lr?.summary
              ? `desired ${lr.summary.desired}, live ${lr.summary.live}, idle ${lr.summary.idle}, busy ${lr.summary.busy}, creating ${lr.summary.creating}, deleting ${lr.summary.deleting}, queued ${lr.summary.queued}${lr.summary.blocked ? `, blocked: ${lr.summary.blocked}` : ""}`
              : "not reconciled yet"}
          </dd>
          <dt>Last reconcile</dt>
          <dd>{lr ? `${when(lr.at)} (${duration(now - lr.at)} ago), ${lr.durationMs} ms, ${lr.d1RoundTrips} D1 round trips${lr.error ? `, error: ${lr.error}` : ""}` : "—"}</dd>
          <dt>Create backoff</dt>
          <dd>
            {st
              ? st.create_backoff.hard_limited_at
                ? `hard limit since ${st.create_backoff.hard_limited_at} (${st.create_backoff.failures} failures)`
                : st.create_backoff.failures
                  ? `${st.create_backoff.failures} failure(s), creates allowed at ${st.create_backoff.create_allowed_at ?? "—"}`
                  : "none"
              : "—"}
          </dd>
          <dt>Next wake</dt>
          <dd>{st?.next_wake_at ?? "—"}</dd>
        </dl>

        <h2>Instances</h2>
        <table id="instances">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Runner</th>
              <th>Age</th>
              <th>In status for</th>
              <th>Job</th>
              <th>Last fault / message</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {rows<Record<string, any>>(insts).length === 0 && (
              <tr>
                <td colspan={8} class="mut">
                  No instances.
                </td>
              </tr>
            )}
            {rows<Record<string, any>>(insts).map((i) => (
              <tr data-instance={i.name}>
                <td>{i.name}</td>
                <td>
                  <Badge v={i.status} />
                </td>
                <td>
                  <Badge v={i.runner_status} />
                </td>
                <td>{duration(now - i.created_at)}</td>
                <td>{duration(now - i.status_changed_at)}</td>
                <td>{i.job_id === null ? "—" : String(i.job_id)}</td>
                <td class="fault">{i.provider_fault ?? i.status_message ?? ""}</td>
                <td>
                  {i.status !== "deleted" && (
                    <div class="actions">
                      {i.status !== "deleting" && i.status !== "pending_delete" && i.status !== "pending_force_delete" && (
                        <Action action={`/ui/instances/${encodeURIComponent(i.name)}/delete`} csrf={csrf} label="Delete" fields={{ back }} />
                      )}
                      {i.status !== "pending_force_delete" && (
                        <Action action={`/ui/instances/${encodeURIComponent(i.name)}/delete`} csrf={csrf} label="Force delete" danger fields={{ back, force: "true" }} />
                      )}
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>

        <h2>Recent transitions</h2>
        <table id="transitions">
          <thead>
            <tr>
              <th>At</th>
              <th>Instance</th>
              <th>Field</th>
              <th>From → to</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {rows<Record<string, any>>(trans).map((t) => (
              <tr>
                <td class="small">{when(t.at)}</td>
                <td>{t.name}</td>
                <td class="mut">{t.field}</td>
                <td>{`${t.from_value ?? "∅"} → ${t.to_value}`}</td>
                <td class="fault">{t.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>

        <h2>Jobs</h2>
        <JobsTable jobs={rows<Record<string, any>>(jobs)} now={now} names={new Map([[id, s.name]])} />
      </Page>,
    );
  });

  // ---- jobs ------------------------------------------------------------------------------

  ui.get("/jobs", async (c) => {
    const unmatched = c.req.query("unmatched") === "true";
    const db = c.env.DB;
    const [jobs, sets] = await db.batch([
      db.prepare(`SELECT * FROM jobs ${unmatched ? "WHERE scale_set_id IS NULL" : ""} ORDER BY id DESC LIMIT 200`),
      db.prepare(`SELECT id, name FROM scale_sets`),
    ]);
    const names = new Map(rows<{ id: string; name: string }>(sets).map((s) => [s.id, s.name]));
    return c.html(
      <Page title="Jobs" csrf={c.get("csrf")}>
        <h1>{unmatched ? "Unmatched jobs" : "Jobs"}</h1>
        <p class="mut small">
          {unmatched ? "Jobs whose labels no enabled scale set serves. " : "The 200 newest jobs. "}
          {unmatched ? <a href="/ui/jobs">All jobs</a> : <a href="/ui/jobs?unmatched=true">Only unmatched</a>}
        </p>
        <JobsTable jobs={rows<Record<string, any>>(jobs)} now={Date.now()} names={names} />
      </Page>,
    );
  });

  // ---- actions ---------------------------------------------------------------------------

  ui.post("/scalesets/:id/enabled", async (c) => {
    const id = c.req.param("id");
    const form = await c.req.parseBody();
    const enabled = form.enabled === "true";
    const r = await api(c, "PUT", `/scalesets/${encodeURIComponent(id)}`, { enabled });
    logEvent({ event: "ui_action", action: enabled ? "resume" : "pause", scale_set: id, status: r.status });
    return afterAction(c, r, `/ui/scalesets/${id}`, enabled ? "resumed" : "paused");
  });

  ui.post("/scalesets/:id/reconcile", async (c) => {
    const id = c.req.param("id");
    const r = await api(c, "POST", `/scalesets/${encodeURIComponent(id)}/reconcile`);
    logEvent({ event: "ui_action", action: "reconcile", scale_set: id, status: r.status });
    return afterAction(c, r, `/ui/scalesets/${id}`, "reconciled");
  });

  ui.post("/scalesets/:id/reset", async (c) => {
    const id = c.req.param("id");
    const r = await api(c, "POST", `/scalesets/${encodeURIComponent(id)}/reset`);
    logEvent({ event: "ui_action", action: "reset_backoff", scale_set: id, status: r.status });
    return afterAction(c, r, `/ui/scalesets/${id}`, "reset");
  });

  ui.post("/instances/:name/delete", async (c) => {
    const name = c.req.param("name");
    const form = await c.req.parseBody();
    const force = form.force === "true";
    const back = typeof form.back === "string" && /^\/ui\/scalesets\/[0-9a-f-]{36}$/.test(form.back) ? form.back : "/ui";
    const r = await api(c, "DELETE", `/instances/${encodeURIComponent(name)}${force ? "?force=true" : ""}`);
    logEvent({ event: "ui_action", action: force ? "force_delete" : "delete", instance: name, status: r.status });
    return afterAction(c, r, back, force ? "force_deleting" : "deleting");
  });

  return ui;
}

function JobsTable({ jobs, now, names }: { jobs: Record<string, any>[]; now: number; names: Map<string, string> }) {
  return (
    <table class="jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Name</th>
          <th>Repository</th>
          <th>Labels</th>
          <th>Status</th>
          <th>Scale set</th>
          <th>Queued</th>
          <th class="num">Queued → started</th>
          <th>Runner</th>
        </tr>
      </thead>
      <tbody>
        {jobs.length === 0 && (
          <tr>
            <td colspan={9} class="mut">
              No jobs.
            </td>
          </tr>
        )}
        {jobs.map((j) => {
          const waiting = j.started_at === null && (j.status === "queued" || j.status === "waiting");
          const latency = j.queued_at !== null && j.started_at !== null ? j.started_at - j.queued_at : waiting && j.queued_at !== null ? now - j.queued_at : null;
          return (
            <tr data-job={String(j.id)}>
              <td>{String(j.id)}</td>
              <td>{clip(j.workflow_name ? `${j.workflow_name} / ${j.name}` : j.name)}</td>
              <td>{j.repository}</td>
              <td class="small">{labelList(JSON.parse(j.labels ?? "[]") as string[])}</td>
              <td>
                <Badge v={j.status} />
              </td>
              <td>{j.scale_set_id ? <a href={`/ui/scalesets/${j.scale_set_id}`}>{names.get(j.scale_set_id) ?? j.scale_set_id}</a> : <span class="badge bad">unmatched</span>}</td>
              <td class="small">{when(j.queued_at)}</td>
              <td class={waiting ? "num warn" : "num"}>{latency === null ? "—" : waiting ? `waiting ${duration(latency)}` : duration(latency)}</td>
              <td>{j.runner_name ? clip(j.runner_name, 64) : "—"}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
