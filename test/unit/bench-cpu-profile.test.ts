import { describe, expect, it } from "vitest";
import { bundleModules, type CpuProfile, moduleName, summarizeProfile } from "../../bench/cpu-profile.ts";

// The burst benchmark's CPU profile summary: which module of the bundle each sample's time belongs to.
describe("CPU profile summary", () => {
  it("names src files and node_modules packages from esbuild's path comments", () => {
    expect(moduleName("../../work/wt/x/src/db/instance-store.ts")).toBe("src/db/instance-store.ts");
    expect(moduleName("../../work/wt/x/node_modules/hono/dist/context.js")).toBe("pkg:hono");
    expect(moduleName("node_modules/@octokit/webhooks-methods/dist-web/index.js")).toBe("pkg:@octokit/webhooks-methods");
    const lines = ["// header", "// ../node_modules/hono/dist/a.js", "var a = 1;", "// ../src/app.ts", "function app() {}", "app();"];
    const of = bundleModules(lines.join("\n"));
    expect([0, 1, 2, 3, 4, 5].map(of)).toEqual(["(bundle)", "pkg:hono", "pkg:hono", "src/app.ts", "src/app.ts", "src/app.ts"]);
  });

  it("gives native time to the nearest bundled caller, counts src functions inclusively, and caps long gaps", () => {
    const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber, columnNumber: 0 });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 5] },
        { id: 2, callFrame: frame("handler", "index.js", 10), children: [3] },
        { id: 3, callFrame: frame("logEvent", "index.js", 20), children: [4] },
        { id: 4, callFrame: frame("log") }, // console.log: native
        { id: 5, callFrame: frame("(idle)") },
      ],
      startTime: 0,
      endTime: 0,
      // handler, log, log (the next sample 50 ms later: the thread was off the CPU), idle, log, idle
      samples: [2, 4, 4, 5, 4, 5],
      timeDeltas: [0, 1000, 1000, 50_000, 1000, 1000],
    };
    const modules = (_url: string, line: number) => (line < 20 ? "src/routes/a.ts" : "src/observability/log.ts");
    const sum = summarizeProfile(profile, modules);
    // Each sample lasts until the next one, at most twice the median gap (2 ms).
    expect(sum.idle_ms).toBe(1);
    expect(sum.busy_ms).toBe(5);
    expect(sum.by_module).toEqual({ "src/observability/log.ts": 4, "src/routes/a.ts": 1 });
    expect(sum.top_functions).toEqual({ "log @ (native)": 4, "handler @ src/routes/a.ts": 1 });
    expect(sum.inclusive_src).toEqual({ "handler @ src/routes/a.ts": 5, "logEvent @ src/observability/log.ts": 4 });
  });
});
