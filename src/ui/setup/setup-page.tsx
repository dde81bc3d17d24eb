import type { Child, FC } from "hono/jsx";
import { webhookUrlFor } from "../../lib/webhook-url";
import { defaultAppName, installUrl, permissionsNeeded } from "../../setup/app-manifest";
import { runsOnLine } from "../../setup/first-run-steps";
import { Flash, Page } from "../views";
import type { SetupData } from "./setup-data";
import { ShapedFields } from "./shaped-fields";

/**
 * The first-run page, /ui/setup: a checklist from an empty coordinator to a runner serving a job,
 * and under it one form per step (create the GitHub App, install it, add what it covers, connect
 * a cloud, create a scale set). Every form is a plain POST; no script.
 */

const Csrf: FC<{ csrf: string }> = ({ csrf }) => <input type="hidden" name="_csrf" value={csrf} />;

const Steps: FC<{ data: SetupData }> = ({ data }) => {
  const next = data.steps.find((s) => !s.done);
  return (
    <ol id="setup-steps" class="steps">
      {data.steps.map((s) => (
        <li data-step={s.id} data-done={String(s.done)} class={s.done ? "ok" : s === next ? "warn" : "mut"}>
          <strong>{`${s.done ? "✓" : s === next ? "→" : "○"} ${s.title}`}</strong>
          <span class="small">{` — ${s.detail}`}</span>
        </li>
      ))}
    </ol>
  );
};

const CreateApp: FC<{ data: SetupData; csrf: string }> = ({ data, csrf }) => (
  <form method="post" action="/ui/setup/app" id="create-app" class="card">
    <Csrf csrf={csrf} />
    <p>
      GitHub registers an App with exactly the permissions below, the webhook <code>{webhookUrlFor(data.publicUrl)}</code> and a webhook
      secret it generates; its private key and secrets come straight back here, sealed at once. Nothing to copy.
    </p>
    <label>
      GitHub{" "}
      <select name="endpoint">
        {data.endpoints.map((e) => (
          <option value={e.name}>{`${e.name} (${e.base_url})`}</option>
        ))}
      </select>
    </label>
    <label>
      Name <input name="name" value={defaultAppName(data.publicUrl)} maxlength={34} required />
    </label>
    <fieldset>
      <legend>Owned by</legend>
      <label>
        <input type="radio" name="owner" value="user" checked /> my GitHub account
      </label>
      <label>
        <input type="radio" name="owner" value="organization" /> the organization <input name="org" placeholder="organization login" />
      </label>
    </fieldset>
    <fieldset>
      <legend>Runners for</legend>
      <label>
        <input type="checkbox" name="repository_runners" value="on" checked /> repositories
      </label>
      <label>
        <input type="checkbox" name="organization_runners" value="on" checked /> organizations
      </label>
    </fieldset>
    <table class="small">
      <thead>
        <tr>
          <th>Permission</th>
          <th>Access</th>
          <th>Why Edgerunner needs it</th>
        </tr>
      </thead>
      <tbody>
        {permissionsNeeded({ repositoryRunners: true, organizationRunners: true }).map((p) => (
          <tr>
            <td>{p.permission}</td>
            <td>{p.level}</td>
            <td>{p.why}</td>
          </tr>
        ))}
      </tbody>
    </table>
    <p class="small mut">Events: workflow_job only. No hook permissions: the App's own webhook carries every installation's jobs.</p>
    <button type="submit" class="primary">
      Create a GitHub App for this coordinator
    </button>
  </form>
);

const Apps: FC<{ data: SetupData; csrf: string }> = ({ data, csrf }) => (
  <>
    {data.apps.map((app) => (
      <div class="card" data-app={app.slug}>
        <p>
          <strong>{app.name}</strong>{" "}
          <span class="mut">{`App id ${app.appId} · owned by ${app.ownerLogin || "?"} · ${app.endpointName}`}</span>
        </p>
        <div class="actions">
          <a class="button primary" id={`install-${app.slug}`} href={installUrl(app.htmlUrl)}>
            Install it
          </a>
          <a class="button" href={app.htmlUrl}>
            The App on GitHub
          </a>
          <form class="inline" method="post" action={`/ui/setup/apps/${app.id}/sync`}>
            <Csrf csrf={csrf} />
            <button type="submit">Check GitHub for installations</button>
          </form>
        </div>
        {app.installations.length === 0 && <p class="mut">Not installed yet.</p>}
        {app.installations.map((inst) => (
          <div class="installation" data-installation={String(inst.installationId)}>
            <p>
              {`Installed on ${inst.accountLogin} (${inst.accountType.toLowerCase()}), ${inst.repositorySelection === "all" ? "all repositories" : "selected repositories"} · `}
              <span class={inst.status === "active" ? "badge ok" : "badge bad"}>{inst.status}</span>
              {inst.credentialsName && <span class="mut small">{` · credentials ${inst.credentialsName}`}</span>}
            </p>
            {inst.status === "active" && inst.credentialsName && (
              <form method="post" action="/ui/setup/entities" class="offers">
                <Csrf csrf={csrf} />
                <input type="hidden" name="credentials" value={inst.credentialsName} />
                {inst.offers.organization && (
                  <label>
                    <input
                      type="checkbox"
                      name="organization"
                      value={inst.offers.organization.login}
                      disabled={inst.offers.organization.added}
                      checked={inst.offers.organization.added}
                    />
                    {` the organization ${inst.offers.organization.login}: runners for all its repositories${inst.offers.organization.added ? " (added)" : ""}`}
                  </label>
                )}
                {inst.offers.repositories.map((r) => (
                  <label>
                    <input type="checkbox" name="repository" value={r.fullName} disabled={r.added} checked={r.added} />
                    {` ${r.fullName}${r.added ? " (added)" : ""}`}
                  </label>
                ))}
                {inst.offers.repositories.length === 0 && !inst.offers.organization && (
                  <p class="mut small">No repositories listed: check GitHub again.</p>
                )}
                <button type="submit">Add the selected</button>
              </form>
            )}
          </div>
        ))}
      </div>
    ))}
  </>
);

const Provider: FC<{ data: SetupData; csrf: string }> = ({ data, csrf }) => (
  <>
    {data.providers.length > 0 && (
      <ul>
        {data.providers.map((p) => (
          <li>{`${p.name} — ${p.url}`}</li>
        ))}
      </ul>
    )}
    <p class="small">
      For EC2, Google Compute Engine or Hetzner Cloud, <code>npx edgerunner setup --shim aws-ec2</code> (or <code>gce</code>, or{" "}
      <code>hetzner</code>) deploys that cloud's shim as a Worker and registers it here. Any other shim (docs/shims.md):
    </p>
    <form method="post" action="/ui/setup/provider" id="add-provider" class="card">
      <Csrf csrf={csrf} />
      <label>
        Name <input name="name" placeholder="aws" required />
      </label>
      <label>
        Shim URL <input name="url" placeholder="https://edgerunner-aws-ec2.example.workers.dev" required />
      </label>
      <label>
        Signing secret <input name="secret" type="password" autocomplete="off" required />
      </label>
      <button type="submit">Register the provider</button>
    </form>
  </>
);

const ScaleSetForm: FC<{ data: SetupData; csrf: string }> = ({ data, csrf }) => (
  <>
    {data.scaleSets.length > 0 && (
      <table id="setup-scalesets">
        <thead>
          <tr>
            <th>Scale set</th>
            <th>Entity</th>
            <th>Provider</th>
            <th>Paste into a workflow</th>
          </tr>
        </thead>
        <tbody>
          {data.scaleSets.map((s) => (
            <tr>
              <td>
                <a href={`/ui/scalesets/${s.id}`}>{s.name}</a>
              </td>
              <td>{s.entity.name}</td>
              <td>{s.provider_name}</td>
              <td>
                <code class="runs-on">{s.intake === "scaleset_api" ? `runs-on: ${s.name}` : runsOnLine(s.labels)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {data.entities.length === 0 || data.providers.length === 0 ? (
      <p class="mut">Add a repository or organization and a provider first.</p>
    ) : (
      <form method="post" action="/ui/setup/scaleset" id="create-scaleset" class="card">
        <Csrf csrf={csrf} />
        <label>
          For{" "}
          <select name="entity">
            {data.entities.map((e) => (
              <option value={e.scaleSetsPath}>{e.label}</option>
            ))}
          </select>
        </label>
        <label>
          Provider{" "}
          <select name="provider">
            {data.providers.map((p) => (
              <option value={p.name}>{p.name}</option>
            ))}
          </select>
        </label>
        <label>
          Name <input name="name" value="linux-x64" required />
        </label>
        {/* Not `required`: a shaped scale set has neither, and without script the form cannot tell; the API says which is missing. */}
        <label class="unshaped-only">
          Image <input name="image" placeholder="ubuntu-24.04 (what the provider understands)" />
        </label>
        <label class="unshaped-only">
          Flavor <input name="flavor" placeholder="e.g. c7a.large" />
        </label>
        <label>
          Labels <input name="labels" value="self-hosted, linux, x64" required />
        </label>
        <label>
          Min idle <input name="min_idle" type="number" min="0" value="0" />
        </label>
        <label>
          Max runners <input name="max_runners" type="number" min="1" value="4" />
        </label>
        <ShapedFields />
        <button type="submit" class="primary">
          Create the scale set
        </button>
      </form>
    )}
  </>
);

export const SetupPage: FC<{ data: SetupData; csrf: string; flash: string | null; error?: string | null; check?: Child }> = ({
  data,
  csrf,
  flash,
  check,
  error,
}) => (
  <Page title="Set up" csrf={csrf}>
    <h1>Set up Edgerunner</h1>
    <Flash message={flash} />
    <Flash message={error} bad />
    {data.facts.publicUrlProblem && <p class="flash bad">{data.facts.publicUrlProblem}</p>}
    <Steps data={data} />
    <h2 id="app">1. GitHub App</h2>
    {data.apps.length === 0 ? <CreateApp data={data} csrf={csrf} /> : <Apps data={data} csrf={csrf} />}
    <h2 id="provider">2. Cloud</h2>
    <Provider data={data} csrf={csrf} />
    <h2 id="scaleset">3. Scale set</h2>
    <ScaleSetForm data={data} csrf={csrf} />
    <h2 id="check">4. Is everything in place?</h2>
    {check ?? (
      <p>
        <a class="button primary" id="check-now" href="/ui/setup?check=1#check">
          Check every link now
        </a>{" "}
        asks GitHub what each credential may do and when it last delivered, and each provider for its capabilities (a few seconds). From a
        terminal: <code>npx edgerunner doctor</code>, which also tries PUBLIC_URL from outside.
      </p>
    )}
  </Page>
);

/** The step between the form and GitHub: what will be posted, and the button that posts it there. */
export const ContinueToGithub: FC<{ csrf: string; postUrl: string; manifest: string; owner: string }> = ({
  csrf,
  postUrl,
  manifest,
  owner,
}) => {
  const m = JSON.parse(manifest) as { name: string; default_permissions: Record<string, string>; hook_attributes: { url: string } };
  return (
    <Page title="Create the GitHub App" csrf={csrf}>
      <h1>Create the GitHub App</h1>
      <p>{`GitHub will ask you to confirm the App “${m.name}” for ${owner}, then send you back here with its keys.`}</p>
      <dl class="kv">
        <dt>Webhook</dt>
        <dd>{m.hook_attributes.url}</dd>
        <dt>Permissions</dt>
        <dd>
          {Object.entries(m.default_permissions)
            .map(([k, v]) => `${k}: ${v}`)
            .join(", ")}
        </dd>
        <dt>Events</dt>
        <dd>workflow_job</dd>
      </dl>
      <form method="post" action={postUrl} id="to-github">
        <input type="hidden" name="manifest" value={manifest} />
        <button type="submit" class="primary">
          Continue to GitHub
        </button>
      </form>
      <p>
        <a href="/ui/setup">Back</a>
      </p>
    </Page>
  );
};
