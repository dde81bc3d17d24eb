import { describe, expect, it } from "vitest";
import {
  scaleSetLabelsCheck,
  scaleSetReadyCheck,
  scaleSetRunnersCheck,
  type Upstream,
  unmatchedJobsCheck,
} from "../../../src/doctor/scaleset-checks";
import { err, NOW, ok, repository, scaleSet } from "./fixtures";

const fine: Upstream = { credentials: { name: "ci", status: "ok" }, access: "ok", webhook: "ok", provider: { name: "aws", status: "ok" } };
const object = (over: object) =>
  ok({ createFailures: 0, lastFailureAt: null, hardLimitedAt: null, createAllowedAt: null, listener: null, ...over });

describe("is a scale set ready", () => {
  it("every link under it passes: ok", () => {
    expect(scaleSetReadyCheck(scaleSet(), repository(), fine)).toMatchObject({
      id: "scaleset.ready:ss",
      subject: "scale set linux (repository octo/app)",
      status: "ok",
    });
  });

  it("a failing link under it fails it, naming the link", () => {
    expect(scaleSetReadyCheck(scaleSet(), repository(), { ...fine, credentials: { name: "ci", status: "fail" } }).summary).toContain(
      "credentials ci",
    );
    expect(scaleSetReadyCheck(scaleSet(), repository(), { ...fine, provider: { name: "aws", status: "fail" } }).summary).toContain(
      "provider aws",
    );
    expect(scaleSetReadyCheck(scaleSet(), repository(), { ...fine, webhook: "fail" }).status).toBe("fail");
    // The scale set API needs no webhook.
    expect(
      scaleSetReadyCheck(
        scaleSet({
          intake: "scaleset_api",
          object: object({ listener: { sessionOpen: true, githubScaleSetId: 3, failures: 0, lastError: null } }),
        }),
        repository(),
        { ...fine, webhook: "fail" },
      ).status,
    ).toBe("ok");
  });

  it("paused: a warning with the command that resumes it", () => {
    expect(scaleSetReadyCheck(scaleSet({ enabled: false }), repository(), fine)).toMatchObject({
      status: "warn",
      fix: "edgerunner scaleset resume linux",
    });
  });

  it("creation stopped after failures: fails with the last fault and the reset", () => {
    const c = scaleSetReadyCheck(
      scaleSet({
        object: object({ createFailures: 5, hardLimitedAt: "2026-11-22T09:00:00.000Z" }),
        lastFault: { instance: "er-1", at: NOW, message: "quota exceeded" },
      }),
      repository(),
      fine,
    );
    expect(c.status).toBe("fail");
    expect(c.summary).toContain("quota exceeded");
    expect(c.fix).toContain("edgerunner scaleset reset linux");
    expect(scaleSetReadyCheck(scaleSet({ object: object({ createFailures: 2 }) }), repository(), fine).status).toBe("warn");
  });

  it("a scale set API scale set not registered, or its listener failing: warns", () => {
    const unregistered = scaleSetReadyCheck(scaleSet({ intake: "scaleset_api" }), repository(), fine);
    expect([unregistered.status, unregistered.summary]).toEqual(["warn", expect.stringContaining("not registered")]);
    const failing = scaleSet({
      intake: "scaleset_api",
      object: object({ listener: { sessionOpen: false, githubScaleSetId: 3, failures: 2, lastError: "401" } }),
    });
    expect(scaleSetReadyCheck(failing, repository(), fine).summary).toContain("listener failed 2 time(s)");
  });

  it("its object not answering is a warning, not a failure", () => {
    expect(
      scaleSetReadyCheck(scaleSet({ object: err({ kind: "unreachable", message: "no answer within 5000 ms" }) }), repository(), fine)
        .status,
    ).toBe("warn");
  });
});

describe("has a runner of it come up", () => {
  it("yes: ok, with what is live now", () => {
    expect(scaleSetRunnersCheck(scaleSet({ cameUp: true, instances: { total: 3, live: 2, idle: 1 } }), repository(), NOW)).toMatchObject({
      status: "ok",
    });
  });

  it("machines made, none became a runner: a warning with the last fault and where to look", () => {
    const c = scaleSetRunnersCheck(
      scaleSet({ instances: { total: 2, live: 1, idle: 0 }, lastFault: { instance: "er-2", at: NOW, message: "image not found" } }),
      repository(),
      NOW,
    );
    expect(c.status).toBe("warn");
    expect(c.summary).toContain("image not found");
    expect(c.fix).toContain("edgerunner instance list --scaleset linux");
  });

  it("nothing made though jobs wait or min idle asks: a warning; nothing asked for: ok", () => {
    expect(scaleSetRunnersCheck(scaleSet({ queued: { count: 2, oldestAt: NOW - 60_000 } }), repository(), NOW).status).toBe("warn");
    expect(scaleSetRunnersCheck(scaleSet({ minIdleRunners: 1 }), repository(), NOW).status).toBe("warn");
    expect(scaleSetRunnersCheck(scaleSet(), repository(), NOW).status).toBe("ok");
  });

  it("runners came up once, but jobs wait long with none idle: a warning", () => {
    const stuck = scaleSet({ cameUp: true, instances: { total: 5, live: 5, idle: 0 }, queued: { count: 3, oldestAt: NOW - 30 * 60_000 } });
    expect(scaleSetRunnersCheck(stuck, repository(), NOW).status).toBe("warn");
  });
});

describe("which jobs reach it", () => {
  it("webhook intake: its labels; the scale set API: its name", () => {
    expect(scaleSetLabelsCheck(scaleSet(), repository()).summary).toContain("[linux, self-hosted]");
    expect(scaleSetLabelsCheck(scaleSet({ intake: "scaleset_api" }), repository()).summary).toContain("runs-on: linux");
  });

  it("queued jobs no scale set took: a warning listing their runs-on", () => {
    expect(unmatchedJobsCheck({ count: 0, labelSets: [] }).status).toBe("ok");
    const c = unmatchedJobsCheck({ count: 3, labelSets: [{ labels: ["gpu", "self-hosted"], count: 3 }] });
    expect([c.status, c.summary]).toEqual(["warn", expect.stringContaining("[gpu, self-hosted] (3)")]);
  });
});
