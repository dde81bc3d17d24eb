import type { CredentialHealthRow, OverviewEntity, OverviewRecovery } from "../db/dashboard/overview-queries";
import { duration } from "./format";
import { Badge } from "./views";

/**
 * The overview's entities: each repository, organization and enterprise with the credentials it
 * acts with and its credential pool, every credential with its health as GitHub last left it
 * (failing and why, rate limited and for how long). A pool member that fails is skipped when JIT
 * configs are minted, so this is where one sees that a pool runs short. Then how its lost webhook
 * deliveries are found (src/recovery/) and what that found in the last 24 hours.
 */

const WATCH_NAMES: Record<string, string> = {
  app: "App webhook",
  repository: "repository hook",
  organization: "organization hook",
  backstop: "backstop",
};

/** The watches that look after an entity: its own hook's, the backstop's, its App's webhook's. */
function entityWatches(e: OverviewEntity, recovery: OverviewRecovery) {
  return recovery.watches.filter(
    (w) => w.entity_id === e.id || (e.app_webhook_id !== null && w.key === `app:${e.endpoint_name}:${e.app_webhook_id}`),
  );
}

function Recovery({ e, recovery }: { e: OverviewEntity; recovery: OverviewRecovery }) {
  const watches = entityWatches(e, recovery);
  const n = recovery.last24h.get(e.id);
  if (!watches.length && !n) return <span class="mut">{e.forge === "forgejo" ? "polled: nothing to recover" : "not watched"}</span>;
  return (
    <div>
      {watches.map((w) => (
        <div data-watch={w.key}>
          {`${WATCH_NAMES[w.kind] ?? w.kind} `}
          <span class={`badge ${w.status === "ok" ? "ok" : "warn"}`}>{w.status}</span>
          {w.status !== "ok" && w.detail ? <div class="fault">{w.detail}</div> : null}
        </div>
      ))}
      <div class="small" data-recovered-24h>
        {`24 h: ${n?.failed ?? 0} failed, ${n?.recovered ?? 0} recovered${n?.found ? `, ${n.found} found by the backstop` : ""}`}
      </div>
    </div>
  );
}

function CredentialState({ id, credentials, now }: { id: string; credentials: Map<string, CredentialHealthRow>; now: number }) {
  const c = credentials.get(id);
  if (!c) return <div class="mut">(gone)</div>;
  const limited = c.blocked_until !== null && c.blocked_until > now;
  return (
    <div data-credentials={c.name}>
      {`${c.name} `}
      <Badge v={c.health ?? "ok"} />
      {limited ? <span class="badge bad">{`rate limited ${duration(c.blocked_until! - now)}`}</span> : null}
      {c.health === "failing" && c.failure_reason ? <div class="fault">{c.failure_reason}</div> : null}
    </div>
  );
}

export function EntitiesTable({
  entities,
  credentials,
  recovery,
  now,
}: {
  entities: OverviewEntity[];
  credentials: Map<string, CredentialHealthRow>;
  recovery: OverviewRecovery;
  now: number;
}) {
  return (
    <table id="entities">
      <thead>
        <tr>
          <th>Entity</th>
          <th>Endpoint</th>
          <th>Forge</th>
          <th>Credentials</th>
          <th>Credential pool</th>
          <th>Lost deliveries</th>
        </tr>
      </thead>
      <tbody>
        {entities.length === 0 && (
          <tr>
            <td colspan={6} class="mut">
              No repositories, organizations or enterprises yet.
            </td>
          </tr>
        )}
        {entities.map((e) => (
          <tr data-entity={e.id}>
            {/* A Gitea entity of kind enterprise is the whole Gitea instance. */}
            <td>{`${e.forge === "gitea" && e.kind === "enterprise" ? "instance" : e.kind}: ${e.entity}`}</td>
            <td>{e.endpoint_name}</td>
            <td>{e.forge}</td>
            <td>
              <CredentialState id={e.credentials_id} credentials={credentials} now={now} />
            </td>
            <td class="pool">
              {e.pool.length === 0 ? (
                <span class="mut">none</span>
              ) : (
                e.pool.map((id) => <CredentialState id={id} credentials={credentials} now={now} />)
              )}
            </td>
            <td class="recovery">
              <Recovery e={e} recovery={recovery} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
