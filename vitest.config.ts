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
          test: { name: "unit", include: ["test/unit/**/*.test.ts", "test/fake-shim/**/*.test.ts"], environment: "node" },
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
                },
              },
            }),
          ],
          test: {
            name: "worker",
            include: ["test/worker/**/*.test.ts"],
            setupFiles: ["./test/worker/apply-migrations.ts"],
            // The fake provider shim runs in Node; tests find it with inject("fakeShimUrl").
            globalSetup: ["./test/fake-shim/global-setup.ts"],
          },
        },
      ],
    },
  };
});
