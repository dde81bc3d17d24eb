// Configuration (file, flags, secret sources, refusals) and the real entry point as
// `npm run shim:garm` starts it: Node's own type stripping, no vitest in between.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../shims/garm-bridge/config";
import { makeProviderWorld, type ProviderWorld, SECRET, send } from "./harness";

let world: ProviderWorld;
beforeAll(() => {
  world = makeProviderWorld();
});
afterAll(() => world.cleanup());

const writeJson = (name: string, value: unknown) => {
  const path = join(world.dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
};

describe("loadConfig", () => {
  it("merges the file, flags and the secret file, with defaults", () => {
    const secretFile = join(world.dir, "secret");
    writeFileSync(secretFile, `${SECRET}\n`);
    const config = writeJson("bridge.json", {
      provider_executable: world.executable,
      provider_config_file: "/etc/garm/lxd.toml",
      secret_file: secretFile,
      env: { LXD_REMOTE: "local" },
      pass_env: ["HTTPS_PROXY"],
    });
    const c = loadConfig({ config, port: "9999", "interface-version": "v0.1.0", env: ["OS_CLOUD=ci"], "pass-env": ["NO_PROXY"] }, {});
    expect(c).toMatchObject({
      host: "127.0.0.1",
      port: 9999,
      interface_version: "v0.1.0",
      secret: SECRET,
      env: { LXD_REMOTE: "local", OS_CLOUD: "ci" },
      pass_env: ["HTTPS_PROXY", "NO_PROXY"],
      timeout_seconds: 25,
      concurrency: 4,
      async: false,
      create_lookup: "none",
    });
  });

  it("takes the secret from EDGERUNNER_SHIM_SECRET", () => {
    expect(loadConfig({ "provider-executable": world.executable }, { EDGERUNNER_SHIM_SECRET: SECRET }).secret).toBe(SECRET);
  });

  it("refuses what cannot work, saying why", () => {
    const base = { provider_executable: world.executable, secret: SECRET };
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...base, secret: "short" }, /secret: must be at least 16 characters/],
      [{ ...base, provider_executable: "relative/provider" }, /must be an absolute path/],
      [{ ...base, provider_executable: world.configFile }, /not executable/],
      [{ ...base, env: { GARM_POOL_ID: "x" } }, /GARM_\* variables are set by the bridge/],
      [{ ...base, interface_version: "v0.2.0" }, /interface_version/],
      [{ ...base, async: true }, /async needs callback_url/],
      [{ ...base, base_path: "/lxd/" }, /base_path/],
      [{ ...base, unknown_key: 1 }, /unknown_key|Unrecognized/],
    ];
    for (const [file, message] of bad) expect(() => loadConfig({ config: writeJson("bad.json", file) }, {})).toThrow(message);
  });
});

describe("npm run shim:garm", () => {
  it("starts from a config file, serves a shell-script provider (v0.1.0) and stops on SIGTERM", async () => {
    // Any executable will do: a GARM provider in plain sh, as GARM's docs show.
    const provider = world.script(
      "sh-provider",
      `#!/bin/sh
case "$GARM_COMMAND" in
  ListInstances) echo "[{\\"provider_id\\":\\"sh-1\\",\\"name\\":\\"runner-sh\\",\\"status\\":\\"running\\",\\"os_type\\":\\"linux\\"}]" ;;
  GetInstance) [ -n "$GARM_POOL_ID" ] && exit 9; exit 30 ;;
  *) echo "unknown command $GARM_COMMAND" >&2; exit 1 ;;
esac
`,
    );
    const config = writeJson("cli.json", { port: 0, provider_executable: provider, interface_version: "v0.1.0", base_path: "/sh" });
    const child = spawn(
      process.execPath,
      ["--experimental-strip-types", "--no-warnings=ExperimentalWarning", "shims/garm-bridge/main.ts", "--config", config],
      {
        env: { EDGERUNNER_SHIM_SECRET: SECRET, PATH: process.env.PATH ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const lines: Record<string, unknown>[] = [];
    const started = new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        const entry = JSON.parse(line);
        lines.push(entry);
        if (entry.event === "bridge_started") resolve(entry.url);
      });
      child.once("exit", (code) => reject(new Error(`bridge exited with ${code}: ${stderr}`)));
    });
    try {
      const url = await started;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sh$/);
      expect(await send({ url }, "GET", "/v1/capabilities")).toMatchObject({
        status: 200,
        body: { interface_version: "v1.1", garm_interface_version: "v0.1.0", batch_create: { max: 4 } },
      });
      expect(await send({ url }, "GET", "/v1/instances")).toMatchObject({
        status: 200,
        body: [{ provider_id: "sh-1", name: "runner-sh" }],
      });
      // v0.1.0 gives GetInstance no pool id: the script's exit 9 would show it did.
      expect((await send({ url }, "GET", "/v1/instances/sh-2")).status).toBe(404);
    } finally {
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
    expect(lines.map((l) => l.event)).toContain("bridge_stopped");
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });
});

describe("example-config.json", () => {
  it("is a valid configuration apart from its placeholder paths", async () => {
    const { BridgeConfig } = await import("../../../shims/garm-bridge/config");
    const { readFileSync } = await import("node:fs");
    const { secret_file: _, ...example } = JSON.parse(readFileSync("shims/garm-bridge/example-config.json", "utf8"));
    expect(BridgeConfig.safeParse({ ...example, secret: SECRET }).success).toBe(true);
  });
});
