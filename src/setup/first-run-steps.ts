/**
 * The first-run page's checklist: from an empty coordinator to a runner serving a job, which
 * links of the chain are in place, and what to do about the first one that is not. Plain data in,
 * plain data out; the page gathers the facts.
 */

export interface SetupFacts {
  /** Why GitHub cannot reach PUBLIC_URL, or null. */
  publicUrlProblem: string | null;
  apps: number;
  /** Installations of our Apps that are active. */
  installations: number;
  entities: { id: string; label: string; credentialsFailing: string | null; lastDeliveryAt: number | null }[];
  providers: number;
  scaleSets: { id: string; name: string; labels: string[]; intake: "webhook" | "scaleset_api"; cameUp: boolean }[];
}

export type StepId = "app" | "install" | "entity" | "provider" | "scaleset" | "webhook" | "runner";

export interface SetupStep {
  id: StepId;
  title: string;
  done: boolean;
  /** What it found, or what to do next. */
  detail: string;
}

/** The `runs-on:` a workflow uses to get a runner of this scale set: all of its labels. */
export function runsOnLine(labels: readonly string[]): string {
  return `runs-on: [${labels.join(", ")}]`;
}

export function setupSteps(f: SetupFacts): SetupStep[] {
  const byHand = f.entities.length > 0 && f.apps === 0;
  const failing = f.entities.filter((e) => e.credentialsFailing);
  const fed = f.entities.filter((e) => e.lastDeliveryAt !== null);
  const pulls = f.scaleSets.length > 0 && f.scaleSets.every((s) => s.intake === "scaleset_api");
  const up = f.scaleSets.filter((s) => s.cameUp);
  return [
    {
      id: "app",
      title: "Create a GitHub App",
      done: f.apps > 0 || byHand,
      detail:
        f.apps > 0
          ? `${f.apps} App(s) created here`
          : byHand
            ? "credentials were added by hand: no App needed"
            : "create the App below: GitHub asks you to confirm its name, then sends you back here",
    },
    {
      id: "install",
      title: "Install it on your repositories or organization",
      done: f.installations > 0 || byHand,
      detail:
        f.installations > 0
          ? `${f.installations} installation(s); credentials made for each`
          : f.apps > 0
            ? "follow “Install it”: pick the account and repositories; GitHub sends you back here"
            : "after the App",
    },
    {
      id: "entity",
      title: "Add the repositories or organization runners serve",
      done: f.entities.length > 0 && failing.length === 0,
      detail:
        failing.length > 0
          ? `GitHub refuses the credentials of ${failing.map((e) => `${e.label} (${e.credentialsFailing})`).join(", ")}`
          : f.entities.length > 0
            ? f.entities.map((e) => e.label).join(", ")
            : "add them from the installation below",
    },
    {
      id: "provider",
      title: "Connect a cloud (a provider shim)",
      done: f.providers > 0,
      detail:
        f.providers > 0
          ? `${f.providers} provider(s)`
          : "npx edgerunner setup --shim aws-ec2 (or gce, or hetzner) deploys that cloud's shim and registers it; or register a shim below",
    },
    {
      id: "scaleset",
      title: "Create a scale set",
      done: f.scaleSets.length > 0,
      detail:
        f.scaleSets.length > 0
          ? f.scaleSets.map((s) => `${s.name}: ${runsOnLine(s.labels)}`).join("; ")
          : "pick the image, size and labels below",
    },
    {
      id: "webhook",
      title: "GitHub delivers workflow jobs",
      done: fed.length > 0 || pulls,
      detail: pulls
        ? "scale sets pull their jobs from GitHub's scale set API: no webhook needed"
        : fed.length > 0
          ? `jobs arrived for ${fed.map((e) => e.label).join(", ")}`
          : (f.publicUrlProblem ??
            "no job delivered yet: push a workflow with the runs-on line above (the App's Advanced tab on GitHub lists every delivery and our answer)"),
    },
    {
      id: "runner",
      title: "A runner came up",
      done: up.length > 0,
      detail:
        up.length > 0
          ? `runners came up in ${up.map((s) => s.name).join(", ")}`
          : "none yet: once a job is queued (or min idle is above 0), a machine is created and its runner registers; the scale set's page shows each step",
    },
  ];
}
