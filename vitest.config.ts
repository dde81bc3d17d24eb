import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects: pure domain code runs in plain Node; everything that touches the platform
// runs inside real workerd with real D1 and Durable Objects.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      projects: [
        {
          test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" },
        },
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  ADMIN_TOKEN: "test-admin-token",
                  ENCRYPTION_KEY: "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=",
                  ENCRYPTION_KEYS_PREVIOUS: "",
                  PUBLIC_URL: "https://edgerunner.test",
                  INSTANCE_TOKEN_SECRET: "test-instance-token-secret",
                  // Alarms run on real timers and are not reset between tests: keep them far
                  // away, and let each test drive the scale set objects explicitly.
                  NUDGE_DELAY_SECONDS: "3600",
                  RECONCILE_INTERVAL_SECONDS: "3600",
                },
              },
            }),
          ],
          test: {
            name: "worker",
            include: ["test/worker/**/*.test.ts"],
            setupFiles: ["./test/worker/apply-migrations.ts"],
          },
        },
      ],
    },
  };
});
