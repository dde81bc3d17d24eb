import { Hono } from "hono";
import { overview } from "../../db/dashboard/overview-queries";
import { mapLimit } from "../../lib/map-limit";
import { pendingUsageRows } from "../../lib/usage-tally";
import type { ScaleSetStatus } from "../../scaleset/object/status-types";
import { scaleSetObject } from "../../scaleset/stub";
import { monthOf, usageReport } from "../../usage/usage-report";
import { DashboardCharts } from "../charts/dashboard-charts";
import { EntitiesTable } from "../entities-table";
import { duration, when } from "../format";
import type { UiEnv } from "../session-middleware";
import { UsageSection } from "../usage-table";
import { Badge, Page } from "../views";

/** Scale sets whose object is asked for its status per overview render; more are shown without it. */
const STATUS_FAN_OUT = 50;
const STATUS_CONCURRENCY = 8;

/** Every scale set with its runner counts and last reconcile, then entities with their credentials and pools, credentials' and providers' health. */
export const overviewRoutes = new Hono<UiEnv>().get("/", async (c) => {
  const asked = Date.now();
  const o = await overview(c.env.DB, asked);
  const statuses = await mapLimit(o.scaleSets.slice(0, STATUS_FAN_OUT), STATUS_CONCURRENCY, (s) =>
    scaleSetObject(c.env, s.id)
      .status(s.id)
      .catch(() => null as ScaleSetStatus | null),
  );
  const now = Date.now();
  // The month D1 holds, with what this isolate counted and has not written yet (as GET /api/v1/usage).
  const month = monthOf(asked);
  const usage = usageReport([...o.usage, ...pendingUsageRows(month.to)], month.month, asked);
  return c.html(
    <Page title="Overview" csrf={c.get("csrf")}>
      <h1>Overview</h1>
      {o.unmatchedJobs > 0 && (
        <p class="flash bad">
          {`${o.unmatchedJobs} queued job(s) match no scale set. `}
          <a href="/ui/jobs?unmatched=true">See them</a>
        </p>
      )}
      <DashboardCharts waits={o.queueWaits} samples={o.samples} now={now} scope="all scale sets" />
      <UsageSection report={usage} plan={c.env.CLOUDFLARE_PLAN} />
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
          {o.scaleSets.length === 0 && (
            <tr>
              <td colspan={13} class="mut">
                No scale sets yet: <a href="/ui/setup">set up</a> GitHub, a cloud and a first scale set.
              </td>
            </tr>
          )}
          {o.scaleSets.map((s, i) => {
            const n = o.instanceCounts.get(s.id);
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
                <td class="num">{String(n?.live ?? 0)}</td>
                <td class="num">{String(n?.idle ?? 0)}</td>
                <td class="num">{String(n?.busy ?? 0)}</td>
                <td class="num">{String(n?.starting ?? 0)}</td>
                <td class="num">{String(o.queuedJobs.get(s.id) ?? 0)}</td>
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
      {o.scaleSets.length > STATUS_FAN_OUT && <p class="mut small">{`Object status shown for the first ${STATUS_FAN_OUT} scale sets.`}</p>}

      <h2>Repositories, organizations and enterprises</h2>
      <p class="mut small" id="recovery-last-pass">
        {o.recovery.lastPassAt === null
          ? "Delivery recovery has not run yet: GitHub never sends a failed webhook delivery again, and recovery finds them (docs/github.md, Lost deliveries)."
          : `Delivery recovery last looked for deliveries GitHub could not make ${duration(now - o.recovery.lastPassAt)} ago.`}
      </p>
      <EntitiesTable entities={o.entities} credentials={new Map(o.credentials.map((cr) => [cr.id, cr]))} recovery={o.recovery} now={now} />

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
          {o.credentials.map((cr) => (
            <tr>
              <td>{cr.name}</td>
              <td>{cr.endpoint_name}</td>
              <td>{cr.auth_type}</td>
              <td>
                <Badge v={cr.health ?? "ok"} />
                {cr.blocked_until && cr.blocked_until > now ? (
                  <span class="badge bad">{`rate limited ${duration(cr.blocked_until - now)}`}</span>
                ) : null}
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
          {o.providers.map((p) => {
            const t = o.shimCalls.get(p.name) ?? { calls: 0, errors: 0 };
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
