import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSession, SESSION_COOKIE } from "../../src/ui/session";
import { ADMIN_TOKEN, insertInstance, seed } from "./helpers";
import { world } from "./observed-world";
import { login, ORIGIN, ui } from "./ui-helpers";

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? null;

async function scaleSetRow(id: string) {
  return env.DB.prepare("SELECT enabled, updated_at FROM scale_sets WHERE id = ?")
    .bind(id)
    .first<{ enabled: number; updated_at: number }>();
}

describe("dashboard login", () => {
  it("sends anyone without a session to the login page, and refuses their POSTs", async () => {
    const res = await ui("GET", "/ui");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/login");
    expect((await ui("GET", "/ui/jobs")).status).toBe(303);
    const page = await ui("GET", "/ui/login");
    expect(page.status).toBe(200);
    expect(page.html).toContain('type="password"');
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect((await ui("POST", "/ui/scalesets/00000000-0000-4000-8000-000000000000/enabled", { form: { enabled: "false" } })).status).toBe(
      401,
    );
  });

  it("sends the same security headers with every answer: pages, redirects, refusals", async () => {
    const { cookie } = await login();
    const answers = [
      await ui("GET", "/ui/login"),
      await ui("GET", "/ui"),
      await ui("GET", "/ui", { cookie: cookie! }),
      await ui("POST", "/ui/logout", { cookie: cookie! }),
      await login("wrong").then((l) => l.res),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 303, 200, 403, 401]);
    for (const a of answers) {
      expect(a.headers.get("content-security-policy")).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(a.headers.get("x-frame-options")).toBe("DENY");
      expect(a.headers.get("x-content-type-options")).toBe("nosniff");
      // Not no-referrer: with it Chromium sends `Origin: null` on the dashboard's own form posts.
      expect(a.headers.get("referrer-policy")).toBe("same-origin");
      expect(a.headers.get("cache-control")).toBe("no-store");
      // Whether the whole host is HTTPS-only is the zone's setting, not the dashboard's.
      expect(a.headers.get("strict-transport-security")).toBeNull();
    }
  });

  it("refuses a wrong token without setting a cookie", async () => {
    for (const token of ["wrong", `${ADMIN_TOKEN}x`, ""]) {
      const { res, cookie } = await login(token);
      expect(res.status).toBe(401);
      expect(cookie).toBeNull();
      expect(res.html).toContain("not the admin token");
    }
  });

  it("logs in with the admin token into an HttpOnly, Secure, SameSite=Strict, expiring session cookie that is not the token", async () => {
    const { res, cookie } = await login();
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui");
    const set = res.headers.get("set-cookie")!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/Secure/i);
    expect(set).toMatch(/SameSite=Strict/i);
    expect(set).toMatch(/Path=\/ui/);
    expect(set).toMatch(/Max-Age=\d+/);
    expect(cookie).not.toContain(ADMIN_TOKEN);
    expect(decodeURIComponent(cookie!)).not.toContain(ADMIN_TOKEN);
    const home = await ui("GET", "/ui", { cookie: cookie! });
    expect(home.status).toBe(200);
    expect(home.html).toContain("Scale sets");
  });

  it("rejects tampered, forged and expired sessions", async () => {
    const { cookie } = await login();
    const [v, exp, nonce, sig] = cookie!.split(".");
    const tampered = [
      `${v}.${Number(exp) + 1000}.${nonce}.${sig}`,
      `${v}.${exp}.${nonce}x.${sig}`,
      `${v}.${exp}.${nonce}.${sig!.slice(0, -2)}AA`,
      ADMIN_TOKEN,
      "",
    ];
    for (const c of tampered) expect((await ui("GET", "/ui", { cookie: c })).status).toBe(303);
    // Signed with another token: not ours.
    const other = await createSession("some-other-token");
    expect((await ui("GET", "/ui", { cookie: other.cookie })).status).toBe(303);
    const expired = await createSession(ADMIN_TOKEN, Date.now() - 9 * 60 * 60_000);
    expect((await ui("GET", "/ui", { cookie: expired.cookie })).status).toBe(303);
  });

  it("logs out (with the CSRF token) by clearing the cookie", async () => {
    const { cookie } = await login();
    const home = await ui("GET", "/ui", { cookie: cookie! });
    expect((await ui("POST", "/ui/logout", { cookie: cookie! })).status).toBe(403);
    const out = await ui("POST", "/ui/logout", { cookie: cookie!, form: { _csrf: csrfOf(home.html)! } });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`${SESSION_COOKIE}=;.*Max-Age=0`, "i"));
  });
});

describe("dashboard pages and actions", () => {
  it("shows scale sets, instances, transitions and jobs; actions take effect through the API", async () => {
    const w = await world();
    const { cookie } = await login();
    const c = cookie!;
    // Two queued jobs and one unmatched, then a reconcile through the dashboard creates runners at the fake shim.
    const now = Date.now();
    await env.DB.batch(
      [
        [9_100_001, w.scaleSetId],
        [9_100_002, w.scaleSetId],
        [9_100_003, null],
      ].map(([id, ss]) =>
        env.DB.prepare(
          "INSERT INTO jobs (id, run_id, name, repository, owner, labels, status, scale_set_id, queued_at, created_at, updated_at) VALUES (?, 1, 'build', 'octo/app', 'octo', '[\"self-hosted\"]', 'queued', ?, ?, ?, ?)",
        ).bind(id, ss, now - 5_000, now, now),
      ),
    );

    const overview = await ui("GET", "/ui", { cookie: c });
    expect(overview.html).toContain(w.scaleSetName);
    expect(overview.html).toContain(w.provider);
    expect(overview.html).toContain(w.credentials);
    expect(overview.html).toMatch(/queued job\(s\) match no scale set/);
    const csrf = csrfOf(overview.html)!;

    const rec = await ui("POST", `/ui/scalesets/${w.scaleSetId}/reconcile`, { cookie: c, form: { _csrf: csrf } });
    expect(rec.status).toBe(303);
    expect(rec.headers.get("location")).toBe(`/ui/scalesets/${w.scaleSetId}?done=reconciled`);
    const machines = await w.shim.machines();
    expect(machines).toHaveLength(2);

    const page = await ui("GET", `/ui/scalesets/${w.scaleSetId}?done=reconciled`, { cookie: c });
    expect(page.status).toBe(200);
    expect(page.html).toContain("Reconciled.");
    for (const m of machines) expect(page.html).toContain(m.name);
    expect(page.html).toContain("created to meet demand"); // a transition's reason
    expect(page.html).toContain("desired 2");
    const jobs = await ui("GET", "/ui/jobs", { cookie: c });
    expect(jobs.html).toContain("9100003");
    expect(jobs.html).toMatch(/data-job="9100003"[\s\S]*?unmatched/);
    expect(jobs.html).toMatch(/waiting \d+s/);
    const unmatched = await ui("GET", "/ui/jobs?unmatched=true", { cookie: c });
    expect(unmatched.html).toContain("9100003");
    expect(unmatched.html).not.toContain("9100001");

    // Pause, and resume.
    const paused = await ui("POST", `/ui/scalesets/${w.scaleSetId}/enabled`, { cookie: c, form: { _csrf: csrf, enabled: "false" } });
    expect(paused.status).toBe(303);
    expect((await scaleSetRow(w.scaleSetId))!.enabled).toBe(0);
    expect((await ui("GET", `/ui/scalesets/${w.scaleSetId}`, { cookie: c })).html).toContain(">Resume<");
    expect((await ui("POST", `/ui/scalesets/${w.scaleSetId}/enabled`, { cookie: c, form: { _csrf: csrf, enabled: "true" } })).status).toBe(
      303,
    );
    expect((await scaleSetRow(w.scaleSetId))!.enabled).toBe(1);

    // Delete and force-delete instances.
    const [a, b] = machines.map((m) => m.name);
    const del = await ui("POST", `/ui/instances/${a}/delete`, { cookie: c, form: { _csrf: csrf, back: `/ui/scalesets/${w.scaleSetId}` } });
    expect(del.status).toBe(303);
    expect(del.headers.get("location")).toBe(`/ui/scalesets/${w.scaleSetId}?done=deleting`);
    const force = await ui("POST", `/ui/instances/${b}/delete`, {
      cookie: c,
      form: { _csrf: csrf, force: "true", back: "https://evil.example/" },
    });
    expect(force.headers.get("location")).toBe("/ui?done=force_deleting");
    const st = (
      await env.DB.prepare("SELECT name, status FROM instances WHERE scale_set_id = ?")
        .bind(w.scaleSetId)
        .all<{ name: string; status: string }>()
    ).results;
    expect(Object.fromEntries(st.map((r) => [r.name, r.status]))).toEqual({ [a!]: "pending_delete", [b!]: "pending_force_delete" });

    // An action the API refuses shows its error.
    const gone = await ui("POST", `/ui/instances/no-such-runner/delete`, { cookie: c, form: { _csrf: csrf } });
    expect(gone.status).toBe(404);
    expect(gone.html).toContain("instance not found");
  });

  it("shows each entity's credentials and credential pool, each credential with its health", async () => {
    const [own, failing, limited] = [await seed.patCredentials(), await seed.patCredentials(), await seed.patCredentials()];
    const org = await seed.organization({ credentials_name: own.name, pool_credentials: [failing.name, limited.name] });
    const bare = await seed.repository();
    const now = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO github_credential_state (credential_id, health, failure_reason, failed_at, updated_at) VALUES (?, 'failing', 'Bad credentials (401)', ?, ?)",
      ).bind(failing.id, now, now),
      env.DB.prepare("INSERT INTO github_credential_state (credential_id, blocked_until, updated_at) VALUES (?, ?, ?)").bind(
        limited.id,
        now + 120_000,
        now,
      ),
    ]);
    const { cookie } = await login();
    const page = await ui("GET", "/ui", { cookie: cookie! });
    expect(page.status).toBe(200);
    const row = new RegExp(`<tr data-entity="${org.id}">([\\s\\S]*?)</tr>`).exec(page.html)?.[1] ?? "";
    expect(row).toContain(`organization: ${org.name}`);
    const [ownCell, poolCell] = row.split('<td class="pool">');
    expect(ownCell).toMatch(new RegExp(`data-credentials="${own.name}">${own.name} <span class="badge ok">ok</span>`));
    // The pool in the order it was given, each member with its own state.
    expect(poolCell!.indexOf(failing.name)).toBeLessThan(poolCell!.indexOf(limited.name));
    expect(poolCell).toMatch(
      new RegExp(`${failing.name} <span class="badge bad">failing</span><div class="fault">Bad credentials \\(401\\)</div>`),
    );
    expect(poolCell).toMatch(
      new RegExp(`${limited.name} <span class="badge ok">ok</span><span class="badge bad">rate limited \\d+m \\d+s</span>`),
    );
    const bareRow = new RegExp(`<tr data-entity="${bare.id}">([\\s\\S]*?)</tr>`).exec(page.html)?.[1] ?? "";
    expect(bareRow).toContain('<td class="pool"><span class="mut">none</span></td>');
  });

  it("refuses actions without the session's CSRF token, or from another origin, and changes nothing", async () => {
    const w = await world();
    const { cookie } = await login();
    const { cookie: otherSession } = await login();
    const otherCsrf = csrfOf((await ui("GET", "/ui", { cookie: otherSession! })).html)!;
    const csrf = csrfOf((await ui("GET", "/ui", { cookie: cookie! })).html)!;
    expect(otherCsrf).not.toBe(csrf);
    const before = await scaleSetRow(w.scaleSetId);
    const path = `/ui/scalesets/${w.scaleSetId}/enabled`;
    const attempts: Parameters<typeof ui>[2][] = [
      { cookie: cookie!, form: { enabled: "false" } },
      { cookie: cookie!, form: { enabled: "false", _csrf: "" } },
      { cookie: cookie!, form: { enabled: "false", _csrf: csrf.slice(0, -1) + (csrf.endsWith("A") ? "B" : "A") } },
      { cookie: cookie!, form: { enabled: "false", _csrf: otherCsrf } },
      { cookie: cookie!, form: { enabled: "false", _csrf: csrf }, headers: { origin: "https://evil.example" } },
    ];
    for (const a of attempts) {
      const res = await ui("POST", path, a);
      expect(res.status).toBe(403);
      expect(res.html).toContain("CSRF");
    }
    expect(await scaleSetRow(w.scaleSetId)).toEqual(before);
    // The same form with the token goes through.
    expect((await ui("POST", path, { cookie: cookie!, form: { enabled: "false", _csrf: csrf }, headers: { origin: ORIGIN } })).status).toBe(
      303,
    );
    expect((await scaleSetRow(w.scaleSetId))!.enabled).toBe(0);
  });

  it("escapes everything it shows: hostile names, faults, job names and labels", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>"'&`;
    await env.DB.prepare("UPDATE scale_sets SET name = ? WHERE id = ?").bind(`ss${evil}`, ss.id).run();
    await insertInstance(ss.id, { name: `runner${evil}`, status: "error", provider_fault: `fault${evil}`, status_message: evil });
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO jobs (id, run_id, name, workflow_name, repository, owner, labels, status, scale_set_id, queued_at, created_at, updated_at) VALUES (9200001, 1, ?, ?, 'octo/app', 'octo', ?, 'queued', ?, ?, ?, ?)",
    )
      .bind(`job${evil}`, `wf${evil}`, JSON.stringify([`label${evil}`]), ss.id, now, now, now)
      .run();
    const { cookie } = await login();
    const pages = [
      await ui("GET", "/ui", { cookie: cookie! }),
      await ui("GET", `/ui/scalesets/${ss.id}`, { cookie: cookie! }),
      await ui("GET", "/ui/jobs", { cookie: cookie! }),
    ];
    for (const p of pages) {
      expect(p.status).toBe(200);
      expect(p.html).not.toContain("<script>");
      expect(p.html).not.toContain("<img src=x");
      expect(p.html).toContain("&lt;script&gt;");
    }
    expect(pages[1]!.html).toContain("runner&lt;script&gt;");
    expect(pages[1]!.html).toContain("fault&lt;script&gt;");
    expect(pages[2]!.html).toContain("job&lt;script&gt;");
    expect(pages[2]!.html).toContain("label&lt;script&gt;");
    // An instance name in a form action is URL-encoded, not raw.
    expect(pages[1]!.html).toContain(
      `/ui/instances/${encodeURIComponent(`runner${evil}`).replace(/&/g, "&amp;").replace(/'/g, "&#39;")}/delete`,
    );
  });

  it("draws queue time and runners by state for the last 24 hours, and says so when there is nothing to draw", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    const empty = await seed.scaleSet(`repositories/${repo.id}`);
    const now = Date.now();
    const hour = 3_600_000;
    // Jobs that started in the last 24 hours (one an hour ago waited 2 minutes, two now waited
    // 10 and 30 s), one that started two days ago, and one cancelled in the queue (no runner).
    const job = env.DB.prepare(
      "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, runner_name, queued_at, started_at, created_at, updated_at) VALUES (?, 1, 'octo/app', 'octo', '[]', 'completed', ?, ?, ?, ?, ?, ?)",
    );
    const started = (id: number, at: number, waitMs: number, runner: string | null = "r") =>
      job.bind(id, ss.id, runner, at - waitMs, at, at, at);
    await env.DB.batch([
      started(9_300_001, now - hour, 120_000),
      started(9_300_002, now - 60_000, 10_000),
      started(9_300_003, now - 30_000, 30_000),
      started(9_300_004, now - 48 * hour, 5_000),
      started(9_300_005, now - 60_000, 500_000, null),
    ]);
    const sample = env.DB.prepare(
      "INSERT INTO scale_set_samples (scale_set_id, at, idle, busy, booting, other, min_idle) VALUES (?, ?, ?, ?, 1, 0, 2)",
    );
    await env.DB.batch([0, 1, 2].map((i) => sample.bind(ss.id, now - (i + 1) * 300_000, 2, i)));

    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${ss.id}`, { cookie: cookie! });
    const series = (html: string, chart: string) => {
      const figure = new RegExp(`<figure[^>]*id="${chart}"[\\s\\S]*?</figure>`).exec(html)?.[0] ?? "";
      return [...figure.matchAll(/data-series="([^"]+)"/g)].map((m) => m[1]);
    };
    expect(series(page.html, "queue-time-chart")).toEqual(["p50", "p95"]);
    expect(series(page.html, "runners-chart")).toEqual(["idle", "busy", "booting", "other", "min_idle"]);
    // The percentiles of the jobs a runner took in the window: 3 jobs, the worst hour's p95 2 minutes.
    expect(page.html).toMatch(/of the 3 job\(s\) that started in the last 24 hours/);
    expect(page.html).toContain("the highest p95 was 2m");
    expect(page.html).toMatch(/2 idle, 0 busy, 1 booting, 0 other, min idle 2/);

    const none = await ui("GET", `/ui/scalesets/${empty.id}`, { cookie: cookie! });
    expect(none.html).not.toContain("data-series=");
    expect(none.html).toContain("No job started in the last 24 hours: nothing to chart yet.");
    expect(none.html).toContain("No samples yet");

    // The overview draws every scale set's together.
    const overview = await ui("GET", "/ui", { cookie: cookie! });
    expect(series(overview.html, "queue-time-chart")).toEqual(["p50", "p95"]);
    expect(series(overview.html, "runners-chart")).toEqual(["idle", "busy", "booting", "other", "min_idle"]);
    expect(overview.html).toContain("(all scale sets)");
  });

  it("shows a deleted instance's runner as gone, not as the last status it reported", async () => {
    const repo = await seed.repository();
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    const live = await insertInstance(ss.id, { runner_status: "idle" });
    const deleted = await insertInstance(ss.id, { status: "deleted", runner_status: "idle" });
    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${ss.id}`, { cookie: cookie! });
    const runnerCell = (name: string) => {
      const row = new RegExp(`<tr data-instance="${name}">([\\s\\S]*?)</tr>`).exec(page.html)![1]!;
      return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)][2]![1]!;
    };
    expect(runnerCell(live.name)).toContain(">idle<");
    expect(runnerCell(deleted.name)).not.toContain("idle<");
    expect(runnerCell(deleted.name)).toContain(">gone<");
  });
});
