import { describe, expect, it } from "vitest";
import { pollerLine } from "../../../cli/src/commands/scalesets.ts";
import { json, runCli } from "./run-cli.ts";

// Gitea's and Forgejo's flags on `scaleset create/update`, and the Forgejo poller in `scaleset show`.

const ID = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a70";
const run = (argv: string[], answer: (req: Request) => Response | Promise<Response>) => runCli(argv, answer, { env: {} });

const POLLER = {
  last_poll_at: "2026-01-01T00:00:00.000Z",
  next_poll_at: "2026-01-01T00:00:05.000Z",
  waiting_jobs_seen: 3,
  held_jobs: 2,
  failures: 0,
  retry_at: null,
  last_error: null,
  invalid_jobs: 0,
};

describe("scaleset flags for Gitea and Forgejo", () => {
  it("update sends --intake poll and the runner download; 'default' and 'none' send null", async () => {
    const r = await run(
      [
        "scaleset",
        "update",
        ID,
        "--intake",
        "poll",
        "--runner-download-url",
        "https://dl.example.com/runner",
        "--runner-download-sha256",
        "ab".repeat(32),
        "--json",
      ],
      () => json(200, { id: ID }),
    );
    expect(r.code).toBe(0);
    expect(await r.requests.at(-1)!.json()).toEqual({
      intake: "poll",
      runner_download_url: "https://dl.example.com/runner",
      runner_download_sha256: "ab".repeat(32),
    });
    const back = await run(
      ["scaleset", "update", ID, "--runner-download-url", "default", "--runner-download-sha256", "none", "--json"],
      () => json(200, { id: ID }),
    );
    expect(await back.requests.at(-1)!.json()).toEqual({ runner_download_url: null, runner_download_sha256: null });
  });

  it("create sends --intake poll; repo create without a webhook secret sends none (the coordinator says when the forge needs one)", async () => {
    const created = await run(
      [
        "scaleset",
        "create",
        "--repo",
        ID,
        "--name",
        "fj",
        "--provider",
        "p",
        "--labels",
        "linux",
        "--max-runners",
        "2",
        "--image",
        "i",
        "--flavor",
        "f",
        "--intake",
        "poll",
        "--json",
      ],
      () => json(201, { id: ID }),
    );
    expect(created.code, created.stderr).toBe(0);
    expect(await created.requests.at(-1)!.json()).toMatchObject({ name: "fj", intake: "poll" });
    const repo = await run(["repo", "create", "--owner", "acme", "--name", "app", "--credentials", "forgejo-token", "--json"], () =>
      json(201, { id: ID, owner: "acme", name: "app", pool_credentials: [] }),
    );
    expect(repo.code, repo.stderr).toBe(0);
    expect(await repo.requests.at(-1)!.json()).toEqual({ owner: "acme", name: "app", credentials_name: "forgejo-token" });
  });

  it("show prints the poller in a line, with its failures and last error when it fails", () => {
    expect(pollerLine(POLLER)).toBe("last poll 2026-01-01T00:00:00.000Z; next 2026-01-01T00:00:05.000Z; 3 waiting seen; 2 held");
    expect(
      pollerLine({
        ...POLLER,
        waiting_jobs_seen: null,
        next_poll_at: null,
        failures: 2,
        retry_at: "2026-01-01T00:00:04.000Z",
        last_error: "HTTP 500",
      }),
    ).toBe(
      "last poll 2026-01-01T00:00:00.000Z; not polling (paused); - waiting seen; 2 held; 2 failed, retry at 2026-01-01T00:00:04.000Z: HTTP 500",
    );
  });
});
