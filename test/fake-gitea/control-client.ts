/**
 * Drives the fake Gitea from tests (Node or workerd): make a world, seed it, queue jobs, set
 * faults, read its state. Only fetch; never imports the server.
 */
import type { FakeGiteaJob, GiteaFaults, GiteaSeed, GiteaSettings, GiteaWorldState } from "./types";

async function ok(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`fake Gitea ${what}: ${res.status} ${await res.text()}`);
  return res;
}

export class FakeGiteaWorld {
  /** The world's base URL: a Gitea endpoint's base_url (its API is under /api/v1). */
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  async seed(seed: GiteaSeed): Promise<void> {
    await ok(await fetch(`${this.url}/_fake/seed`, { method: "POST", body: JSON.stringify(seed) }), "seed");
  }
  async state(): Promise<GiteaWorldState> {
    return (await (await ok(await fetch(`${this.url}/_fake/state`), "state")).json()) as GiteaWorldState;
  }
  async queueJobs(repository: string, labels: string[], count = 1): Promise<FakeGiteaJob[]> {
    const res = await ok(
      await fetch(`${this.url}/_fake/jobs`, { method: "POST", body: JSON.stringify({ repository, labels, count }) }),
      "jobs",
    );
    return ((await res.json()) as { jobs: FakeGiteaJob[] }).jobs;
  }
  async faults(f: GiteaFaults): Promise<void> {
    await ok(await fetch(`${this.url}/_fake/faults`, { method: "PUT", body: JSON.stringify(f) }), "faults");
  }
  async settings(s: GiteaSettings): Promise<void> {
    await ok(await fetch(`${this.url}/_fake/settings`, { method: "PUT", body: JSON.stringify(s) }), "settings");
  }
  async settle(): Promise<void> {
    await ok(await fetch(`${this.url}/_fake/settle`, { method: "POST" }), "settle");
  }
  /** A runner.v1 call as act_runner makes it (Connect JSON). */
  async runnerCall(method: string, body: unknown, runner?: { uuid: string; token: string }): Promise<Response> {
    return fetch(`${this.url}/api/actions/runner.v1.RunnerService/${method}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        ...(runner && { "x-runner-uuid": runner.uuid, "x-runner-token": runner.token }),
      },
      body: JSON.stringify(body),
    });
  }
}

export async function createGiteaWorld(fakeUrl: string): Promise<FakeGiteaWorld> {
  const res = await ok(await fetch(`${fakeUrl}/_fake/worlds`, { method: "POST" }), "new world");
  return new FakeGiteaWorld(((await res.json()) as { url: string }).url);
}
