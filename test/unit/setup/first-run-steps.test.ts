import { describe, expect, it } from "vitest";
import { runsOnLine, type SetupFacts, setupSteps } from "../../../src/setup/first-run-steps";

const empty: SetupFacts = { publicUrlProblem: null, apps: 0, installations: 0, entities: [], providers: 0, scaleSets: [] };
const state = (f: SetupFacts) => Object.fromEntries(setupSteps(f).map((s) => [s.id, s.done]));

describe("the first-run checklist", () => {
  it("an empty coordinator has every step to do, starting with the App", () => {
    expect(state(empty)).toEqual({
      app: false,
      install: false,
      entity: false,
      provider: false,
      scaleset: false,
      webhook: false,
      runner: false,
    });
  });

  it("follows the chain to a runner that came up", () => {
    const done: SetupFacts = {
      publicUrlProblem: null,
      apps: 1,
      installations: 1,
      entities: [{ id: "e", label: "octo/app", credentialsFailing: null, lastDeliveryAt: 1 }],
      providers: 1,
      scaleSets: [{ id: "s", name: "linux", labels: ["linux", "self-hosted"], intake: "webhook", cameUp: true }],
    };
    expect(Object.values(state(done)).every(Boolean)).toBe(true);
  });

  it("failing credentials hold the entity step, naming the entity and GitHub's reason", () => {
    const steps = setupSteps({
      ...empty,
      apps: 1,
      installations: 1,
      entities: [{ id: "e", label: "octo/app", credentialsFailing: "Bad credentials", lastDeliveryAt: null }],
    });
    const entity = steps.find((s) => s.id === "entity")!;
    expect(entity.done).toBe(false);
    expect(entity.detail).toContain("octo/app (Bad credentials)");
  });

  it("credentials added by hand need no App; a pulling scale set needs no webhook; an unreachable PUBLIC_URL says why nothing arrives", () => {
    const byHand = state({ ...empty, entities: [{ id: "e", label: "o/r", credentialsFailing: null, lastDeliveryAt: null }] });
    expect([byHand.app, byHand.install]).toEqual([true, true]);
    const pulls = state({ ...empty, scaleSets: [{ id: "s", name: "x", labels: [], intake: "scaleset_api", cameUp: false }] });
    expect(pulls.webhook).toBe(true);
    const webhook = setupSteps({ ...empty, publicUrlProblem: "PUBLIC_URL is loopback" }).find((s) => s.id === "webhook")!;
    expect(webhook.detail).toBe("PUBLIC_URL is loopback");
  });

  it("the runs-on line lists every label of the scale set", () => {
    expect(runsOnLine(["linux", "self-hosted", "x64"])).toBe("runs-on: [linux, self-hosted, x64]");
  });
});
