// The dashboard in a real browser: Debian's Chromium driven by playwright-core, against the
// coordinator under `wrangler dev` (bench/harness.mjs), with GitHub and a cloud played by the
// fakes. Runs in Node (vitest project "browser"). Loopback only.
import { mkdirSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, root, sleep } from "../../bench/harness.mjs";
import { deliverWebhook, type FakeWorldSetup } from "../../bench/harness-world.mjs";
import { type Browser, launchChromium } from "./chromium.ts";
import { type DashboardStack, startDashboardStack } from "./dashboard-stack.ts";

const ARTIFACTS = join(root, "test-results");
const SCREENSHOT = join(ARTIFACTS, "dashboard.png");

let stack: DashboardStack;
let coordinator: Coordinator;
let world: FakeWorldSetup;
let context: BrowserContext;
let page: Page;
let browser: Browser;
let forger: Server;
let forgerUrl: string;
let scaleSet: { id: string; name: string };
let instanceNames: string[] = [];

async function deliverQueuedJob(id: number) {
  const payload = {
    action: "queued",
    workflow_job: {
      id,
      run_id: 4242,
      run_attempt: 1,
      name: "build",
      workflow_name: "CI",
      status: "queued",
      labels: ["self-hosted", "linux"],
      created_at: new Date().toISOString(),
      started_at: null,
      runner_name: null,
    },
    repository: { name: "app", full_name: "octo/app", owner: { login: "octo" } },
  };
  const res = await deliverWebhook(coordinator, world.webhookSecret, payload);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`webhook: ${res.status} ${text}`);
  return JSON.parse(text);
}

beforeAll(async () => {
  stack = await startDashboardStack();
  ({ coordinator, world, scaleSet } = stack);
  // Two queued jobs arrive as signed webhooks; the nudged scale set object creates their runners at the fake shim.
  for (const id of [71_000_001, 71_000_002]) expect(await deliverQueuedJob(id)).toMatchObject({ matched: true });
  for (let i = 0; ; i++) {
    const rows = (await coordinator.api("GET", `/instances?scaleset_id=${scaleSet.id}`)) as { name: string; status: string }[];
    if (rows.length === 2 && rows.every((r) => r.status === "running")) {
      instanceNames = rows.map((r) => r.name);
      break;
    }
    if (i > 150) throw new Error(`runners were not created: ${JSON.stringify(rows)}`);
    await sleep(200);
  }

  // Another site's page that posts a forged form to the dashboard.
  forger = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(
      `<!doctype html><form id="f" method="post" action="${coordinator.url}/ui/scalesets/${scaleSet.id}/enabled">` +
        `<input name="enabled" value="true"><input name="_csrf" value="forged"></form><script>document.getElementById("f").submit()</script>`,
    );
  });
  await new Promise<void>((r) => forger.listen(0, "127.0.0.1", r));
  forgerUrl = `http://127.0.0.1:${(forger.address() as { port: number }).port}/`;

  browser = await launchChromium();
  ({ context, page } = browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (forger ? forger.close(() => r()) : r()));
  await stack?.stop();
});

describe("dashboard in Chromium", () => {
  it("refuses a wrong login", async () => {
    await page.goto(`${coordinator.url}/ui`);
    expect(new URL(page.url()).pathname).toBe("/ui/login");
    await page.fill("#token", "not-the-token");
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/ui/login") && r.request().method() === "POST"),
      page.click("button[type=submit]"),
    ]);
    expect(res.status()).toBe(401);
    await expect(page.locator(".flash.bad").textContent()).resolves.toContain("not the admin token");
    expect(await context.cookies()).toEqual([]);
  });

  it("logs in, shows the scale set and its instances, pauses it, and saves a screenshot", async () => {
    await page.fill("#token", coordinator.devVars.ADMIN_TOKEN!);
    await Promise.all([page.waitForURL(`${coordinator.url}/ui`), page.click("button[type=submit]")]);
    const cookies = await context.cookies(`${coordinator.url}/ui`);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: "edgerunner_session", httpOnly: true, secure: true, sameSite: "Strict", path: "/ui" });
    expect(cookies[0]!.value).not.toContain(coordinator.devVars.ADMIN_TOKEN);

    const row = page.locator(`#scalesets tr[data-scaleset="${scaleSet.id}"]`);
    await expect(row.textContent()).resolves.toContain("linux-x64");
    expect(await row.locator("td").nth(5).textContent()).toBe("2"); // live
    expect(await row.locator("td").nth(4).textContent()).toBe("2"); // desired
    await expect(page.locator("#credentials").textContent()).resolves.toMatch(/pat-\w+/);
    await expect(page.locator("#providers").textContent()).resolves.toContain(world.provider);

    await Promise.all([page.waitForURL(`**/ui/scalesets/${scaleSet.id}`), row.locator("a").first().click()]);
    for (const name of instanceNames)
      await expect(page.locator(`#instances tr[data-instance="${name}"]`).textContent()).resolves.toContain("running");
    await expect(page.locator("#transitions").textContent()).resolves.toContain("created to meet demand");

    await Promise.all([page.waitForURL(`**/ui/scalesets/${scaleSet.id}?done=paused`), page.click("button:text-is('Pause')")]);
    await expect(page.locator("h1 .badge").textContent()).resolves.toBe("paused");
    await expect(page.locator(".flash").first().textContent()).resolves.toContain("Scale set paused");
    expect((await coordinator.api("GET", `/scalesets/${scaleSet.id}`)).enabled).toBe(false);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.goto(`${coordinator.url}/ui`);
    await expect(page.locator(`#scalesets tr[data-scaleset="${scaleSet.id}"]`).textContent()).resolves.toContain("paused");
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
    await page.goto(`${coordinator.url}/ui/scalesets/${scaleSet.id}`);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-scaleset.png"), fullPage: true });
  });

  it("refuses forged actions: a form without the CSRF token, and another site's form", async () => {
    await page.goto(`${coordinator.url}/ui/scalesets/${scaleSet.id}`);
    // The page's own Resume form, with its CSRF token removed.
    await page.locator("input[name=_csrf]").evaluateAll((inputs) => {
      for (const i of inputs) i.remove();
    });
    const [res] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/enabled")), page.click("button:text-is('Resume')")]);
    expect(res.status()).toBe(403);
    await expect(page.locator(".flash.bad").textContent()).resolves.toContain("CSRF");

    // A page on another origin submits a form at the dashboard.
    const [forged] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/enabled")), page.goto(forgerUrl)]);
    // Same site (loopback, another port): the Strict cookie goes along, so the origin and CSRF checks are what refuse it.
    expect(forged.status()).toBe(403);
    expect((await coordinator.api("GET", `/scalesets/${scaleSet.id}`)).enabled).toBe(false);
  });
});
