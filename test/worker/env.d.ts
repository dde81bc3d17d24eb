import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
    }
    // Types `exports` from cloudflare:workers (the tests call the worker's own fetch handler).
    interface GlobalProps {
      mainModule: typeof import("../../src/index");
      durableNamespaces: "ScaleSet";
    }
  }
}
