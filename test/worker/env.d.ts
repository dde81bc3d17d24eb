import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../../src/env";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../../src/index");
      durableNamespaces: "ScaleSet";
    }
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
    }
    // Types `exports.default` (the Worker's own fetch handler) in tests.
    interface GlobalProps {
      mainModule: typeof import("../../src/index");
      durableNamespaces: "ScaleSet";
    }
  }
}
