import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Projects: pure domain code runs in plain Node; everything that touches the platform runs
// inside real workerd with real D1 and Durable Objects, talking to the fake GitHub (started in
// Node by the worker project's globalSetup, reached at inject("fakeGithubUrl")); the contract
// project checks the fake's answers against GitHub's published OpenAPI description; the e2e
// project runs the rendered install script with bash against the coordinator under `wrangler dev`;
// the shims project runs the reference provider shims (shims/) against real processes; the
// shims-worker project runs the EC2 shim Worker in workerd against the fake EC2.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      // Passing tests print nothing: what a test logs (the coordinator's JSON events, in Node or
      // in workerd) is shown only when that test fails, under its name.
      silent: "passed-only" as const,
      // …and passing tests are not listed either: failures, then one line of counts (test/quiet-reporter.ts).
      reporters: ["./test/quiet-reporter.ts"],
      // A test file per core at a time (Vitest's default leaves a core out: on 2 cores, one file at a time).
      maxWorkers: "100%",
      projects: [
        {
          // Its files share their processes (no modules loaded again per file): a unit test leaves nothing behind.
          test: { name: "unit", include: ["test/unit/**/*.test.ts", "test/fake-shim/**/*.test.ts"], environment: "node", isolate: false },
        },
        {
          test: { name: "contract", include: ["test/contract/**/*.test.ts"], environment: "node", testTimeout: 60_000 },
        },
        {
          // The bootstrap scripts run for real: bash + curl against `wrangler dev` and the fakes, in Node.
          test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], environment: "node", testTimeout: 120_000, hookTimeout: 120_000 },
        },
        {
          // Reference shims (shims/), in Node: they run real provider processes, so they get more time.
          test: { name: "shims", include: ["test/shims/**/*.test.ts"], environment: "node", testTimeout: 30_000 },
        },
        {
          // The dashboard in Debian's Chromium (playwright-core) against `wrangler dev`; see test/browser.
          test: {
            name: "browser",
            include: ["test/browser/**/*.test.ts"],
            environment: "node",
            testTimeout: 120_000,
            hookTimeout: 180_000,
          },
        },
        {
          // The EC2 shim Worker (shims/aws-ec2) in workerd, against the fake EC2 started in Node
          // (reached at inject("fakeEc2Url"); each test file makes its own account there); the GCE
          // shim (shims/gce) likewise against the fake Compute Engine (inject("fakeGceUrl"), a project per file),
          // and the Hetzner shim (shims/hetzner) against the fake Hetzner Cloud.
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./shims/aws-ec2/wrangler.toml" },
              // As in the worker project: workerd's own reports belong to no test (WORKERD_VERBOSE=1 shows them).
              verbose: process.env.WORKERD_VERBOSE === "1",
            }),
          ],
          test: {
            name: "shims-worker",
            include: ["test/shims-worker/**/*.test.ts"],
            globalSetup: ["./test/fake-ec2/global-setup.ts", "./test/fake-hetzner/global-setup.ts", "./test/fake-gce/global-setup.ts"],
          },
        },
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              // workerd's own reports (uncaught rejections in background work, runtime warnings)
              // belong to no test, so they would print whatever the outcome: WORKERD_VERBOSE=1 shows them.
              verbose: process.env.WORKERD_VERBOSE === "1",
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  ADMIN_TOKEN: "test-admin-token",
                  ENCRYPTION_KEY: "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=",
                  ENCRYPTION_KEYS_PREVIOUS: "",
                  PUBLIC_URL: "https://edgerunner.test",
                  INSTANCE_TOKEN_SECRET: "test-instance-token-secret",
                  METRICS_TOKEN: "test-metrics-token",
                  // Alarms run on real timers and are not reset between tests: keep them far
                  // away, and let each test drive the scale set objects explicitly.
                  NUDGE_DELAY_SECONDS: "3600",
                  RECONCILE_INTERVAL_SECONDS: "3600",
                  LISTEN_REARM_SECONDS: "3600",
                  // Delivery recovery's passes: tests run them themselves (test/worker/recovery/).
                  DELIVERY_RECOVERY_SECONDS: "3600",
                  // A machine waits in line for its on-boot JIT config this long (60 s in production),
                  // trying again at each budget window: 1 s windows, each paying for far more JIT
                  // configs than a test asks for (tests that spend the budget make it so in D1).
                  JIT_WAIT_SECONDS: "3",
                  GITHUB_BUDGET_WINDOW_SECONDS: "1",
                  GITHUB_POINTS_PER_MINUTE: "60000",
                  // GitHub's example payloads (@octokit/webhooks-examples) describe jobs created in
                  // 2021: intake refuses to create rows for jobs older than RETENTION_DAYS (a replay),
                  // so the tests keep ten years. Retention's own tests set it as they need.
                  RETENTION_DAYS: "3650",
                },
              },
            }),
          ],
          test: {
            name: "worker",
            include: ["test/worker/**/*.test.ts"],
            // Some tests make dozens of requests through workerd; on a loaded 2-core machine that took
            // past vitest's default 5 s. The tests assert behaviour, never time.
            testTimeout: 20_000,
            setupFiles: ["./test/worker/apply-migrations.ts"],
            // Fakes run in Node; tests find them with inject("fakeGithubUrl"), inject("fakeShimUrl") and
            // inject("accessCertsUrl") (a Cloudflare Access JWKS, with inject("accessSigningJwk") to sign with).
            globalSetup: [
              "./test/fake-github/global-setup.ts",
              "./test/fake-gitea/global-setup.ts",
              "./test/fake-shim/global-setup.ts",
              "./test/fake-access/global-setup.ts",
              "./test/fake-forgejo/global-setup.ts",
            ],
          },
        },
      ],
    },
  };
});
