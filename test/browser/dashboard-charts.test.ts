// The dashboard's charts in a real browser: Debian's Chromium against the coordinator under
// `wrangler dev`, with a day of data — started jobs delivered as signed webhooks with GitHub's
// timestamps spread over the last 24 hours, and a day of runners-by-state samples (the scale set
// object writes one per 5 minutes as it runs; a day of them is put in D1 directly). The test
// checks each chart's series are drawn, and saves screenshots in test-results/. Runs in Node.
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Coordinator, root } from "../../bench/harness.mjs";
import { deliverWebhook, type FakeWorldSetup } from "../../bench/harness-world.mjs";
import { type Browser, launchChromium } from "./chromium.ts";
import { type DashboardStack, startDashboardStack } from "./dashboard-stack.ts";

const ARTIFACTS = join(root, "test-results");
const HOUR = 3_600_000;
const SLOT = 300_000;

let stack: DashboardStack;
let coordinator: Coordinator;
let world: FakeWorldSetup;
let browser: Browser;
let page: Page;
let scaleSet: { id: string; name: string };

/** A job that started `hoursAgo` after waiting `waitSeconds`, as GitHub's in_progress delivery says it. */
async function deliverStartedJob(id: number, hoursAgo: number, waitSeconds: number) {
  const started = Date.now() - hoursAgo * HOUR;
  const payload = {
    action: "in_progress",
    workflow_job: {
      id,
      run_id: 5151,
      run_attempt: 1,
      name: "build",
      workflow_name: "CI",
      status: "in_progress",
      labels: ["self-hosted", "linux"],
      created_at: new Date(started - waitSeconds * 1000).toISOString(),
      started_at: new Date(started).toISOString(),
      runner_name: `elsewhere-${id}`,
      runner_id: id,
    },
    repository: { name: "app", full_name: "octo/app", owner: { login: "octo" } },
  };
  const res = await deliverWebhook(coordinator, world.webhookSecret, payload);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`webhook: ${res.status} ${text}`);
}

/** A day of samples: a working day's warm pool (min idle 3 from 08:00 to 18:00 UTC, else 1) and its load. */
function samplesSql(scaleSetId: string): string {
  const last = Math.floor(Date.now() / SLOT) * SLOT;
  const rows: string[] = [];
  for (let i = 1; i <= 288; i++) {
    const at = last - i * SLOT;
    const hour = new Date(at).getUTCHours();
    const working = hour >= 8 && hour < 18;
    const minIdle = working ? 3 : 1;
    const busy = working ? 2 + Math.round(2 * Math.abs(Math.sin(i / 9))) : i % 5 === 0 ? 1 : 0;
    const booting = i % 7 === 0 ? 1 : 0;
    const other = i % 19 === 0 ? 1 : 0;
    rows.push(`('${scaleSetId}', ${at}, ${minIdle}, ${busy}, ${booting}, ${other}, ${minIdle})`);
  }
  return `INSERT OR IGNORE INTO scale_set_samples (scale_set_id, at, idle, busy, booting, other, min_idle) VALUES\n${rows.join(",\n")};\n`;
}

beforeAll(async () => {
  stack = await startDashboardStack({
    // The samples' working day as a schedule: drawn as bands behind the scale set's runners.
    min_idle_runners: 1,
    schedules: [
      { name: "workday", cron: "0 8 * * *", timezone: "UTC", min_idle_runners: 3 },
      { name: "night", cron: "0 18 * * *", timezone: "UTC", min_idle_runners: 1 },
    ],
  });
  ({ coordinator, world, scaleSet } = stack);
  // Three jobs an hour for a day, waiting longer in the working day's busy hours.
  let id = 73_000_000;
  for (let h = 0; h < 24; h++) {
    for (const wait of [8, 20 + h, 40 + 5 * h]) await deliverStartedJob(id++, h + 0.25, wait);
  }
  const dir = mkdtempSync(join(tmpdir(), "edgerunner-samples-"));
  try {
    const file = join(dir, "samples.sql");
    writeFileSync(file, samplesSql(scaleSet.id));
    coordinator.sql(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  browser = await launchChromium({ width: 1440, height: 1000 });
  page = browser.page;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The `data-series` of a chart's shapes, in drawing order. */
const seriesOf = (chart: string) =>
  page.locator(`#${chart} svg [data-series]`).evaluateAll((els) => els.map((e) => e.getAttribute("data-series")));

describe("dashboard charts in Chromium", () => {
  it("draws queue time and runners by state on the scale set page and the overview, and saves screenshots", async () => {
    await page.goto(`${coordinator.url}/ui`);
    await page.fill("#token", coordinator.devVars.ADMIN_TOKEN!);
    await Promise.all([page.waitForURL(`${coordinator.url}/ui`), page.click("button[type=submit]")]);
    mkdirSync(ARTIFACTS, { recursive: true });

    for (const [path, scope, shot] of [
      [`/ui/scalesets/${scaleSet.id}`, "linux-x64", "dashboard-charts-scaleset"],
      ["/ui", "all scale sets", "dashboard-charts-overview"],
    ] as const) {
      await page.goto(`${coordinator.url}${path}`);
      expect(await seriesOf("queue-time-chart")).toEqual(["p50", "p95"]);
      expect(await seriesOf("runners-chart")).toEqual(["idle", "busy", "booting", "other", "min_idle"]);
      // Named for screen readers, with a legend and hour ticks the browser lays out.
      const svg = page.locator("#queue-time-chart svg");
      await expect(svg.getAttribute("role")).resolves.toBe("img");
      await expect(page.locator("#queue-time-chart svg title").first().textContent()).resolves.toContain(scope);
      await expect(page.locator("#queue-time-chart svg desc").textContent()).resolves.toMatch(/of the 72 job\(s\) that started/);
      await expect(page.locator("#runners-chart [data-legend] text").allTextContents()).resolves.toEqual([
        "idle",
        "busy",
        "booting",
        "other",
        "min idle",
      ]);
      expect((await page.locator("#runners-chart [data-axis=x] text").allTextContents()).length).toBeGreaterThanOrEqual(7);
      // The schedule as bands on the scale set's page (each scale set has its own: none on the overview).
      const bands = await page.locator("#runners-chart [data-band]").evaluateAll((els) => els.map((e) => e.getAttribute("data-band")));
      if (scope === "linux-x64") {
        expect(bands.length).toBeGreaterThanOrEqual(2);
        expect(new Set(bands)).toEqual(new Set(["workday: min idle 3", "night: min idle 1"]));
        await expect(page.locator("#runners-chart svg desc").textContent()).resolves.toMatch(/Shaded, the schedule entries in force: /);
      } else expect(bands).toEqual([]);
      // Drawn, not just present: the shapes have a size on the page.
      const box = await page.locator('#runners-chart [data-series="busy"]').boundingBox();
      expect(box!.width).toBeGreaterThan(300);
      expect(box!.height).toBeGreaterThan(10);

      const charts = join(ARTIFACTS, `${shot}.png`);
      await page.locator(".charts").screenshot({ path: charts });
      expect(statSync(charts).size).toBeGreaterThan(10_000);
      await page.screenshot({ path: join(ARTIFACTS, `${shot}-page.png`), fullPage: true });
    }
  });
});
