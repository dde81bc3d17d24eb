import { describe, expect, it } from "vitest";
import { parseRunnerEnv } from "../../shims/simulator/forgejo-machine";
import { defaultForgejoRunnerUrl, forgejoRunnerEnv, runnerLabel } from "../../src/bootstrap/forgejo-linux-script";
import type { ForgejoJob } from "../../src/forges/forgejo/forgejo-api";
import {
  afterPoll,
  type HeldJob,
  heldAfter,
  INITIAL_POLLER,
  jobsToBind,
  needsRunnerList,
  nextPollAt,
  type PollInstance,
  pollerBackoffMs,
  pollPlan,
} from "../../src/forges/forgejo/poller";
import { defaultIntakeFor, forgeIntakeIssues, timingFor } from "../../src/forges/forgejo/scaleset-rules";

const job = (id: number, runsOn = ["linux"]): ForgejoJob => ({
  id,
  run_id: 1,
  attempt: 1,
  handle: `h-${id}`,
  repo_id: 1,
  owner_id: 1,
  name: "build",
  runs_on: runsOn,
  task_id: 0,
  status: "waiting",
});
const held = (id: number, taken = false): HeldJob => ({ id, seq: id * 10, handle: `h-${id}`, taken });
const inst = (name: string, jobId: number | null, runnerStatus: PollInstance["runnerStatus"] = "pending"): PollInstance => ({
  name,
  status: "running",
  runnerStatus,
  jobId,
});
const byId = (...jobs: HeldJob[]) => Object.fromEntries(jobs.map((j) => [String(j.id), j]));

describe("Forgejo poller timing", () => {
  it("polls at once first, then every interval, never when the scale set does not poll", () => {
    expect(nextPollAt(INITIAL_POLLER, true, 5_000)).toBe(5_000);
    expect(nextPollAt({ ...INITIAL_POLLER, lastPollAt: 100_000 }, true, 5_000)).toBe(105_000);
    expect(nextPollAt(INITIAL_POLLER, false, 5_000)).toBeNull();
  });

  it("backs off 2 s doubling to 5 min on straight failures, and a good poll clears it", () => {
    expect([1, 2, 3, 10, 30].map(pollerBackoffMs)).toEqual([2_000, 4_000, 8_000, 300_000, 300_000]);
    const failed = afterPoll(INITIAL_POLLER, { ok: false, error: "HTTP 500" }, 1_000);
    expect(failed).toMatchObject({ failures: 1, retryAt: 3_000, lastError: "HTTP 500" });
    const twice = afterPoll(failed, { ok: false, error: "HTTP 500" }, 3_000);
    expect(twice).toMatchObject({ failures: 2, retryAt: 7_000 });
    expect(nextPollAt(twice, true, 5_000)).toBe(7_000);
    const ok = afterPoll(twice, { ok: true, held: {}, invalid: 1, waiting: 3 }, 7_000);
    expect(ok).toMatchObject({ failures: 0, retryAt: null, lastError: null, lastPollAt: 7_000, lastWaiting: 3, invalidJobs: 1 });
  });

  it("waits out Forgejo's throttling when it is longer than the backoff", () => {
    const s = afterPoll(INITIAL_POLLER, { ok: false, error: "rate limited", retryAt: 60_000 }, 1_000);
    expect(s.retryAt).toBe(60_000);
  });
});

describe("Forgejo poll plan", () => {
  it("takes waiting jobs whose labels the scale set has, once", () => {
    const plan = pollPlan({}, [job(1), job(2, ["gpu"]), job(3, [])], ["linux"], []);
    expect(plan.take.map((j) => j.id)).toEqual([1]);
    // Held already: not taken again on the next poll.
    const again = pollPlan(byId(held(1)), [job(1)], ["linux"], []);
    expect(again.take).toEqual([]);
    expect(again.stillWaiting.map((j) => j.id)).toEqual([1]);
  });

  it("a job that leaves the queue while its runner is up was taken by it", () => {
    const plan = pollPlan(byId(held(1)), [], ["linux"], [inst("r1", 1, "idle")]);
    expect(plan.departures).toEqual([{ job: held(1), becomes: "in_progress", instance: "r1" }]);
    const next = heldAfter(plan, [], byId(held(1)));
    expect(next["1"]).toEqual({ ...held(1), taken: true });
  });

  it("a job that leaves before its runner is up left without us: its runner is let go", () => {
    const booting = pollPlan(byId(held(1)), [], ["linux"], [inst("r1", 1, "installing")]);
    expect(booting.departures).toEqual([{ job: held(1), becomes: "left_queue", instance: "r1" }]);
    const none = pollPlan(byId(held(2)), [], ["linux"], []);
    expect(none.departures).toEqual([{ job: held(2), becomes: "left_queue", instance: null }]);
    expect(heldAfter(none, [], byId(held(2)))).toEqual({});
  });

  it("a taken job is over once its runner is done or gone, and kept while it runs", () => {
    const running = pollPlan(byId(held(1, true)), [], ["linux"], [inst("r1", 1, "active")]);
    expect(running.departures).toEqual([]);
    expect(heldAfter(running, [], byId(held(1, true)))).toEqual(byId(held(1, true)));
    const done = pollPlan(byId(held(1, true)), [], ["linux"], [inst("r1", 1, "terminated")]);
    expect(done.departures).toEqual([{ job: held(1, true), becomes: "completed", instance: "r1" }]);
    const gone = pollPlan(byId(held(1, true)), [], ["linux"], []);
    expect(gone.departures[0]?.becomes).toBe("completed");
    expect(heldAfter(gone, [], byId(held(1, true)))).toEqual({});
  });

  it("a taken job is over once Forgejo removed its ephemeral runner, even if its machine never said so", () => {
    const running = { ...inst("r1", 1, "active"), agentId: 7 };
    expect(pollPlan(byId(held(1, true)), [], ["linux"], [running], new Set([7])).departures).toEqual([]);
    expect(pollPlan(byId(held(1, true)), [], ["linux"], [running], new Set([8])).departures).toEqual([
      { job: held(1, true), becomes: "completed", instance: "r1" },
    ]);
    expect(needsRunnerList(byId(held(1)))).toBe(false);
    expect(needsRunnerList(byId(held(1), held(2, true)))).toBe(true);
  });

  it("new jobs join the held ones", () => {
    const plan = pollPlan(byId(held(1)), [job(1), job(2)], ["linux"], []);
    expect(Object.keys(heldAfter(plan, [held(2)], byId(held(1))))).toEqual(["1", "2"]);
  });
});

describe("binding runners to jobs", () => {
  it("one runner per waiting job, oldest first, none for a job whose runner is live", () => {
    const jobs = byId(held(3), held(1), held(2), held(4, true));
    expect(jobsToBind(jobs, [inst("r1", 1)], 5).map((j) => j.id)).toEqual([2, 3]);
    expect(jobsToBind(jobs, [], 1).map((j) => j.id)).toEqual([1]);
    // A runner that is gone (deleted) frees its job for a new one.
    expect(jobsToBind(jobs, [{ ...inst("r1", 1), status: "deleted" }], 5).map((j) => j.id)).toEqual([1, 2, 3]);
  });
});

describe("scale set rules per forge", () => {
  const base = { jitConfigEnabled: true, jitConfigTimingSent: undefined, minIdleRunners: 0 } as const;

  it("a Forgejo scale set polls, registers before the create and keeps no idle runners", () => {
    expect(defaultIntakeFor("forgejo")).toBe("poll");
    expect(defaultIntakeFor("github")).toBe("webhook");
    expect(forgeIntakeIssues({ ...base, forge: "forgejo", intake: "poll" })).toEqual([]);
    expect(forgeIntakeIssues({ ...base, forge: "forgejo", intake: "webhook" }).map((i) => i.path)).toEqual(["intake"]);
    expect(
      forgeIntakeIssues({
        forge: "forgejo",
        intake: "poll",
        jitConfigEnabled: false,
        jitConfigTimingSent: "on_boot",
        minIdleRunners: 1,
      }).map((i) => i.path),
    ).toEqual(["jit_config_enabled", "jit_config_timing", "min_idle_runners"]);
    expect(timingFor("forgejo", "poll", "on_boot")).toBe("before_create");
    expect(timingFor("github", "webhook", "on_boot")).toBe("on_boot");
  });

  it("a schedule entry may not keep idle runners on Forgejo: each is named by its path, and why", () => {
    const schedules = [
      { name: "night", min_idle_runners: 0 },
      { name: "day", min_idle_runners: 2 },
    ];
    const issues = forgeIntakeIssues({ ...base, forge: "forgejo", intake: "poll", schedules });
    expect(issues.map((i) => i.path)).toEqual(["schedules.1.min_idle_runners"]);
    expect(issues[0]!.message).toMatch(/'day' asks for 2 idle runners.*one waiting job.*set its min_idle_runners to 0/);
    expect(forgeIntakeIssues({ ...base, forge: "gitea", intake: "webhook", schedules })).toEqual([]);
  });

  it("intake poll elsewhere is refused with what to use instead", () => {
    const [issue] = forgeIntakeIssues({ ...base, forge: "github", intake: "poll" });
    expect(issue?.path).toBe("intake");
    expect(issue?.message).toMatch(/Forgejo endpoint; use webhook/);
    expect(forgeIntakeIssues({ ...base, forge: "gitea", intake: "webhook" })).toEqual([]);
  });
});

describe("the runner environment file", () => {
  it("round-trips through the simulator's reader, quotes and all", () => {
    const text = forgejoRunnerEnv({ uuid: "u-1", handle: "h'; rm -rf /", forgejoUrl: "https://forgejo.example/", runnerId: 5 });
    expect(parseRunnerEnv(text)).toEqual({
      RUNNER_UUID: "u-1",
      JOB_HANDLE: "h'; rm -rf /",
      FORGEJO_URL: "https://forgejo.example/",
      RUNNER_ID: "5",
    });
    expect(runnerLabel("linux")).toBe("linux:host");
    expect(runnerLabel("docker:docker://node:22")).toBe("docker:docker://node:22");
    expect(defaultForgejoRunnerUrl("amd64")).toMatch(/\/v12\.10\.2\/forgejo-runner-12\.10\.2-linux-amd64$/);
    expect(defaultForgejoRunnerUrl("i386")).toBeNull();
  });
});
