import { type Context, Hono } from "hono";
import { toBase64Url } from "../../crypto/base64url";
import { createDb } from "../../db/client";
import { findApp, listApps } from "../../db/github/github-app-store";
import { GithubApiError } from "../../github/errors";
import { errorText, logEvent } from "../../observability/log";
import { APP_NAME_MAX, type AppOwner } from "../../setup/app-manifest";
import { completeManifest, SetupError, startManifest } from "../../setup/manifest-flow";
import { syncAllInstallations, syncInstallation } from "../../setup/record-installation";
import { type ApiDispatch, callAdminApi } from "../admin-api";
import { DoctorReport, runDoctor } from "../doctor-report";
import { flashMessage } from "../flash";
import { cspAllowingFormTo } from "../security-headers";
import type { UiEnv } from "../session-middleware";
import { Page } from "../views";
import { loadSetupData } from "./setup-data";
import { ContinueToGithub, SetupPage } from "./setup-page";
import { shapeFromForm } from "./shaped-fields";

/**
 * The first-run page and its forms. The GitHub App's creation and installation come back here
 * from GitHub (GET with a session: the `state` ties the App's round trip to this session);
 * adding entities, a provider and a scale set go through the admin API in-process, so they are
 * validated, audited and scoped exactly as the API is.
 */

const text = (form: Record<string, unknown>, name: string): string => (typeof form[name] === "string" ? (form[name] as string).trim() : "");
const all = (form: Record<string, unknown>, name: string): string[] => {
  const v = form[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string" && x.length > 0);
};

function problem(c: Context<UiEnv>, status: number, message: string) {
  return c.html(
    <Page title="Setup" csrf={c.get("csrf")}>
      <p class="flash bad">{message}</p>
      <a href="/ui/setup">Back to the setup page</a>
    </Page>,
    status as 400,
  );
}

/** The API's refusal as a sentence: its error and the fields it named. */
// biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON error body
function apiProblem(r: { status: number; body: any }): string {
  const details = Array.isArray(r.body?.details)
    ? r.body.details.map((d: { path?: string; message?: string }) => `${d.path ? `${d.path}: ` : ""}${d.message ?? ""}`).join("; ")
    : r.body?.details
      ? JSON.stringify(r.body.details)
      : "";
  return `${r.body?.error ?? `the API answered ${r.status}`}${details ? ` (${details})` : ""}`;
}

const secret = () => toBase64Url(crypto.getRandomValues(new Uint8Array(32)));

export function setupRoutes(dispatch: ApiDispatch) {
  const api = (c: Context<UiEnv>, method: string, path: string, body?: unknown) => callAdminApi(c, dispatch, method, path, body);
  const back = (c: Context<UiEnv>, done: string, anchor = "") => c.redirect(`/ui/setup?done=${done}${anchor}`, 303);

  return new Hono<UiEnv>()
    .get("/setup", async (c) => {
      // The setup check calls GitHub and every shim: only when asked for ("Check every link now").
      const [data, report] = await Promise.all([
        loadSetupData(c, dispatch),
        c.req.query("check") === "1" ? runDoctor(c.env, { requestUrl: c.req.url }) : null,
      ]);
      return c.html(
        <SetupPage
          data={data}
          csrf={c.get("csrf")}
          flash={flashMessage(c.req.query("done"))}
          check={report ? <DoctorReport report={report} /> : undefined}
        />,
      );
    })
    .post("/setup/app", async (c) => {
      if (c.get("principal")?.scope !== "admin") return problem(c, 403, "Creating a GitHub App needs an admin sign-in.");
      const form = await c.req.parseBody();
      const name = text(form, "name");
      const org = text(form, "org");
      const owner: AppOwner = text(form, "owner") === "organization" ? { kind: "organization", login: org } : { kind: "user" };
      const features = { repositoryRunners: form.repository_runners === "on", organizationRunners: form.organization_runners === "on" };
      if (!name || name.length > APP_NAME_MAX) return problem(c, 400, `The App's name must be 1 to ${APP_NAME_MAX} characters.`);
      if (owner.kind === "organization" && !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(org)) {
        return problem(c, 400, "Name the organization that will own the App (its login, as in github.com/<login>).");
      }
      if (!features.repositoryRunners && !features.organizationRunners) {
        return problem(c, 400, "Pick repositories, organizations or both: the App's permissions follow from that.");
      }
      try {
        const started = await startManifest(c.env, {
          sessionNonce: c.get("session").nonce,
          endpointName: text(form, "endpoint"),
          owner,
          name,
          features,
        });
        c.header("Content-Security-Policy", cspAllowingFormTo(new URL(started.postUrl).origin));
        return c.html(
          <ContinueToGithub
            csrf={c.get("csrf")}
            postUrl={started.postUrl}
            manifest={started.manifest}
            owner={owner.kind === "user" ? "your GitHub account" : `the organization ${owner.login}`}
          />,
        );
      } catch (err) {
        if (err instanceof SetupError) return problem(c, err.status, err.message);
        throw err;
      }
    })
    .get("/setup/app-created", async (c) => {
      if (c.get("principal")?.scope !== "admin") return problem(c, 403, "Completing a GitHub App needs an admin sign-in.");
      try {
        await completeManifest(c.env, {
          sessionNonce: c.get("session").nonce,
          code: c.req.query("code") ?? "",
          state: c.req.query("state") ?? "",
        });
        return back(c, "app_created", "#app");
      } catch (err) {
        if (err instanceof SetupError) return problem(c, err.status, err.message);
        throw err;
      }
    })
    .get("/setup/installed", async (c) => {
      // GitHub's setup URL: the installation id is a hint; only GitHub, asked as each of our Apps, says whose it is.
      if (c.get("principal")?.scope !== "admin") return problem(c, 403, "Recording an installation needs an admin sign-in.");
      const id = Number(c.req.query("installation_id"));
      if (!Number.isSafeInteger(id) || id <= 0)
        return problem(c, 400, "GitHub's redirect lacks an installation_id: use “Check GitHub for installations”.");
      for (const app of await listApps(createDb(c.env))) {
        try {
          await syncInstallation(c.env, app, id);
          logEvent({ event: "ui_action", action: "installation_synced", app_id: app.appId, installation: id });
          return back(c, "installed", "#app");
        } catch (err) {
          if (err instanceof GithubApiError && err.status === 404) continue;
          return problem(c, 502, `Could not read installation ${id} from GitHub: ${errorText(err)}. Try “Check GitHub for installations”.`);
        }
      }
      return problem(c, 404, `Installation ${id} belongs to none of the Apps created here.`);
    })
    .post("/setup/apps/:id/sync", async (c) => {
      if (c.get("principal")?.scope !== "admin") return problem(c, 403, "Checking GitHub for installations needs an admin sign-in.");
      const app = await findApp(createDb(c.env), c.req.param("id"));
      if (!app) return problem(c, 404, "No such App.");
      try {
        await syncAllInstallations(c.env, app);
      } catch (err) {
        return problem(c, 502, `GitHub did not list the App's installations: ${errorText(err)}.`);
      }
      return back(c, "synced", "#app");
    })
    .post("/setup/entities", async (c) => {
      const form = await c.req.parseBody({ all: true });
      const credentials = text(form, "credentials");
      const orgs = all(form, "organization");
      const repos = all(form, "repository");
      if (!credentials || orgs.length + repos.length === 0) return problem(c, 400, "Tick at least one organization or repository to add.");
      for (const org of orgs) {
        const r = await api(c, "POST", "/organizations", { name: org, credentials_name: credentials, webhook_secret: secret() });
        if (r.status !== 201) return problem(c, r.status, `Adding the organization ${org} failed: ${apiProblem(r)}`);
      }
      for (const full of repos) {
        const [owner, name] = full.split("/");
        const r = await api(c, "POST", "/repositories", { owner, name, credentials_name: credentials, webhook_secret: secret() });
        if (r.status !== 201) return problem(c, r.status, `Adding the repository ${full} failed: ${apiProblem(r)}`);
      }
      return back(c, "entities_added", "#scaleset");
    })
    .post("/setup/provider", async (c) => {
      const form = await c.req.parseBody();
      const r = await api(c, "POST", "/providers", { name: text(form, "name"), url: text(form, "url"), secret: text(form, "secret") });
      if (r.status !== 201) return problem(c, r.status, `Registering the provider failed: ${apiProblem(r)}`);
      return back(c, "provider_added", "#scaleset");
    })
    .post("/setup/scaleset", async (c) => {
      const form = await c.req.parseBody();
      const path = text(form, "entity");
      if (!/^\/(repositories|organizations|enterprises)\/[0-9a-f-]{36}\/scalesets$/.test(path))
        return problem(c, 400, "Pick the repository or organization.");
      const labels = text(form, "labels")
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean);
      const shaped = shapeFromForm(form);
      if ("problem" in shaped) return problem(c, 400, shaped.problem);
      const r = await api(c, "POST", path, {
        name: text(form, "name"),
        provider_name: text(form, "provider"),
        // A shaped scale set's image and flavor are chosen per job: the fields are ignored, not sent.
        ...(shaped.shape
          ? { shape: shaped.shape }
          : { image: text(form, "image") || undefined, flavor: text(form, "flavor") || undefined }),
        labels,
        min_idle_runners: Number(text(form, "min_idle") || "0"),
        max_runners: Number(text(form, "max_runners") || "1"),
      });
      if (r.status !== 201) return problem(c, r.status, `Creating the scale set failed: ${apiProblem(r)}`);
      return back(c, "scaleset_created", "#scaleset");
    });
}
