import { describe, expect, it } from "vitest";
import { demoClosing } from "../../e2e/demo-closing";
import { afterLogin } from "../../src/ui/pages/login";
import { scaleSetRoutes } from "../../src/ui/pages/scaleset";

const end = {
  coordinatorUrl: "http://127.0.0.1:8787",
  adminToken: "9e1f0c2b7a6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d",
  scaleSetId: "0b6f3c8e-2a41-4d2e-9a8f-5c1d7e3b9f20",
  fakeGithubUrl: "http://127.0.0.1:9100",
};

describe("the demo's closing lines", () => {
  const text = demoClosing(end);
  const lines = text.split("\n");

  it("point at the dashboard first, with the admin token to sign in with", () => {
    const dashboard = lines.findIndex((l) => l.trim().startsWith(`${end.coordinatorUrl}/ui `));
    expect(dashboard).toBeGreaterThan(0);
    expect(lines[dashboard]).toContain(`# sign in with the admin token ${end.adminToken}`);
    // Before anything about the API.
    expect(dashboard).toBeLessThan(lines.findIndex((l) => l.includes("/api/v1")));
  });

  it("link the demo's scale set page, which a sign-in started from it returns to", () => {
    const path = `/ui/scalesets/${end.scaleSetId}`;
    expect(lines.some((l) => l.trim().startsWith(`${end.coordinatorUrl}${path} `))).toBe(true);
    expect(scaleSetRoutes.routes.some((r) => r.method === "GET" && r.path === "/scalesets/:id")).toBe(true);
    // The dashboard sends a browser without a session to /ui/login?next=<path>, and back after.
    expect(afterLogin(path)).toBe(path);
  });

  it("keep the API's curl lines, with the same token and scale set", () => {
    expect(text).toContain(`export T='Authorization: Bearer ${end.adminToken}' U=${end.coordinatorUrl}/api/v1`);
    expect(text).toContain(`curl -sH "$T" $U/scalesets/${end.scaleSetId}`);
    expect(text).toContain(`${end.fakeGithubUrl}/_fake/workflow-jobs`);
    expect(lines.at(-1)).toBe("Ctrl-C stops everything.");
  });
});
