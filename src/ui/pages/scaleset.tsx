import { Hono } from "hono";
import { scaleSetPage } from "../../db/dashboard/scaleset-page-queries";
import type { MinIdleScheduleEntry } from "../../db/scaleset/schema";
import type { ScaleSetStatus } from "../../scaleset/object/status-types";
import { scheduleBands } from "../../scaleset/schedule/schedule-bands";
import { scaleSetObject } from "../../scaleset/stub";
import { CHART_WINDOW_MS, DashboardCharts } from "../charts/dashboard-charts";
import { shapeQueueTimes } from "../charts/shape-queue-times";
import { flashMessage } from "../flash";
import { duration, when } from "../format";
import { JobsTable } from "../jobs-table";
import type { UiEnv } from "../session-middleware";
import { ShapeQueueTable } from "../shape-queue-table";
import { boundsText, imagesText, shapeText } from "../shape-text";
import { Action, Badge, Flash, Page } from "../views";

/**
 * One scale set: its settings, its object's last plan and backoff, its instances (with delete
 * buttons), their recent transitions and its jobs; and the buttons to pause, resume, reconcile.
 */
export const scaleSetRoutes = new Hono<UiEnv>().get("/scalesets/:id", async (c) => {
  const id = c.req.param("id");
  const data = await scaleSetPage(c.env.DB, id);
  if (!data)
    return c.html(
      <Page title="Not found" csrf={c.get("csrf")}>
        <p class="flash bad">No such scale set.</p>
      </Page>,
      404,
    );
  const { scaleSet: s, instances, transitions, jobs, queueWaits, samples, shapeWaits } = data;
  const st = await scaleSetObject(c.env, id)
    .status(id)
    .catch(() => null);
  const csrf = c.get("csrf");
  // A read-only user (ACCESS_SCOPE=read) sees no buttons; the API would refuse their actions anyway.
  const canWrite = c.get("principal")?.scope === "admin";
  const now = Date.now();
  const back = `/ui/scalesets/${id}`;
  const lr = st?.last_reconcile;
  return c.html(
    <Page title={s.name} csrf={csrf}>
      <h1>
        {`Scale set ${s.name} `}
        {s.enabled ? <span class="badge ok">enabled</span> : <span class="badge warn">paused</span>}
      </h1>
      <Flash message={flashMessage(c.req.query("done"))} />
      {canWrite ? (
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
          {st?.spend_guard?.holding ? <Action action={`${back}/spend-guard/reset`} csrf={csrf} label="Lift spend guard" /> : null}
        </div>
      ) : (
        <p class="mut small">Read-only: your sign-in may look but not change anything.</p>
      )}
      <dl class="kv">
        <dt>Entity</dt>
        <dd>{`${s.forge === "gitea" && s.kind === "enterprise" ? "instance" : s.kind}: ${s.entity}`}</dd>
        <dt>Forge</dt>
        <dd id="forge">{s.forge}</dd>
        <dt>Intake</dt>
        <dd id="intake">{s.intake}</dd>
        {s.intake === "poll" ? (
          <>
            <dt>Poller</dt>
            <dd id="poller">{pollerText(st?.poller ?? null)}</dd>
          </>
        ) : null}
        <dt>Provider</dt>
        <dd>{s.provider}</dd>
        <dt>Labels</dt>
        <dd>{s.labels.join(", ")}</dd>
        <dt>Runners</dt>
        {s.shape ? (
          <>
            <dd>{`max ${s.max_runners}, one machine per job; its image and flavor chosen for the job's shape (${s.os_type})`}</dd>
            <dt>Shape bounds</dt>
            <dd id="shape-bounds">
              {`${boundsText(s.shape)}; jobs ask with `}
              <code>{`${s.shape.key}=\${{ github.run_id }}/cpu=…`}</code>
            </dd>
            <dt>Images</dt>
            <dd id="shape-images">{imagesText(s.shape)}</dd>
          </>
        ) : (
          <dd>{`min idle ${s.min_idle_runners}, max ${s.max_runners}; ${s.image} on ${s.flavor} (${s.os_type}/${s.os_arch})`}</dd>
        )}
        <dt>Min idle now</dt>
        <dd>{minIdleText(st?.min_idle_schedule ?? null)}</dd>
        <dt>Schedules</dt>
        <dd>{s.schedules.length ? s.schedules.map(scheduleText).join("; ") : "none"}</dd>
        <dt>Last plan</dt>
        <dd>
          {lr?.summary
            ? `desired ${lr.summary.desired}, live ${lr.summary.live}, idle ${lr.summary.idle}, busy ${lr.summary.busy}, creating ${lr.summary.creating}, deleting ${lr.summary.deleting}, queued ${lr.summary.queued}${lr.summary.blocked ? `, blocked: ${lr.summary.blocked}` : ""}`
            : "not reconciled yet"}
        </dd>
        <dt>Last reconcile</dt>
        <dd>
          {lr
            ? `${when(lr.at)} (${duration(now - lr.at)} ago), ${lr.durationMs} ms, ${lr.d1RoundTrips} D1 round trips${lr.subrequests === undefined ? "" : `, ${lr.subrequests} subrequests`}${lr.error ? `, error: ${lr.error}` : ""}`
            : "—"}
        </dd>
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
        <dt>Lifetime</dt>
        <dd>{lifetimeText(s)}</dd>
        <dt>Spend guard</dt>
        <dd id="spend-guard">
          {s.max_machine_hours_per_day === null
            ? "no cap"
            : (st?.spend_guard?.message ?? `${s.max_machine_hours_per_day} machine-hours a day (not reconciled yet)`)}
        </dd>
        <dt>Create pacing</dt>
        <dd>{pacingText(st?.create_pacing ?? null)}</dd>
        <dt>Next wake</dt>
        <dd>{st?.next_wake_at ?? "—"}</dd>
      </dl>

      <DashboardCharts
        waits={queueWaits}
        samples={samples}
        now={now}
        scope={s.name}
        schedule={scheduleBands({
          entries: s.schedules,
          minIdleRunners: s.min_idle_runners,
          // The lead the object planned with last (its boot time); 30 s, its default, before it has.
          leadMs: st?.min_idle_schedule?.prewarm_lead_ms ?? 30_000,
          from: now - CHART_WINDOW_MS,
          to: now,
        })}
      />

      {s.shape ? (
        <>
          <h2>Queue time by shape (last 24 hours)</h2>
          <ShapeQueueTable rows={shapeQueueTimes(shapeWaits)} />
        </>
      ) : null}

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
            <th>Flavor</th>
            <th>Last fault / message</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {instances.length === 0 && (
            <tr>
              <td colspan={9} class="mut">
                No instances.
              </td>
            </tr>
          )}
          {instances.map((i) => (
            <tr data-instance={i.name}>
              <td>{i.name}</td>
              <td>
                <Badge v={i.status} />
              </td>
              <td>
                {i.status === "deleted" ? (
                  // The runner's last report stays on the row; with its machine gone, it runs nowhere.
                  <span class="mut" title={`machine deleted; its runner last reported ${i.runner_status}`}>
                    gone
                  </span>
                ) : (
                  <Badge v={i.runner_status} />
                )}
              </td>
              <td>{duration(now - i.created_at)}</td>
              <td>{duration(now - i.status_changed_at)}</td>
              <td>{i.job_id === null ? "—" : String(i.job_id)}</td>
              {i.shape ? (
                // Why this flavor goes in the tooltip: it is long, and only wanted when the choice surprises.
                <td data-flavor title={i.shape.flavor_reason}>
                  {i.shape.flavor}
                  <div class="small mut">{shapeText(i.shape)}</div>
                </td>
              ) : (
                <td data-flavor>{s.flavor}</td>
              )}
              <td class="fault">{i.provider_fault ?? i.status_message ?? ""}</td>
              <td>
                {canWrite && i.status !== "deleted" && (
                  <div class="actions">
                    {i.status !== "deleting" && i.status !== "pending_delete" && i.status !== "pending_force_delete" && (
                      <Action action={`/ui/instances/${encodeURIComponent(i.name)}/delete`} csrf={csrf} label="Delete" fields={{ back }} />
                    )}
                    {i.status !== "pending_force_delete" && (
                      <Action
                        action={`/ui/instances/${encodeURIComponent(i.name)}/delete`}
                        csrf={csrf}
                        label="Force delete"
                        danger
                        fields={{ back, force: "true" }}
                      />
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
          {transitions.map((t) => (
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
      <JobsTable jobs={jobs} now={now} names={new Map([[id, s.name]])} />
    </Page>,
  );
});

/** The lifetime watchdog's settings in a sentence. */
function lifetimeText(s: { max_runner_lifetime_seconds: number; runner_lifetime_hard_cap_seconds: number | null }): string {
  const cap = s.runner_lifetime_hard_cap_seconds;
  const soft =
    s.max_runner_lifetime_seconds === 0
      ? "machines are never deleted for their age"
      : `machines go after ${duration(s.max_runner_lifetime_seconds * 1000)} unless their runner is on a job`;
  return cap === null ? `${soft}; no hard cap` : `${soft}; hard cap ${duration(cap * 1000)}, even on a job`;
}

/** The Forgejo poller in a sentence: when it polled and polls next, what it saw and holds, and its backoff. */
export function pollerText(p: ScaleSetStatus["poller"]): string {
  if (!p) return "— (not polled yet)";
  const last = p.last_poll_at ? `last poll ${when(Date.parse(p.last_poll_at))}` : "not polled yet";
  const next = p.next_poll_at ? `next ${when(Date.parse(p.next_poll_at))}` : "not polling (paused)";
  const seen = p.waiting_jobs_seen === null ? "" : `; ${p.waiting_jobs_seen} waiting job(s) seen`;
  const failing = p.failures
    ? `; ${p.failures} failed poll(s), retry at ${p.retry_at ? when(Date.parse(p.retry_at)) : "—"}: ${p.last_error ?? "?"}`
    : "";
  return `${last}, ${next}${seen}; ${p.held_jobs} job(s) held${failing}`;
}

/** On-boot create pacing in a sentence: what it holds back, the boot time it leads by, and what the pool mints. */
function pacingText(p: ScaleSetStatus["create_pacing"]): string {
  if (!p) return "—";
  const boot = `boot time ${Math.round(p.boot_time_ms / 1000)} s (${p.boot_time_source === "observed" ? `p90 of ${p.boot_samples} boots` : p.boot_time_source})`;
  const pool = `the pool mints ${p.jit_per_minute} JIT configs a minute (${p.credentials_usable} of ${p.credentials} credentials usable)`;
  const held = p.holding_back
    ? `holding back ${p.wanted - p.allowed} of ${p.wanted} creates until ${p.next_create_at ?? "—"}; ${p.unminted} machines waiting for their runner`
    : "not holding back";
  return `${held}; ${boot}; ${pool}`;
}

/** "min idle now N because of schedule X until T": what the last pass planned with, and why. */
function minIdleText(m: ScaleSetStatus["min_idle_schedule"]): string {
  if (!m) return "— (not reconciled yet)";
  const until = m.until ? ` until ${when(Date.parse(m.until))}` : "";
  if (m.entry === null) return `${m.min_idle} (the scale set's own)${until ? `${until}, when a schedule entry takes effect` : ""}`;
  const since = m.since ? `, since ${when(Date.parse(m.since))}` : "";
  return `${m.min_idle} because of schedule ${m.entry}${until}${since}`;
}

/** One schedule entry: name, cron and zone, what it sets, and whether it starts a boot time early. */
const scheduleText = (e: MinIdleScheduleEntry) =>
  `${e.name}: ${e.cron} (${e.timezone}) → min idle ${e.min_idle_runners}${e.prewarm ? ", pre-warmed" : ""}`;
