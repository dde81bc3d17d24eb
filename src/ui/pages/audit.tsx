import { Hono } from "hono";
import { REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE } from "../../audit/refusal";
import { type AuditFilter, auditPage } from "../../db/access/audit-store";
import { createDb } from "../../db/client";
import { clip, when } from "../format";
import type { UiEnv } from "../session-middleware";
import { Page } from "../views";

const PAGE_SIZE = 100;
const METHODS = ["POST", "PUT", "PATCH", "DELETE"];

/** The dashboard's filters, read leniently from the query: a value that does not fit is ignored. */
export function auditFilterFromQuery(q: Record<string, string | undefined>): { filter: AuditFilter; shown: Record<string, string> } {
  const filter: AuditFilter = {};
  const shown: Record<string, string> = {};
  const actor = q.actor?.trim();
  if (actor) filter.actor = shown.actor = actor.slice(0, 320);
  const resource = q.resource?.trim();
  if (resource) filter.resource = shown.resource = resource.slice(0, 512);
  if (q.method && METHODS.includes(q.method)) filter.method = shown.method = q.method;
  if (q.status && /^[1-5]\d\d$/.test(q.status)) {
    filter.status = Number(q.status);
    shown.status = q.status;
  }
  if (q.cursor && /^\d{1,15}$/.test(q.cursor)) filter.before = Number(q.cursor);
  return { filter, shown };
}

const statusClass = (s: number) => (s < 300 ? "badge ok" : s < 500 ? "badge warn" : "badge bad");

/** A refused write keeps what the answer said (`{code, error}`), not what was sent: shown as one line. */
function refusalText(json: string): string {
  try {
    const r = JSON.parse(json) as { code?: unknown; error?: unknown };
    return ["refused", r.code, r.error].filter((x) => typeof x === "string" && x !== "").join(": ");
  } catch {
    return "refused";
  }
}

/** The audit trail: who changed what, newest first, with the API's filters. */
export const auditRoutes = new Hono<UiEnv>().get("/audit", async (c) => {
  const { filter, shown } = auditFilterFromQuery(c.req.query());
  const page = await auditPage(createDb(c.env), filter, PAGE_SIZE);
  const older = page.nextCursor === null ? null : `/ui/audit?${new URLSearchParams({ ...shown, cursor: String(page.nextCursor) })}`;
  return c.html(
    <Page title="Audit trail" csrf={c.get("csrf")}>
      <h1>Audit trail</h1>
      <p class="mut small">
        {`Every admin write, through the API or this dashboard, newest first. Secrets are never recorded. A refused write keeps only what the answer said, at most ${REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE} a minute per actor (the rest are counted in /metrics).`}
      </p>
      <form class="actions" method="get" action="/ui/audit">
        <input name="actor" placeholder="actor, e.g. token:ci" value={shown.actor ?? ""} />
        <input name="resource" placeholder="id, name or /api/v1/… prefix" value={shown.resource ?? ""} />
        <select name="method">
          <option value="">any method</option>
          {METHODS.map((m) => (
            <option value={m} selected={shown.method === m}>
              {m}
            </option>
          ))}
        </select>
        <input name="status" placeholder="status" size={5} value={shown.status ?? ""} />
        <button type="submit">Filter</button>
        <a href="/ui/audit">Clear</a>
      </form>
      <table id="audit">
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>What</th>
            <th>Resource</th>
            <th class="num">Result</th>
            <th>Change</th>
            <th>Request</th>
          </tr>
        </thead>
        <tbody>
          {page.entries.map((e) => (
            <tr>
              <td class="small">{when(e.at)}</td>
              <td>
                {e.actor}
                {e.via === "dashboard" && <span class="mut small"> (dashboard)</span>}
              </td>
              <td>
                {`${e.method} `}
                <span class="mut small">{e.path}</span>
              </td>
              <td class="small">{e.resource ?? "—"}</td>
              <td class="num">
                <span class={statusClass(e.status)}>{String(e.status)}</span>
              </td>
              <td class="fault">{e.changes ? clip(e.changes, 300) : e.refusal ? refusalText(e.refusal) : "—"}</td>
              <td class="mut small">{e.requestId}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.entries.length === 0 && <p class="mut">No entries.</p>}
      {older && (
        <p>
          <a href={older}>Older entries</a>
        </p>
      )}
    </Page>,
  );
});
