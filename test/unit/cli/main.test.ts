import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { json, runCli } from "./run-cli.ts";

const run = (argv: string[], answer: (req: Request) => Response | Promise<Response>, env: Record<string, string> = {}) =>
  runCli(argv, answer, { env, stdin: "stdin-secret-0000000001\n" });

describe("main", () => {
  it("sends the token, prints --json as the API answered, exit 0", async () => {
    const r = await run(["provider", "list", "--json"], () =>
      json(200, [{ name: "aws", url: "https://s", timeout_seconds: 30, description: "" }]),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ name: "aws", url: "https://s", timeout_seconds: 30, description: "" }]);
    expect(r.requests[0]!.url).toBe("https://er.example.com/api/v1/providers");
    expect(r.requests[0]!.headers.get("authorization")).toBe("Bearer t0k");
  });

  it("sends the secret from stdin in the body, never anywhere else", async () => {
    const r = await run(["provider", "update", "aws", "--secret-from-stdin"], () => json(200, { name: "aws" }));
    expect(r.code).toBe(0);
    expect(r.requests[0]!.method).toBe("PUT");
    expect(await r.requests[0]!.json()).toEqual({ secret: "stdin-secret-0000000001" });
    expect(r.requests[0]!.url).not.toContain("stdin-secret");
  });

  it("an API error: the human form, or with --json the API's body; exit 1 either way", async () => {
    const body = { error: "provider is in use", code: "in_use", details: { scale_sets: ["linux"] }, request_id: "rid" };
    const human = await run(["provider", "delete", "aws"], () => json(409, body));
    expect(human.code).toBe(1);
    expect(human.stderr).toBe(
      'edgerunner: provider is in use (HTTP 409, in_use)\n  {\n    "scale_sets": [\n      "linux"\n    ]\n  }\n  request id: rid\n',
    );
    const scripted = await run(["provider", "delete", "aws", "--json"], () => json(409, body));
    expect(scripted.code).toBe(1);
    expect(JSON.parse(scripted.stderr)).toEqual({ status: 409, ...body });
    expect(scripted.stdout).toBe("");
  });

  it("a usage error sends nothing; help asked goes to stdout with exit 0", async () => {
    const r = await run(["scaleset", "update", "linux"], () => json(200, {}));
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toContain("nothing to change");
    expect(r.requests).toEqual([]);
    const help = await run(["--help"], () => json(200, {}));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: edgerunner <command> \[options\]/);
  });

  it("no answer at all: exit 3", async () => {
    const r = await run(["job", "list"], () => {
      throw new TypeError("fetch failed", { cause: new Error("getaddrinfo ENOTFOUND er.example.com") });
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe("edgerunner: cannot reach https://er.example.com: getaddrinfo ENOTFOUND er.example.com\n");
  });

  it("scaleset update --intake sends the intake mode", async () => {
    const id = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a60";
    const r = await run(["scaleset", "update", id, "--intake", "scaleset_api", "--json"], () => json(200, { id, intake: "scaleset_api" }));
    expect(r.code).toBe(0);
    expect(r.requests.at(-1)!.method).toBe("PUT");
    expect(await r.requests.at(-1)!.json()).toEqual({ intake: "scaleset_api" });
  });

  it("org create and update send --pool-credentials as a list; '' empties the pool", async () => {
    const id = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a61";
    const org = (pool: string[]) => ({
      id,
      name: "octo",
      endpoint: "github.com",
      credentials_name: "app-1",
      pool_credentials: pool.map((name, i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, name })),
      forge: "github",
      webhook_url: "https://er.example.com/webhooks/github",
    });
    const created = await run(
      ["org", "create", "--name", "octo", "--credentials", "app-1", "--pool-credentials", "app-2, app-3", "--webhook-secret-from-stdin"],
      () => json(201, org(["app-2", "app-3"])),
    );
    expect(created.code, created.stderr).toBe(0);
    expect(await created.requests[0]!.json()).toEqual({
      name: "octo",
      credentials_name: "app-1",
      webhook_secret: "stdin-secret-0000000001",
      pool_credentials: ["app-2", "app-3"],
    });
    expect(created.stdout).toMatch(/^pool_credentials: +app-2,app-3$/m);

    const cleared = await run(["org", "update", id, "--pool-credentials", ""], () => json(200, org([])));
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.requests[0]!.method).toBe("PUT");
    expect(await cleared.requests[0]!.json()).toEqual({ pool_credentials: [] });
    expect(cleared.stdout).toMatch(/^pool_credentials: +-$/m);

    // Not given: not sent, so an update leaves the pool as it is.
    const other = await run(["org", "update", id, "--credentials", "app-2"], () => json(200, org(["app-3"])));
    expect(await other.requests[0]!.json()).toEqual({ credentials_name: "app-2" });
  });

  it("repo list shows each repository's pool by name", async () => {
    const repo = (name: string, pool: string[]) => ({
      id: `id-${name}`,
      owner: "octo",
      name,
      endpoint: "github.com",
      credentials_name: "app-1",
      pool_credentials: pool.map((p) => ({ id: `id-${p}`, name: p })),
      use_parent_scale_sets: false,
      forge: "github",
      webhook_url: "https://er.example.com/webhooks/github",
    });
    const r = await run(["repo", "list"], () => json(200, [repo("app", ["app-2", "app-3"]), repo("lib", [])]));
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = r.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID +NAME +ENDPOINT +FORGE +CREDENTIALS +POOL +PARENT SCALE SETS +WEBHOOK URL$/);
    expect(rows[0]!.slice(header!.indexOf("POOL"))).toMatch(/^app-2,app-3 +no /);
    expect(rows[1]!.slice(header!.indexOf("POOL"))).toMatch(/^- +no /);
  });

  it("job list passes its filters as the API's query", async () => {
    const r = await run(["job", "list", "--unmatched", "--status", "queued", "--limit", "20"], () =>
      json(200, { jobs: [], next_cursor: "77" }),
    );
    expect(new URL(r.requests[0]!.url).searchParams.toString()).toBe("unmatched=true&status=queued&limit=20");
    expect(r.stdout).toContain("more: edgerunner job list --cursor 77");
  });

  it("profile show: where the URL and token come from, never the token", async () => {
    const r = await run(["profile", "show", "--url", "https://flag.example.com/"], () => json(500, {}));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^url: +https:\/\/flag\.example\.com$/m);
    expect(r.stdout).toMatch(/^url_from: +--url$/m);
    expect(r.stdout).toMatch(/^token_from: +EDGERUNNER_TOKEN$/m);
    expect(r.stdout).not.toContain("t0k");
    expect(r.requests).toEqual([]);
  });

  it("sends an Access service token as CF-Access-Client-Id/Secret, with or without a bearer token", async () => {
    const env = { EDGERUNNER_TOKEN: "", EDGERUNNER_ACCESS_CLIENT_ID: "cid.access", EDGERUNNER_ACCESS_CLIENT_SECRET: "csecret" };
    const r = await run(["scaleset", "list", "--json"], () => json(200, []), env);
    expect(r.code).toBe(0);
    const headers = r.requests[0]!.headers;
    expect([headers.get("cf-access-client-id"), headers.get("cf-access-client-secret"), headers.get("authorization")]).toEqual([
      "cid.access",
      "csecret",
      null,
    ]);
  });

  it("login checks the URL and credentials, then saves them as the current profile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgerunner-cli-login-"));
    try {
      const env = { EDGERUNNER_CONFIG: join(dir, "config.json") };
      const refused = await run(
        ["login", "--url", "https://er.example.com/", "--token-from-stdin"],
        () => json(401, { error: "wrong token", code: "unauthorized" }),
        env,
      );
      expect(refused.code).toBe(1);
      expect(existsSync(join(dir, "config.json"))).toBe(false);
      writeFileSync(join(dir, "cs"), "csecret\n");
      const r = await run(
        [
          "login",
          "--url",
          "https://er.example.com/",
          "--profile",
          "edge",
          "--access-client-id",
          "cid.access",
          "--access-client-secret-from-file",
          join(dir, "cs"),
        ],
        () => json(200, []),
        env,
      );
      expect(r.code).toBe(0);
      expect(r.requests[0]!.headers.get("cf-access-client-secret")).toBe("csecret");
      expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8"))).toEqual({
        current: "edge",
        profiles: { edge: { url: "https://er.example.com", access_client_id: "cid.access", access_client_secret: "csecret" } },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
