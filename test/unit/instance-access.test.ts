import { describe, expect, it } from "vitest";
import { instanceRefusal, reportedIn } from "../../src/scaleset/runner/instance-access";

const row = (over: Partial<Parameters<typeof instanceRefusal>[0] & object> = {}) => ({
  scaleSetId: "ss-1",
  createAttempt: 2,
  status: "creating" as const,
  runnerStatus: "installing" as const,
  ...over,
});
const claims = { ss: "ss-1", att: 2 };

describe("instanceRefusal: who may use an instance token", () => {
  it("lets a live, bootstrapping instance of the token's scale set and create attempt use it", () => {
    expect(instanceRefusal(row(), claims)).toBeNull();
    expect(instanceRefusal(row({ status: "running", runnerStatus: "pending" }), claims)).toBeNull();
  });

  it("names why anyone else is refused", () => {
    expect(instanceRefusal(null, claims)).toBe("no such instance");
    expect(instanceRefusal(row({ scaleSetId: "ss-2" }), claims)).toBe("instance is in another scale set");
    expect(instanceRefusal(row({ createAttempt: 3 }), claims)).toBe("token is for another create attempt");
    expect(instanceRefusal(row({ status: "pending_delete" }), claims)).toBe("instance is pending_delete");
    expect(instanceRefusal(row({ runnerStatus: "idle" }), claims)).toBe("runner is idle");
  });

  it("tells a runner that has reported in from a bad token", () => {
    const idle = row({ runnerStatus: "idle" });
    expect(reportedIn(idle, instanceRefusal(idle, claims))).toBe(true);
    const gone = row({ status: "deleted", runnerStatus: "idle" });
    expect(reportedIn(gone, instanceRefusal(gone, claims))).toBe(false);
    expect(reportedIn(null, instanceRefusal(null, claims))).toBe(false);
  });
});
