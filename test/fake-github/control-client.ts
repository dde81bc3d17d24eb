/**
 * Drives the fake GitHub from tests (Node or workerd): make a world, seed it, inject faults,
 * read what the coordinator sent. Only fetch; never imports the server.
 */
import type { Fault, FakeRunner, RecordedRequest, Seed, SeedJob, SeedRunnerDownload, WorldDump, WorldInfo } from "./types";

async function expectOk(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`fake GitHub ${what}: ${res.status} ${await res.text()}`);
  return res;
}

export class FakeWorld {
  readonly info: WorldInfo;

  constructor(info: WorldInfo) {
    this.info = info;
  }

  get url() {
    return this.info.url;
  }
  get ghesUrl() {
    return this.info.ghes_url;
  }

  private async control(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await fetch(`${this.info.url}/_fake/${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return expectOk(res, `${method} ${path}`);
  }

  async seed(seed: Seed) {
    await this.control("POST", "seed", seed);
  }
  async state(): Promise<WorldDump> {
    return (await this.control("GET", "state")).json();
  }
  /** REST requests received, oldest first. */
  async requests(): Promise<RecordedRequest[]> {
    return (await this.control("GET", "requests")).json();
  }
  async clearRequests() {
    await this.control("DELETE", "requests");
  }
  async fault(...faults: Fault[]) {
    await this.control("POST", "faults", faults);
  }
  async clearFaults() {
    await this.control("DELETE", "faults");
  }
  async setNow(now: number) {
    await this.control("POST", "clock", { now });
  }
  async updateRunner(id: number, patch: { busy?: boolean; status?: "online" | "offline" }): Promise<FakeRunner> {
    return (await this.control("PATCH", `runners/${id}`, patch)).json();
  }
  /** Serves a runner package from the world and lists it in its runner downloads; returns the listed entry. */
  async addRunnerDownload(d: SeedRunnerDownload): Promise<{ download_url: string; sha256_checksum?: string; temp_download_token?: string }> {
    return (await this.control("POST", "runner-downloads", d)).json();
  }
  async putJobs(...jobs: SeedJob[]) {
    await this.control("POST", "jobs", jobs);
  }
}

/** A fresh, empty world on the fake GitHub at `serverUrl`. */
export async function createWorld(serverUrl: string): Promise<FakeWorld> {
  const res = await expectOk(await fetch(`${serverUrl}/_fake/worlds`, { method: "POST" }), "create world");
  return new FakeWorld((await res.json()) as WorldInfo);
}
