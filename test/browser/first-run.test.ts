// The first-run page in a real browser, as a new user goes through it: an empty coordinator
// (`wrangler dev`), Debian's Chromium, the fake GitHub's web pages for creating and installing
// the App (served at `localhost`, so GitHub's redirects back to the coordinator at 127.0.0.1
// are cross-site, as github.com's are), and the simulator shim whose runners take jobs. From
// the login to a runner serving a queued job, every step by clicking. Runs in Node.
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, root, sleep, startCoordinator } from "../../bench/harness.mjs";
import { type Simulator, startSimulator } from "../../shims/simulator/simulator.ts";
import { FakeWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { type Browser, launchChromium } from "./chromium.ts";

const ARTIFACTS = join(root, "test-results");

let github: FakeGithub;
let sim: Simulator;
let coordinator: Coordinator;
let world: FakeWorld;
/** The fake GitHub's web pages, at `localhost` (another site than the coordinator's 127.0.0.1). */
let web: string;
let browser: Browser;
let page: Page;
const SHIM_SECRET = "first-run-shim-secret-0001";

const shot = async (name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `first-run-${name}.png`), fullPage: true });
};

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  [github, sim] = await Promise.all([startFakeGithub(), startSimulator({ config: { boot_delay_ms: 200, job_ms: 300, poll_ms: 100 } })]);
  coordinator = await startCoordinator({ NUDGE_DELAY_SECONDS: "0" });
  const info = await (await fetch(`${github.url}/_fake/worlds`, { method: "POST" })).json();
  world = new FakeWorld(info);
  await world.seed({ orgs: ["octo"], repos: ["octo/app", "octo/docs"] });
  web = info.url.replace("127.0.0.1", "localhost");
  // An empty coordinator's github.com endpoint, pointed at the fake (nothing uses it yet).
  await coordinator.api("PUT", "/github/endpoints/github.com", { base_url: web, api_base_url: info.url });

  browser = await launchChromium({ width: 1440, height: 1000 });
  page = browser.page;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await coordinator?.stop();
  await sim?.stop();
  await github?.close();
});

describe("first run in Chromium", () => {
  it("goes from an empty coordinator to a runner serving a queued job by clicking", async () => {
    // Log in where the setup command sends a new user: the first-run page, via the login.
    await page.goto(`${coordinator.url}/ui/setup`);
    expect(new URL(page.url()).pathname).toBe("/ui/login");
    await page.fill("#token", coordinator.devVars.ADMIN_TOKEN!);
    await Promise.all([page.waitForURL(`${coordinator.url}/ui/setup`), page.click("button[type=submit]")]);
    await expect(page.locator('#setup-steps li[data-step="app"]').getAttribute("data-done")).resolves.toBe("false");
    await shot("1-empty");

    // 1. Create the App, owned by the organization octo, through GitHub's manifest flow.
    await page.fill("#create-app input[name=name]", "Edgerunner first run");
    await page.check("#create-app input[name=owner][value=organization]");
    await page.fill("#create-app input[name=org]", "octo");
    await Promise.all([page.waitForURL("**/ui/setup/app"), page.click("text=Create a GitHub App for this coordinator")]);
    await expect(page.locator("dl.kv").textContent()).resolves.toContain("administration: write");
    await Promise.all([page.waitForURL(`${web}/organizations/octo/settings/apps/new**`), page.click("text=Continue to GitHub")]);
    await expect(page.locator("h1").textContent()).resolves.toContain("Create GitHub App for octo");
    await Promise.all([
      page.waitForURL(`${coordinator.url}/ui/setup?done=app_created**`),
      page.click("button:text-is('Create GitHub App')"),
    ]);
    await expect(page.locator(".flash").first().textContent()).resolves.toContain("GitHub App created");
    const [app] = (await coordinator.api("GET", "/github/apps")) as { slug: string; app_id: number; owner: string }[];
    expect(app).toMatchObject({ slug: "edgerunner-first-run", owner: "octo" });

    // 2. Install it on octo, all repositories: GitHub sends the browser to the App's setup URL.
    // (The App's html_url, which "Install it" follows, is on the fake's API host: the conversion's answer says so.)
    await Promise.all([page.waitForURL(`**/apps/${app!.slug}/installations/new**`), page.click(`#install-${app!.slug}`)]);
    await Promise.all([page.waitForURL(`${coordinator.url}/ui/setup?done=installed**`), page.click("button:text-is('Install')")]).catch(
      async (e) => {
        console.log(await page.content());
        throw e;
      },
    );
    const installation = page.locator("[data-installation]");
    await expect(installation.textContent()).resolves.toContain("Installed on octo");

    // 3. Add the repository octo/app from the installation's offers.
    await installation.locator("input[name=repository][value='octo/app']").check();
    await Promise.all([page.waitForURL("**/ui/setup?done=entities_added**"), installation.locator("text=Add the selected").click()]);
    await expect(installation.locator("input[name=repository][value='octo/app']").isDisabled()).resolves.toBe(true);

    // 4. Connect the simulator shim as the provider.
    const tenant = await (
      await fetch(`${sim.url}/_control/tenants`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ secret: SHIM_SECRET, callback_url: `${coordinator.url}/api/v1/providers/sim/callbacks` }),
      })
    ).json();
    await page.fill("#add-provider input[name=name]", "sim");
    await page.fill("#add-provider input[name=url]", tenant.url);
    await page.fill("#add-provider input[name=secret]", SHIM_SECRET);
    await Promise.all([page.waitForURL("**/ui/setup?done=provider_added**"), page.click("text=Register the provider")]);

    // 5. The first scale set, in the form; the page gives the runs-on line.
    await page.fill("#create-scaleset input[name=image]", "ubuntu:24.04");
    await page.fill("#create-scaleset input[name=flavor]", "small");
    await page.fill("#create-scaleset input[name=labels]", "self-hosted, linux");
    await page.fill("#create-scaleset input[name=max_runners]", "2");
    await Promise.all([page.waitForURL("**/ui/setup?done=scaleset_created**"), page.click("text=Create the scale set")]);
    await expect(page.locator("code.runs-on").textContent()).resolves.toBe("runs-on: [linux, self-hosted]");
    await shot("2-configured");

    // 6. A workflow job queued on octo/app reaches the coordinator through the App's webhook,
    // a machine boots at the simulator, its runner takes the job and finishes it.
    const [job] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted", "linux"] });
    const done = await until("the job to complete", async () => {
      const jobs = await world.workflowJobs();
      const j = jobs.find((x) => x.id === job!.id);
      return j?.status === "completed" ? j : null;
    });
    expect(done.runner_name).toMatch(/^edgerunner-/);

    await page.goto(`${coordinator.url}/ui/setup`);
    for (const step of ["app", "install", "entity", "provider", "scaleset", "webhook", "runner"]) {
      await expect(page.locator(`#setup-steps li[data-step="${step}"]`).getAttribute("data-done"), step).resolves.toBe("true");
    }
    await shot("3-runner-up");

    // 7. "Check every link now": the setup check on the page, every link of this chain ok.
    await Promise.all([page.waitForURL("**/ui/setup?check=1**"), page.click("#check-now")]);
    const rows = page.locator("#doctor tbody tr");
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.id));
    for (const prefix of ["credentials.", "provider.", "scaleset."])
      expect(
        ids.some((id) => id.startsWith(prefix)),
        prefix,
      ).toBe(true);
    const failed = await page.locator("#doctor tbody tr:has(.bad)").allTextContents();
    // Only what loopback cannot have: PUBLIC_URL is not public.
    expect(failed.filter((t) => !/PUBLIC_URL|public/i.test(t))).toEqual([]);
    await shot("4-checked");
    expect(statSync(join(ARTIFACTS, "first-run-3-runner-up.png")).size).toBeGreaterThan(10_000);
  });
});
