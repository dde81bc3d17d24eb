import type { CredentialHealthRow, OverviewEntity } from "../db/dashboard-queries";
import { duration } from "./format";
import { Badge } from "./views";

/**
 * The overview's entities: each repository, organization and enterprise with the credentials it
 * acts with and its credential pool, every credential with its health as GitHub last left it
 * (failing and why, rate limited and for how long). A pool member that fails is skipped when JIT
 * configs are minted, so this is where one sees that a pool runs short.
 */

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
  now,
}: {
  entities: OverviewEntity[];
  credentials: Map<string, CredentialHealthRow>;
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
        </tr>
      </thead>
      <tbody>
        {entities.length === 0 && (
          <tr>
            <td colspan={5} class="mut">
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
          </tr>
        ))}
      </tbody>
    </table>
  );
}
