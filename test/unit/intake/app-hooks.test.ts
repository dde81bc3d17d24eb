import { describe, expect, it } from "vitest";
import { type AppHook, appHookCandidates, appSigners } from "../../../src/intake/app-hooks";
import { DeliverySubject } from "../../../src/intake/payload";

const hook = (id: string, appId: number, installationId: number): AppHook => ({
  id,
  appId,
  installationId,
  webhookSecretEnc: `sealed-${id}`,
});
const hooks = [hook("a-1", 1, 11), hook("a-2", 1, 12), hook("b-1", 2, 21)];
const subject = (json: unknown) => DeliverySubject.parse(json);

describe("appHookCandidates", () => {
  it("tries every App secret for a delivery that names an installation", () => {
    expect(
      appHookCandidates(hooks, subject({ repository: { name: "r", owner: { login: "o" } }, installation: { id: 11, node_id: "x" } })),
    ).toEqual(hooks);
  });

  it("tries only the pinged App's secrets for an App's ping", () => {
    expect(appHookCandidates(hooks, subject({ zen: "z", hook: { type: "App", app_id: 2 } })).map((h) => h.id)).toEqual(["b-1"]);
  });

  it("tries none for what a repository or organization hook sends (no installation), even a hook an App created", () => {
    expect(appHookCandidates(hooks, subject({ repository: { name: "r", owner: { login: "o" } } }))).toEqual([]);
    expect(appHookCandidates(hooks, subject({ zen: "z", hook: { type: "Repository", app_id: 1 } }))).toEqual([]);
  });

  it("ignores an installation that is not one (a hostile payload cannot fail the parse)", () => {
    expect(appHookCandidates(hooks, subject({ installation: { id: "11" } }))).toEqual([]);
  });
});

describe("appSigners", () => {
  const named = [
    { id: "repo", credentialsId: "a-1" },
    { id: "org", credentialsId: "pat" },
    { id: "ent", credentialsId: "a-2" },
  ];

  it("speaks for the named entities acting through a verified credential of the payload's installation", () => {
    expect(appSigners(named, [hooks[0]!, hooks[1]!], 11)).toEqual([named[0]]);
    expect(appSigners(named, [hooks[0]!, hooks[1]!], 12)).toEqual([named[2]]);
  });

  it("speaks for nobody when the verified credentials are of another installation, or there is no installation", () => {
    expect(appSigners(named, [hooks[1]!], 11)).toEqual([]);
    expect(appSigners(named, [hooks[0]!], null)).toEqual([]);
    expect(appSigners(named, [], 11)).toEqual([]);
  });
});
