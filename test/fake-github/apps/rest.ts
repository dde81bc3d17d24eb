/**
 * The REST side of GitHub Apps in the fake GitHub: the manifest conversion (the one operation
 * GitHub answers without credentials), the App itself and its installations (App JWT), and the
 * repositories an installation token may see. Answers follow GitHub's OpenAPI schemas
 * (`integration`, `installation`, `repository`, `simple-user`), checked by test/contract.
 * Plain web APIs only, like world.ts, which joins `appRestRoutes` to its route table.
 */

import { error, json, page } from "../rest-answers.ts";
import type { FakeInstallation, FakeManifestApp } from "../types.ts";
import type { FakeRequest, Route, World } from "../world.ts";
import { type AppRegistry, covers, registryOf } from "./registry.ts";

/** What a seeded installation may do (seeds name no permissions): everything Edgerunner needs. */
export const DEFAULT_INSTALLATION_PERMISSIONS: Record<string, string> = {
  actions: "read",
  administration: "write",
  metadata: "read",
  organization_self_hosted_runners: "write",
};
const DEFAULT_INSTALLATION_EVENTS = ["workflow_job"];

/** GitHub's 404 for a conversion code that is unknown, used or expired. */
const CONVERSION_DOCS = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** GitHub's (legacy) node ids: base64 of "0<length of Type>:<Type><id>" ("04:User1", "012:Organization1"). */
export const nodeId = (type: string, id: number) => btoa(`0${type.length}:${type}${id}`);
export const installationNodeId = (id: number) => nodeId("IntegrationInstallation", id);

/** The API base and the web base of the world the request came to (they differ on GHES: /api/v3). */
function bases(req: FakeRequest) {
  return { api: req.baseUrl, web: req.baseUrl.replace(/\/api\/v3$/, "") };
}

/** An account as GitHub's `simple-user` schema shows it (users and organizations alike). */
export function simpleUser(reg: AppRegistry, login: string, api: string, web: string) {
  const type = reg.accountType(login);
  const id = reg.accountId(login);
  const u = `${api}/users/${login}`;
  return {
    login,
    id,
    node_id: nodeId(type === "User" ? "User" : "Organization", id),
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: "",
    url: u,
    html_url: `${web}/${login}`,
    followers_url: `${u}/followers`,
    following_url: `${u}/following{/other_user}`,
    gists_url: `${u}/gists{/gist_id}`,
    starred_url: `${u}/starred{/owner}{/repo}`,
    subscriptions_url: `${u}/subscriptions`,
    organizations_url: `${u}/orgs`,
    repos_url: `${u}/repos`,
    events_url: `${u}/events{/privacy}`,
    received_events_url: `${u}/received_events`,
    type,
    site_admin: false,
    user_view_type: "public",
  };
}

/** A repository as installation webhooks list it. */
export function repositoryRef(reg: AppRegistry, fullName: string) {
  const id = reg.idOf(`repo:${fullName}`);
  return { id, node_id: nodeId("Repository", id), name: fullName.split("/")[1]!, full_name: fullName, private: true };
}

/** A repository as GitHub's `repository` schema shows it. */
export function repositoryView(reg: AppRegistry, fullName: string, api: string, web: string, now: number) {
  const ref = repositoryRef(reg, fullName);
  const u = `${api}/repos/${fullName}`;
  const t = iso(now);
  const templated = (path: string, param: string) => `${u}/${path}{/${param}}`;
  return {
    ...ref,
    owner: simpleUser(reg, fullName.split("/")[0]!, api, web),
    html_url: `${web}/${fullName}`,
    description: null,
    fork: false,
    url: u,
    archive_url: `${u}/{archive_format}{/ref}`,
    assignees_url: templated("assignees", "user"),
    blobs_url: templated("git/blobs", "sha"),
    branches_url: templated("branches", "branch"),
    collaborators_url: templated("collaborators", "collaborator"),
    comments_url: templated("comments", "number"),
    commits_url: templated("commits", "sha"),
    compare_url: `${u}/compare/{base}...{head}`,
    contents_url: `${u}/contents/{+path}`,
    contributors_url: `${u}/contributors`,
    deployments_url: `${u}/deployments`,
    downloads_url: `${u}/downloads`,
    events_url: `${u}/events`,
    forks_url: `${u}/forks`,
    git_commits_url: templated("git/commits", "sha"),
    git_refs_url: templated("git/refs", "sha"),
    git_tags_url: templated("git/tags", "sha"),
    git_url: `${web.replace(/^https?:/, "git:")}/${fullName}.git`,
    issue_comment_url: templated("issues/comments", "number"),
    issue_events_url: templated("issues/events", "number"),
    issues_url: templated("issues", "number"),
    keys_url: templated("keys", "key_id"),
    labels_url: templated("labels", "name"),
    languages_url: `${u}/languages`,
    merges_url: `${u}/merges`,
    milestones_url: templated("milestones", "number"),
    notifications_url: `${u}/notifications{?since,all,participating}`,
    pulls_url: templated("pulls", "number"),
    releases_url: templated("releases", "id"),
    ssh_url: `git@${new URL(web).host}:${fullName}.git`,
    stargazers_url: `${u}/stargazers`,
    statuses_url: `${u}/statuses/{sha}`,
    subscribers_url: `${u}/subscribers`,
    subscription_url: `${u}/subscription`,
    tags_url: `${u}/tags`,
    teams_url: `${u}/teams`,
    trees_url: templated("git/trees", "sha"),
    clone_url: `${web}/${fullName}.git`,
    mirror_url: null,
    hooks_url: `${u}/hooks`,
    svn_url: `${web}/${fullName}`,
    homepage: null,
    language: null,
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: "main",
    open_issues_count: 0,
    open_issues: 0,
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    archived: false,
    disabled: false,
    visibility: "private",
    license: null,
    pushed_at: t,
    created_at: t,
    updated_at: t,
  };
}

/** An App made by manifest, or a seeded one described as plainly as its seed allows. */
function appRecord(w: World, appId: number): FakeManifestApp | null {
  const made = registryOf(w).apps.get(appId);
  if (made) return made;
  const seeded = w.apps.get(appId);
  if (!seeded) return null;
  const firstAccount = [...w.installations.values()].find((i) => i.appId === appId)?.account;
  const owner = firstAccount ?? registryOf(w).webUser;
  return {
    id: appId,
    slug: `app-${appId}`,
    name: `app-${appId}`,
    node_id: nodeId("Integration", appId),
    client_id: seeded.clientId ?? `Iv1.${appId}`,
    client_secret: "",
    webhook_secret: null,
    pem: "",
    owner: { login: owner, type: registryOf(w).accountType(owner) },
    description: null,
    url: `https://example.com/apps/${appId}`,
    hook: null,
    hook_id: 0,
    redirect_url: null,
    setup_url: null,
    setup_on_update: false,
    callback_urls: [],
    public: false,
    permissions: DEFAULT_INSTALLATION_PERMISSIONS,
    events: DEFAULT_INSTALLATION_EVENTS,
    created_at: iso(0),
  };
}

/** The App as GitHub's `integration` schema shows it. */
function integrationView(w: World, app: FakeManifestApp, api: string, web: string) {
  return {
    id: app.id,
    slug: app.slug,
    node_id: app.node_id,
    client_id: app.client_id,
    owner: simpleUser(registryOf(w), app.owner.login, api, web),
    name: app.name,
    description: app.description,
    external_url: app.url,
    html_url: `${web}/apps/${app.slug}`,
    created_at: app.created_at,
    updated_at: app.created_at,
    permissions: app.permissions,
    events: app.events,
    installations_count: [...w.installations.values()].filter((i) => i.appId === app.id).length,
  };
}

/** The installation as GitHub's `installation` schema shows it. */
export function installationView(w: World, inst: FakeInstallation, api: string, web: string) {
  const reg = registryOf(w);
  const app = appRecord(w, inst.appId);
  const targetType = reg.accountType(inst.account);
  const created = iso(inst.createdAt ?? w.now());
  return {
    id: inst.id,
    client_id: app?.client_id,
    account: simpleUser(reg, inst.account, api, web),
    repository_selection: inst.repositorySelection ?? "all",
    access_tokens_url: `${api}/app/installations/${inst.id}/access_tokens`,
    repositories_url: `${api}/installation/repositories`,
    html_url:
      targetType === "Organization"
        ? `${web}/organizations/${inst.account}/settings/installations/${inst.id}`
        : `${web}/settings/installations/${inst.id}`,
    app_id: inst.appId,
    app_slug: app?.slug ?? `app-${inst.appId}`,
    target_id: reg.accountId(inst.account),
    target_type: targetType,
    permissions: inst.permissions ?? DEFAULT_INSTALLATION_PERMISSIONS,
    events: inst.events ?? DEFAULT_INSTALLATION_EVENTS,
    created_at: created,
    updated_at: created,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: null,
    suspended_at: null,
  };
}

/** The repositories `inst` lets its App see, sorted. */
export function coveredRepositories(w: World, inst: FakeInstallation): string[] {
  return registryOf(w)
    .repositoriesOf(inst.account)
    .filter((r) => covers(inst, r));
}

export const appRestRoutes: Route[] = [
  {
    method: "POST",
    pattern: /^\/app-manifests\/([^/]+)\/conversions$/,
    operation: "create_app_from_manifest",
    anonymous: (w, req, m) => {
      const reg = registryOf(w);
      const code = decodeURIComponent(m[1]!);
      const grant = reg.codes.get(code);
      reg.codes.delete(code); // single use, and an expired one is gone too
      const app = grant && grant.expiresAt > w.now() ? reg.apps.get(grant.appId) : undefined;
      if (!app) return error(404, "Not Found", { documentation_url: CONVERSION_DOCS });
      const { api, web } = bases(req);
      return json(201, {
        ...integrationView(w, app, api, web),
        client_secret: app.client_secret,
        webhook_secret: app.webhook_secret,
        pem: app.pem,
      });
    },
  },
  {
    method: "GET",
    pattern: /^\/app$/,
    operation: "get_authenticated_app",
    appJwt: true,
    handler: (w, req, _m, who) => {
      const app = who.kind === "app" ? appRecord(w, who.appId) : null;
      if (!app) return error(404, "Not Found");
      const { api, web } = bases(req);
      return json(200, integrationView(w, app, api, web));
    },
  },
  {
    method: "GET",
    pattern: /^\/app\/installations$/,
    operation: "list_app_installations",
    appJwt: true,
    handler: (w, req, _m, who) => {
      if (who.kind !== "app") return error(404, "Not Found");
      const { api, web } = bases(req);
      const all = [...w.installations.values()].filter((i) => i.appId === who.appId).map((i) => installationView(w, i, api, web));
      const { items, link } = page(req, all);
      return json(200, items, link ? { link } : {});
    },
  },
  {
    method: "GET",
    pattern: /^\/installation\/repositories$/,
    operation: "list_installation_repositories",
    handler: (w, req, _m, who) => {
      const inst = who.kind === "installation" ? w.installations.get(who.installationId) : undefined;
      if (!inst) return error(403, "This endpoint requires an installation access token");
      const { api, web } = bases(req);
      const all = coveredRepositories(w, inst).map((r) => repositoryView(registryOf(w), r, api, web, w.now()));
      const { items, link } = page(req, all);
      return json(
        200,
        { total_count: all.length, repository_selection: inst.repositorySelection ?? "all", repositories: items },
        link ? { link } : {},
      );
    },
  },
];
