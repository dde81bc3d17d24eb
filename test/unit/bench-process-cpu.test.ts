import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processGroupCpu } from "../../bench/harness.mjs";

// The burst benchmark reports the coordinator's CPU per runner from /proc: the process group of
// wrangler dev, split into workerd and the rest.
describe.runIf(process.platform === "linux")("process group CPU", () => {
  it("counts the CPU a group's processes used, and nothing of other groups", async () => {
    const busy = spawn(process.execPath, ["-e", "while (process.cpuUsage().user < 400_000);"], { detached: true, stdio: "ignore" });
    const pgid = busy.pid!;
    let last = processGroupCpu(pgid);
    await new Promise<void>((done) => {
      const poll = setInterval(() => {
        const now = processGroupCpu(pgid);
        if (now && now.wrangler > 0) last = now;
        if (busy.exitCode !== null) {
          clearInterval(poll);
          done();
        }
      }, 50);
    });
    expect(last).not.toBeNull();
    expect(last!.workerd).toBe(0);
    expect(last!.wrangler).toBeGreaterThan(0.1);
    expect(processGroupCpu(2 ** 30)).toEqual({ workerd: 0, wrangler: 0, workerdPids: [] });
  });
});
