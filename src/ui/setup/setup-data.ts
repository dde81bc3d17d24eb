import type { Context } from "hono";
import { createDb } from "../../db/client";
import { readSetupProgress } from "../../db/doctor/doctor-queries";
import { type GithubAppRow, type InstallationRow, installationRecord, listApps, listInstallations } from "../../db/github/github-app-store";
import { unreachableByGithub } from "../../setup/app-manifest";
import { type SetupFacts, type SetupStep, setupSteps } from "../../setup/first-run-steps";
import { type InstallationOffers, installationOffers, type KnownEntity } from "../../setup/installations";
import { type ApiDispatch, callAdminApi } from "../admin-api";
import type { UiEnv } from "../session-middleware";

/**
 * Everything the first-run page shows, read once per render: our Apps and their installations
 * from D1, the rest through the admin API as the signed-in user (so the page shows only what
 * that user may read), and the progress figures in one D1 batch.
 */

export interface EntityItem {
  id: string;
  kind: "repository" | "organization" | "enterprise";
  label: string;
  credentialsName: string;
  /** Where its scale sets are created in the admin API. */
  scaleSetsPath: string;
}

export interface SetupData {
  publicUrl: string;
  endpoints: { name: string; base_url: string }[];
  apps: (GithubAppRow & { installations: (InstallationRow & { offers: InstallationOffers; credentialsName: string | null })[] })[];
  entities: EntityItem[];
  providers: { name: string; url: string }[];
  scaleSets: {
    id: string;
    name: string;
    labels: string[];
    provider_name: string;
    entity: { name: string };
    intake: "webhook" | "scaleset_api";
  }[];
  steps: SetupStep[];
  facts: SetupFacts;
}

// biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON answers, read for display
const list = (r: { status: number; body: any }): any[] => (r.status === 200 && Array.isArray(r.body) ? r.body : []);

export async function loadSetupData(c: Context<UiEnv>, dispatch: ApiDispatch): Promise<SetupData> {
  const api = (path: string) => callAdminApi(c, dispatch, "GET", path);
  const db = createDb(c.env);
  const [apps, installations, endpoints, credentials, repos, orgs, enterprises, providers, scaleSets] = await Promise.all([
    listApps(db),
    listInstallations(db),
    api("/github/endpoints").then(list),
    api("/github/credentials").then(list),
    api("/repositories").then(list),
    api("/organizations").then(list),
    api("/enterprises").then(list),
    api("/providers").then(list),
    api("/scalesets").then(list),
  ]);
  const credentialById = new Map(credentials.map((cr) => [cr.id as string, cr]));
  const entities: (EntityItem & { credentialsId: string; known: KnownEntity })[] = [
    ...repos.map((r) => ({
      id: r.id,
      kind: "repository" as const,
      label: `${r.owner}/${r.name}`,
      credentialsName: r.credentials_name,
      credentialsId: r.credentials_id,
      scaleSetsPath: `/repositories/${r.id}/scalesets`,
      known: { kind: "repository" as const, owner: r.owner, name: r.name },
    })),
    ...orgs.map((o) => ({
      id: o.id,
      kind: "organization" as const,
      label: `${o.name} (organization)`,
      credentialsName: o.credentials_name,
      credentialsId: o.credentials_id,
      scaleSetsPath: `/organizations/${o.id}/scalesets`,
      known: { kind: "organization" as const, owner: o.name, name: "" },
    })),
    ...enterprises.map((e) => ({
      id: e.id,
      kind: "enterprise" as const,
      label: `${e.name} (enterprise)`,
      credentialsName: e.credentials_name,
      credentialsId: e.credentials_id,
      scaleSetsPath: `/enterprises/${e.id}/scalesets`,
      known: { kind: "enterprise" as const, owner: e.name, name: "" },
    })),
  ];
  const progress = await readSetupProgress(c.env.DB);
  const known = entities.map((e) => e.known);
  const facts: SetupFacts = {
    publicUrlProblem: unreachableByGithub(c.env.PUBLIC_URL),
    apps: apps.length,
    installations: installations.filter((i) => i.status === "active").length,
    entities: entities.map((e) => {
      const health = credentialById.get(e.credentialsId)?.health;
      return {
        id: e.id,
        label: e.label,
        credentialsFailing: health?.status === "failing" ? (health.reason ?? "failing") : null,
        lastDeliveryAt: progress.lastJobAt.get(e.id) ?? null,
      };
    }),
    providers: providers.length,
    scaleSets: scaleSets.map((s) => ({
      id: s.id,
      name: s.name,
      labels: s.labels,
      intake: s.intake,
      cameUp: progress.cameUp.has(s.id),
    })),
  };
  return {
    publicUrl: c.env.PUBLIC_URL,
    endpoints,
    apps: apps.map((a) => ({
      ...a,
      installations: installations
        .filter((i) => i.appRowId === a.id)
        .map((i) => ({
          ...i,
          offers: installationOffers(installationRecord(i), known),
          credentialsName: i.credentialsId ? (credentialById.get(i.credentialsId)?.name ?? null) : null,
        })),
    })),
    entities,
    providers,
    scaleSets,
    steps: setupSteps(facts),
    facts,
  };
}
