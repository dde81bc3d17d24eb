/**
 * npm run shim:conformance:all [-- simulator garm-bridge aws-ec2 gce hetzner]
 *
 * Runs the shim conformance kit (shims/conformance) against every shim this project ships, each
 * on loopback: the simulator; the GARM bridge over the test provider
 * (test/shims/garm-bridge/fake-provider.mjs) in async mode, so every create and delete is a 202
 * and a signed callback; and the EC2 shim Worker under `wrangler dev` against the fake EC2, whose
 * pages are cut to 2 instances so listing has to follow NextToken; the GCE shim Worker likewise
 * against the fake Compute Engine (pages of 2, nextPageToken); and the Hetzner shim Worker the
 * same way against the fake Hetzner Cloud (pages of 2, so listing follows next_page). The shims
 * are checked at the same time, each against a world of its own (its fakes, its callback port).
 * Prints one line of counts, and the table of each shim that failed a check (every table with
 * E2E_VERBOSE=1), whole, as that shim is done; exits 1 if any check failed.
 */
import "../shims/ts-resolve.ts";
import { freePort } from "../bench/harness.mjs";

const { formatResult, formatTotals, runConformance } = await import("../shims/conformance/kit.ts");
const { startSimulator } = await import("../shims/simulator/simulator.ts");
const { BridgeConfig } = await import("../shims/garm-bridge/config.ts");
const { startGarmBridge } = await import("../shims/garm-bridge/server.ts");
const { makeProviderWorld } = await import("../test/shims/garm-bridge/harness.ts");
const { startFakeEc2 } = await import("../test/fake-ec2/server.ts");
const { createAccount } = await import("../test/fake-ec2/control.ts");
const { startEc2Shim } = await import("./ec2-shim.ts");
const { startFakeHetzner } = await import("../test/fake-hetzner/server.ts");
const { createProject: createHetznerProject } = await import("../test/fake-hetzner/control.ts");
const { startFakeGce } = await import("../test/fake-gce/server.ts");
const { createProject: createGceProject } = await import("../test/fake-gce/control.ts");
const { startGceShim } = await import("./gce-shim.ts");
const { startHetznerShim } = await import("./hetzner-shim.ts");

const SECRET = "conformance-secret-0123456789abcdef";

interface Target {
  url: string;
  provider?: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Each target is told where to send callbacks: the kit listens there. */
const targets: Record<string, (callbackUrl: string) => Promise<Target>> = {
  async simulator(callbackUrl) {
    const sim = await startSimulator({ config: { boot_delay_ms: 50 } });
    const res = await fetch(`${sim.url}/_control/tenants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ secret: SECRET, callback_url: callbackUrl }),
    });
    const tenant = (await res.json()) as { url: string };
    return { url: tenant.url, stop: () => sim.stop() };
  },
  async "garm-bridge"(callbackUrl) {
    const world = makeProviderWorld();
    const bridge = await startGarmBridge({
      config: BridgeConfig.parse({
        port: 0,
        provider_executable: world.executable,
        provider_config_file: world.configFile,
        secret: SECRET,
        async: true,
        callback_url: callbackUrl,
        callback_initial_delay_ms: 200,
      }),
      environ: { PATH: process.env.PATH },
      log: () => {},
    });
    return {
      url: bridge.url,
      async stop() {
        await bridge.stop();
        world.cleanup();
      },
    };
  },
  async "aws-ec2"() {
    const ec2 = await startFakeEc2();
    const account = await createAccount(ec2.url, { config: { page_size: 2, boot_delay_ms: 50, stop_delay_ms: 50 } });
    const shim = await startEc2Shim({ endpoint: ec2.url, account, secret: SECRET }).catch(async (err) => {
      await ec2.stop();
      throw err;
    });
    return {
      url: shim.url,
      provider: {
        image: "ami-0123456789abcdef0",
        flavor: "t3.micro",
        extra_specs: { subnet_ids: ["subnet-0123456789abcdef0"], tags: { purpose: "conformance" } },
      },
      async stop() {
        await shim.stop();
        await ec2.stop();
      },
    };
  },
  async gce() {
    const gce = await startFakeGce();
    const project = await createGceProject(gce.url, { config: { page_size: 2, boot_delay_ms: 50, stop_delay_ms: 50, operation_ms: 30 } });
    const shim = await startGceShim({ endpoint: project.endpoint, project, secret: SECRET }).catch(async (err) => {
      await gce.stop();
      throw err;
    });
    return {
      url: shim.url,
      provider: {
        image: "projects/debian-cloud/global/images/family/debian-12",
        flavor: "e2-small",
        extra_specs: { labels: { purpose: "conformance" }, network_tags: ["ci-runner"] },
      },
      async stop() {
        await shim.stop();
        await gce.stop();
      },
    };
  },
  async hetzner() {
    const hetzner = await startFakeHetzner();
    const project = await createHetznerProject(hetzner.url, { config: { page_size: 2, boot_delay_ms: 50, stop_delay_ms: 50 } });
    const shim = await startHetznerShim({ endpoint: project.endpoint, project, secret: SECRET }).catch(async (err) => {
      await hetzner.stop();
      throw err;
    });
    return {
      url: shim.url,
      provider: { image: "ubuntu-24.04", flavor: "cx22", extra_specs: { locations: ["fsn1"], labels: { purpose: "conformance" } } },
      async stop() {
        await shim.stop();
        await hetzner.stop();
      },
    };
  },
};

const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(targets);
for (const name of chosen) if (!targets[name]) throw new Error(`no target ${name}; have ${Object.keys(targets).join(", ")}`);
// Each shim's table (a line per check) is printed only when one of its checks fails, or with
// E2E_VERBOSE=1: a green run prints one line of counts.
const verbose = process.env.E2E_VERBOSE === "1";
const total = { passed: 0, failed: 0, skipped: 0 };
async function check(name: string) {
  const port = await freePort();
  const target = await targets[name]!(`http://127.0.0.1:${port}/api/v1/providers/conformance/callbacks`);
  const table = [`shim conformance: ${name} (${target.url})`];
  try {
    const report = await runConformance({
      url: target.url,
      secret: SECRET,
      provider: target.provider,
      callbackPort: port,
      waitMs: 20_000,
      onResult: (r) => table.push(formatResult(r)),
    });
    table.push(`${name}: ${formatTotals(report)}`);
    if (report.failed || verbose) console.log(table.join("\n"));
    total.passed += report.passed;
    total.failed += report.failed;
    total.skipped += report.skipped;
  } catch (err) {
    console.log(table.join("\n"));
    throw err;
  } finally {
    await target.stop();
  }
}
const ended = await Promise.allSettled(chosen.map(check));
const thrown = ended.flatMap((e) => (e.status === "rejected" ? [e.reason] : []));
for (const err of thrown) console.error(err);
console.log(
  `shim conformance: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped (${chosen.join(", ")}; ${Math.round(performance.now() / 1000)} s)`,
);
process.exit(total.failed || thrown.length ? 1 : 0);
