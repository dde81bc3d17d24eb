import { describe, expect, it } from "vitest";
import type { components } from "../../../cli/src/api-types.ts";
import { renderReport, withOutsideCheck } from "../../../cli/src/commands/doctor.ts";
import { json, runCli } from "./run-cli.ts";

type Report = components["schemas"]["DoctorReport"];

const PUBLIC_URL = "https://edgerunner.example.workers.dev";

const report = (checks: Report["checks"]): Report => ({
  ok: !checks.some((c) => c.status === "fail"),
  checked_at: "2026-11-22T10:00:00.000Z",
  public_url: PUBLIC_URL,
  checks,
});

const healthy = report([
  { id: "config.public_url", subject: "PUBLIC_URL", status: "ok", summary: `${PUBLIC_URL}.` },
  { id: "config.public_url_reachable", subject: "PUBLIC_URL, seen from the coordinator", status: "skip", summary: "Another origin." },
  {
    id: "config.metrics_token",
    subject: "METRICS_TOKEN",
    status: "warn",
    summary: "Not set.",
    fix: "npx wrangler secret put METRICS_TOKEN",
  },
]);

/** `edgerunner doctor …` with the API and PUBLIC_URL played by `answer`. */
const run = (argv: string[], answer: (req: Request) => Response | Promise<Response>) => runCli(["doctor", ...argv], answer);

/** The coordinator answers `r`; PUBLIC_URL/healthz answers `healthz`. */
const world =
  (r: Report, healthz: (req: Request) => Response | Promise<Response> = () => json(200, { status: "ok" })) =>
  (req: Request) =>
    req.url.startsWith(`${PUBLIC_URL}/healthz`) ? healthz(req) : json(200, r);

describe("edgerunner doctor", () => {
  it("prints a mark per check, the fix under warnings, its own outside check, and exits 0 when nothing failed", async () => {
    const r = await run([], world(healthy));
    expect(r.code).toBe(0);
    expect(r.requests.map((q) => new URL(q.url).pathname)).toEqual(["/api/v1/doctor", "/healthz"]);
    expect(r.requests[0]!.headers.get("authorization")).toBe("Bearer t0k");
    // The outside request carries no token: PUBLIC_URL may be another host than the one configured.
    expect(r.requests[1]!.headers.get("authorization")).toBeNull();
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(`✓ PUBLIC_URL: ${PUBLIC_URL}.`);
    expect(lines[1]).toBe("- PUBLIC_URL, seen from the coordinator: Another origin.");
    expect(lines[2]).toMatch(/^✓ PUBLIC_URL, seen from here: https:\/\/edgerunner\.example\.workers\.dev\/healthz answered in \d+ ms\.$/);
    expect(lines[3]).toBe("! METRICS_TOKEN: Not set.");
    expect(lines[4]).toBe("    fix: npx wrangler secret put METRICS_TOKEN");
    expect(r.stdout).toContain("2 ok, 1 warning(s), 0 failed, 1 skipped: every link works.");
    expect(r.stderr).toContain("checking");
  });

  it("a failed check: the fix indented under it, exit 4", async () => {
    const broken = report([
      ...healthy.checks,
      {
        id: "provider.shim:p",
        subject: "provider aws",
        status: "fail",
        summary: "The shim refused our signature (401).",
        fix: "edgerunner provider update aws --secret-from-file FILE",
      },
    ]);
    const r = await run([], world(broken));
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(
      "✗ provider aws: The shim refused our signature (401).\n    fix: edgerunner provider update aws --secret-from-file FILE\n",
    );
    expect(r.stdout).toContain("1 failed");
  });

  it("PUBLIC_URL unreachable from here fails the report even when the coordinator saw nothing wrong", async () => {
    const r = await run(
      [],
      world(healthy, () => {
        throw new TypeError("fetch failed", { cause: new Error("getaddrinfo ENOTFOUND edgerunner.example.workers.dev") });
      }),
    );
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(
      "✗ PUBLIC_URL, seen from here: https://edgerunner.example.workers.dev/healthz could not be reached from here (getaddrinfo ENOTFOUND",
    );
  });

  it("another answer than the coordinator's fails; Cloudflare Access in front warns", async () => {
    const other = await run(
      [],
      world(healthy, () => new Response("<html>", { status: 404 })),
    );
    expect([other.code, other.stdout]).toEqual([4, expect.stringContaining("answered HTTP 404")]);
    const access = await run(
      [],
      world(
        healthy,
        () => new Response(null, { status: 302, headers: { location: "https://myteam.cloudflareaccess.com/cdn-cgi/access/login" } }),
      ),
    );
    expect(access.code).toBe(0);
    expect(access.stdout).toContain("! PUBLIC_URL, seen from here:");
    expect(access.stdout).toContain("Bypass policy");
  });

  it("--json: the report with the outside check, as one document; exit 4 still tells a failure", async () => {
    const r = await run(
      ["--json"],
      world(healthy, () => new Response("", { status: 500 })),
    );
    expect(r.code).toBe(4);
    const doc = JSON.parse(r.stdout) as Report;
    expect(doc.ok).toBe(false);
    expect(doc.checks.map((c) => c.id)).toEqual([
      "config.public_url",
      "config.public_url_reachable",
      "cli.public_url_outside",
      "config.metrics_token",
    ]);
    expect(r.stderr).toBe("");
  });

  it("--scaleset takes a name and asks for that scale set only", async () => {
    const id = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a60";
    const r = await run(["--scaleset", "linux"], (req) =>
      new URL(req.url).pathname === "/api/v1/scalesets" ? json(200, [{ id, name: "linux" }]) : world(healthy)(req),
    );
    expect(r.code).toBe(0);
    expect(r.requests.map((q) => new URL(q.url).search).filter(Boolean)).toEqual([`?scaleset=${id}`]);
  });

  it("an API error is the usual exit 1, and nothing is fetched from PUBLIC_URL", async () => {
    const r = await run([], () => json(404, { error: "scale set not found", code: "not_found", details: { id: "x" } }));
    expect(r.code).toBe(1);
    expect(r.requests).toHaveLength(1);
  });
});

describe("the report as the CLI prints it", () => {
  it("no PUBLIC_URL: the outside check is skipped; it goes first when the coordinator's own check is missing", () => {
    const r = withOutsideCheck({ ...healthy, public_url: null, checks: [] }, { id: "x", subject: "s", status: "skip", summary: "n/a" });
    expect(r.checks.map((c) => c.id)).toEqual(["x"]);
    expect(renderReport(r)).toBe("- s: n/a\n\n0 ok, 0 warning(s), 0 failed, 1 skipped: every link works.\n");
  });
});
