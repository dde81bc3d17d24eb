// A GARM external provider for the bridge's tests, run as an executable (the test writes a
// copy with this Node's path in the shebang). It follows GARM's protocol: the command in
// GARM_COMMAND, CreateInstance's BootstrapInstance on stdin, one ProviderInstance (or an
// array) on stdout, exit 30 for not found and 31 for duplicate. Its "cloud" is one JSON file
// per machine under state_dir. Every call is recorded (env, stdin, pid, start and end times)
// under record_dir. Misbehaviour comes from the provider config file (GARM_PROVIDER_CONFIG_FILE),
// re-read on every call: faults[command] = {exit, stdout, stderr, sleep_ms, hang, child_hang, huge_bytes},
// and fail_names: instance names whose CreateInstance fails (exit 1), the others' succeeding.
import { spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = process.env;
const command = env.GARM_COMMAND ?? "";
const config = JSON.parse(readFileSync(env.GARM_PROVIDER_CONFIG_FILE ?? "", "utf8"));
const started = Date.now();
const stdin = command === "CreateInstance" ? readFileSync(0, "utf8") : "";
const record = (extra) =>
  appendFileSync(
    join(config.record_dir, "calls.jsonl"),
    JSON.stringify({ command, env: { ...env }, stdin, pid: process.pid, started, ended: Date.now(), ...extra }) + "\n",
  );
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const fault = config.faults?.[command];
if (fault) {
  if (fault.child_hang) {
    // A grandchild in the same process group, as a provider's CLI would be.
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    record({ child_pid: child.pid, fault: true });
  } else {
    record({ fault: true });
  }
  if (fault.sleep_ms) await sleep(fault.sleep_ms);
  if (fault.hang || fault.child_hang) setInterval(() => {}, 1000);
  else {
    if (fault.huge_bytes) process.stdout.write(Buffer.alloc(fault.huge_bytes, "x"));
    if (fault.stdout !== undefined) process.stdout.write(fault.stdout);
    if (fault.stderr !== undefined) process.stderr.write(fault.stderr);
    process.exitCode = fault.exit ?? 0;
  }
} else {
  await normal();
}

function machines() {
  // A machine deleted by a concurrent call between the listing and the read is simply gone.
  return readdirSync(config.state_dir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(config.state_dir, f), "utf8"))];
      } catch (err) {
        if (err.code === "ENOENT") return [];
        throw err;
      }
    });
}
function find(id) {
  // GARM_INSTANCE_ID is the provider id, or the name when none is known. In v0.1.1 the pool scopes it.
  return machines().find((m) => (m.provider_id === id || m.name === id) && (!env.GARM_POOL_ID || m.pool_id === env.GARM_POOL_ID));
}
function wire(m) {
  return {
    provider_id: m.provider_id,
    name: m.name,
    os_type: "linux",
    os_name: "ubuntu",
    os_version: "24.04",
    os_arch: "amd64",
    status: m.status,
  };
}
function save(m) {
  writeFileSync(join(config.state_dir, `${m.provider_id}.json`), JSON.stringify(m));
}

async function normal() {
  if (config.create_sleep_ms && command === "CreateInstance") await sleep(config.create_sleep_ms);
  if (config.sleep_ms) await sleep(config.sleep_ms);
  switch (command) {
    case "CreateInstance": {
      const b = JSON.parse(stdin);
      if (config.fail_names?.includes(b.name)) {
        process.stderr.write(`no capacity for ${b.name}\n`);
        process.exitCode = 1;
        break;
      }
      if (machines().some((m) => m.name === b.name)) {
        process.stderr.write(`instance ${b.name} already exists\n`);
        process.exitCode = 31;
        break;
      }
      const m = {
        provider_id: `vm-${b.name}`,
        name: b.name,
        pool_id: env.GARM_POOL_ID,
        controller_id: env.GARM_CONTROLLER_ID,
        status: "running",
      };
      save(m);
      process.stdout.write(JSON.stringify(wire(m)));
      break;
    }
    case "GetInstance": {
      const m = find(env.GARM_INSTANCE_ID);
      if (!m) process.exitCode = 30;
      else process.stdout.write(JSON.stringify(wire(m)));
      break;
    }
    case "DeleteInstance": {
      const m = find(env.GARM_INSTANCE_ID);
      if (!m) process.exitCode = 30;
      else rmSync(join(config.state_dir, `${m.provider_id}.json`));
      break;
    }
    case "StartInstance":
    case "StopInstance": {
      const m = find(env.GARM_INSTANCE_ID);
      if (!m) process.exitCode = 30;
      else save({ ...m, status: command === "StartInstance" ? "running" : "stopped" });
      break;
    }
    case "ListInstances":
      process.stdout.write(
        JSON.stringify(
          machines()
            .filter((m) => m.pool_id === env.GARM_POOL_ID)
            .map(wire),
        ),
      );
      break;
    case "RemoveAllInstances":
      for (const m of machines())
        if (!env.GARM_POOL_ID || m.pool_id === env.GARM_POOL_ID) rmSync(join(config.state_dir, `${m.provider_id}.json`));
      break;
    case "GetVersion":
      process.stdout.write("v0.9.9-fake\n");
      break;
    default:
      process.stderr.write(`unknown command ${command}\n`);
      process.exitCode = 1;
  }
  record({ exit: process.exitCode ?? 0 });
}
