/**
 * npm run bench:recovery [-- --jobs 50 --quiet-passes 5]
 *
 * Which way of recovering a failed webhook delivery is faster and cheaper (issue 36), measured on
 * the whole product on loopback (e2e/stack.ts: the coordinator under `wrangler dev`, the fake
 * GitHub, which makes one attempt per delivery and records it as GitHub does):
 *
 *  - ingest: the coordinator lists the hook's deliveries and fetches each failed one's payload
 *    back (GET …/deliveries/{id}), taking it in within its own pass: what Edgerunner does;
 *  - redeliver: the same list, then POST …/deliveries/{id}/attempts for each, and GitHub sends
 *    each delivery again to the webhook route: played here from outside, as a coordinator would.
 *
 * For each: the time from the pass starting to every job being in D1, the GitHub calls and
 * secondary-limit points spent (a read costs 1, a mutation 5), and the Worker invocations it
 * took. Then the cost of recovery while nothing fails: GitHub calls per hook per pass, and per
 * hour at the default interval (DELIVERY_RECOVERY_SECONDS=60). One JSON document on stdout.
 */

import { startStack } from "../e2e/stack.ts";
import type { RecordedRequest } from "../test/fake-github/types.ts";
import { sleep } from "./harness.mjs";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const JOBS = flag("jobs", 50);
const QUIET_PASSES = flag("quiet-passes", 5);
const DEFAULT_INTERVAL_S = 60;
const say = (m: string) => process.stderr.write(`bench:recovery: ${m}\n`);

// Recovery runs only when this bench asks (POST /recovery/run), never on its own timer.
const stack = await startStack({ vars: { DELIVERY_RECOVERY_SECONDS: "3600", RECONCILE_INTERVAL_SECONDS: "3600" } });
const { coordinator, gh, w } = stack;
const points = (rs: RecordedRequest[]) => rs.reduce((n, r) => n + (r.method === "GET" ? 1 : 5), 0);
// Labels no scale set serves: the jobs are recorded (unmatched) and no machine is made.
const LABELS = ["self-hosted", "bench-recovery"];

async function jobsInD1(): Promise<number> {
  let n = 0;
  let cursor: number | undefined;
  for (;;) {
    const page = await coordinator.api("GET", `/jobs?unmatched=true&limit=500${cursor ? `&cursor=${cursor}` : ""}`);
    n += page.jobs.filter((j: { labels: string[] }) => j.labels.includes("bench-recovery")).length;
    if (!page.next_cursor) return n;
    cursor = page.next_cursor;
  }
}

async function lose(count: number): Promise<void> {
  await gh.deliverWebhooksTo({
    url: `${coordinator.url}/webhooks/github`,
    secret: w.webhookSecret,
    enterprise_host: "github.example.test",
    scope: "repos/octo/app",
    drop_probability: 1,
  });
  await gh.queueJobs({ repository: "octo/app", labels: LABELS, count });
  await gh.settleDeliveries();
}

async function waitForJobs(target: number, since: number): Promise<number> {
  for (;;) {
    if ((await jobsInD1()) >= target) return Date.now() - since;
    if (Date.now() - since > 300_000) throw new Error(`only ${await jobsInD1()} of ${target} jobs in D1 after 5 minutes`);
    await sleep(50);
  }
}

const result: Record<string, unknown> = { jobs: JOBS };
try {
  // Recovery looks after entities whose jobs can start a runner: give the repository a scale set
  // (whose labels the bench's jobs do not ask for, so nothing is made).
  await coordinator.api("POST", `/repositories/${w.repo.id}/scalesets`, {
    name: "bench-recovery",
    provider_name: w.provider,
    labels: ["self-hosted", "linux", "bench-scale-set"],
    max_runners: 1,
    image: "ubuntu:24.04",
    flavor: "small",
  });
  // The first pass finds the hook (list_hooks) and walks what there is: start from a known state.
  await coordinator.api("POST", "/recovery/run");

  say(`ingest: ${JOBS} jobs whose every delivery failed`);
  await lose(JOBS);
  await gh.clearRequests();
  let t0 = Date.now();
  const pass = await coordinator.api("POST", "/recovery/run");
  const ingestMs = await waitForJobs(JOBS, t0);
  const ingestCalls = await gh.requests();
  result.ingest = {
    ms_to_all_in_d1: ingestMs,
    pass_ms: pass.duration_ms,
    github_calls: ingestCalls.length,
    github_points: points(ingestCalls),
    by_operation: countBy(ingestCalls),
    worker_invocations: 1,
  };

  say(`redeliver: ${JOBS} more jobs whose every delivery failed`);
  await lose(JOBS);
  // Redeliveries go out (GitHub sends those whatever happened to the first attempt).
  await gh.deliverWebhooksTo({
    url: `${coordinator.url}/webhooks/github`,
    secret: w.webhookSecret,
    enterprise_host: "github.example.test",
    scope: "repos/octo/app",
  });
  await gh.clearRequests();
  t0 = Date.now();
  const hookId = (await gh.hookDeliveries())[0]!.hook_id!;
  const failed = await listFailed(hookId);
  // Four at a time, as the coordinator's pass calls GitHub.
  for (let i = 0; i < failed.length; i += 4) {
    await Promise.all(
      failed.slice(i, i + 4).map((id) =>
        fetch(`${w.world.url}/repos/octo/app/hooks/${hookId}/deliveries/${id}/attempts`, {
          method: "POST",
          headers: { authorization: "Bearer ghp_bench", accept: "application/vnd.github+json" },
        }),
      ),
    );
  }
  const redeliverMs = await waitForJobs(2 * JOBS, t0);
  const redeliverCalls = (await gh.requests()).filter((r) => r.auth === "pat");
  result.redeliver = {
    ms_to_all_in_d1: redeliverMs,
    github_calls: redeliverCalls.length,
    github_points: points(redeliverCalls),
    by_operation: countBy(redeliverCalls),
    worker_invocations: failed.length,
  };

  // What a walk saw is final only a minute after (GitHub lists a delivery once its attempt is
  // over): a minute on, one pass settles that, as a coordinator's next minute without failures would.
  say(`quiet: a minute on, ${QUIET_PASSES} passes with nothing failing`);
  await sleep(61_000);
  await coordinator.api("POST", "/recovery/run");
  await gh.clearRequests();
  for (let i = 0; i < QUIET_PASSES; i++) await coordinator.api("POST", "/recovery/run");
  const quiet = await gh.requests();
  const perHookPerPass = quiet.length / QUIET_PASSES;
  result.quiet = {
    passes: QUIET_PASSES,
    hooks: 1,
    github_calls: quiet.length,
    by_operation: countBy(quiet),
    calls_per_hook_per_pass: perHookPerPass,
    calls_per_hook_per_hour_at_default_interval: perHookPerPass * (3600 / DEFAULT_INTERVAL_S),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await stack.stop();
}

function countBy(rs: RecordedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rs) out[r.operation ?? r.path] = (out[r.operation ?? r.path] ?? 0) + 1;
  return out;
}

/** The failed deliveries' ids, as a coordinator redelivering would list them (all pages). */
async function listFailed(hookId: number): Promise<number[]> {
  const ids: number[] = [];
  let url: string | null = `${w.world.url}/repos/octo/app/hooks/${hookId}/deliveries?per_page=100`;
  while (url) {
    const res: Response = await fetch(url, { headers: { authorization: "Bearer ghp_bench", accept: "application/vnd.github+json" } });
    const page = (await res.json()) as { id: number; status_code: number; redelivery: boolean }[];
    ids.push(...page.filter((d) => !(d.status_code >= 200 && d.status_code < 300) && !d.redelivery).map((d) => d.id));
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1] ?? null;
  }
  // Only this round's: those of the ingest round were taken in (their jobs are in D1 already).
  return ids.slice(0, JOBS);
}
