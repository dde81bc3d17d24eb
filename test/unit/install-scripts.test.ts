import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type InstallScriptInput, pickTool, psQuote, renderInstallScript, shellQuote } from "../../src/bootstrap/install-script";

const work = mkdtempSync(join(tmpdir(), "edgerunner-issue6-scripts-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const canary = join(work, "pwned");

// Every way out of a quoted string we know of, in bash and PowerShell.
const HOSTILE = [
  `it's`,
  `"double" quotes`,
  `$(touch ${canary})`,
  "`touch " + canary + "`",
  `\${IFS}; touch ${canary}; #`,
  `'; touch ${canary}; echo '`,
  `line\nbreak; touch ${canary}`,
  `back\\slash\\`,
  `ps ’ typographic ‘ quotes ‛ ‚ $(Write-Host x) @{a=1} $env:PATH`,
  `'' ; Remove-Item -Recurse C:\\ ; ''`,
];

function input(v: string, registration = true): InstallScriptInput {
  return {
    instanceName: `runner ${v}`,
    metadataUrl: `https://coord.example/api/v1/metadata?x=${v}`,
    callbackUrl: `https://coord.example/api/v1/callbacks#${v}`,
    token: `tok.${v}`,
    tool: {
      os: "linux",
      architecture: "x64",
      download_url: `https://dl.example/${v}`,
      filename: `runner-${v}.tar.gz`,
      temp_download_token: `dl ${v}`,
      sha256_checksum: `sum ${v}`,
    },
    runAsUser: "runner",
    serviceName: `actions.runner.octo.${v}`,
    registration: registration ? { repoUrl: `https://github.example/${v}`, labels: ["self-hosted", v], runnerGroup: `group ${v}` } : null,
  };
}

const LINUX_VARS: [string, (i: InstallScriptInput) => string][] = [
  ["METADATA_URL", (i) => i.metadataUrl],
  ["CALLBACK_URL", (i) => i.callbackUrl],
  ["TOKEN", (i) => i.token],
  ["RUNNER_NAME", (i) => i.instanceName],
  ["DOWNLOAD_URL", (i) => i.tool.download_url],
  ["DOWNLOAD_TOKEN", (i) => i.tool.temp_download_token!],
  ["DOWNLOAD_SHA256", (i) => i.tool.sha256_checksum!],
  ["FILENAME", (i) => i.tool.filename],
  ["REPO_URL", (i) => i.registration!.repoUrl],
  ["RUNNER_LABELS", (i) => i.registration!.labels.join(",")],
  ["RUNNER_GROUP", (i) => i.registration!.runnerGroup],
];

describe("Linux install script", () => {
  it("is valid bash, in both registration modes", () => {
    for (const registration of [true, false]) {
      const script = renderInstallScript("linux", input("plain", registration));
      const check = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
      expect(check.stderr).toBe("");
      expect(check.status).toBe(0);
      expect(script).toContain(`JIT_CONFIG='${registration ? "false" : "true"}'`);
      // The only JavaScript-side interpolation is the quoted assignments: no placeholder left behind.
      expect(script).not.toContain("@{");
    }
  });

  it("keeps hostile values inert: bash reads back exactly what was rendered, and runs nothing", () => {
    for (const v of HOSTILE) {
      const i = input(v);
      const script = renderInstallScript("linux", i);
      expect(spawnSync("bash", ["-n"], { input: script, encoding: "utf8" }).status).toBe(0);
      // Evaluate only the header (shebang, comment, set, assignments) and print every variable back.
      const header = script.slice(0, script.indexOf("\nRUNNER_USER="));
      const dump = LINUX_VARS.map(([k]) => `printf '%s\\0' "$${k}"`).join("\n");
      const run = spawnSync("bash", ["-c", `${header}\n${dump}`], { encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.split("\0").slice(0, -1)).toEqual(LINUX_VARS.map(([, get]) => get(i)));
      // The comment line cannot be broken out of either.
      expect(script.split("\n")[1]).toMatch(/^# Edgerunner runner bootstrap for runner [\x20-\x7E]*$/);
      expect(existsSync(canary)).toBe(false);
    }
  });

  it("shellQuote round-trips through bash", () => {
    for (const v of HOSTILE) {
      const out = spawnSync("bash", ["-c", `printf '%s' ${shellQuote(v)}`], { encoding: "utf8" });
      expect(out.stdout).toBe(v);
    }
    expect(existsSync(canary)).toBe(false);
  });
});

/** Reads one PowerShell single-quoted string literal at the start of `s`: its value and the rest. */
function readPsLiteral(s: string): { value: string; rest: string } {
  const q = /['\u2018\u2019\u201A\u201B]/;
  if (!q.test(s[0]!)) throw new Error(`not a single-quoted string: ${s.slice(0, 20)}`);
  let value = "";
  for (let i = 1; i < s.length; i++) {
    if (q.test(s[i]!)) {
      if (i + 1 < s.length && q.test(s[i + 1]!)) {
        value += s[i];
        i++;
        continue;
      }
      return { value, rest: s.slice(i + 1) };
    }
    value += s[i];
  }
  throw new Error("unterminated string");
}

describe("Windows install script", () => {
  const PS_VARS: [string, (i: InstallScriptInput) => string][] = [
    ["MetadataUrl", (i) => i.metadataUrl],
    ["CallbackUrl", (i) => i.callbackUrl],
    ["Token", (i) => i.token],
    ["RunnerName", (i) => i.instanceName],
    ["ServiceName", (i) => i.serviceName],
    ["DownloadUrl", (i) => i.tool.download_url],
    ["DownloadToken", (i) => i.tool.temp_download_token!],
    ["DownloadSha256", (i) => i.tool.sha256_checksum!],
    ["FileName", (i) => i.tool.filename],
    ["RepoUrl", (i) => i.registration!.repoUrl],
    ["RunnerLabels", (i) => i.registration!.labels.join(",")],
    ["RunnerGroup", (i) => i.registration!.runnerGroup],
  ];

  it("puts every value in a single-quoted literal that ends where it should, typographic quotes included", () => {
    for (const v of HOSTILE) {
      const i = input(v);
      const script = renderInstallScript("windows", i);
      for (const [name, get] of PS_VARS) {
        const prefix = `\n$${name} = `;
        const at = script.indexOf(prefix);
        expect(at, name).toBeGreaterThan(0);
        const { value, rest } = readPsLiteral(script.slice(at + prefix.length));
        expect(value, name).toBe(get(i));
        // Nothing follows the literal on its line: no statement was smuggled in.
        expect(rest.startsWith("\n"), name).toBe(true);
      }
      expect(script.split("\n")[0]).toMatch(/^# Edgerunner runner bootstrap for runner [\x20-\x7E]*$/);
      // The hostile value occurs nowhere outside those literals.
      const outside = PS_VARS.reduce(
        (s, [name, get]) => s.replace(`$${name} = ${psQuote(get(i))}`, () => ""),
        script.slice(script.indexOf("\n")),
      );
      if (v.length > 3) expect(outside).not.toContain(v);
    }
  });

  it("registers with config.cmd without JIT and with JIT files otherwise", () => {
    const reg = renderInstallScript("windows", input("x", true));
    expect(reg).toContain("$JitConfig = $false");
    expect(reg).toContain("'--ephemeral'");
    const jit = renderInstallScript("windows", input("x", false));
    expect(jit).toContain("$JitConfig = $true");
    expect(jit).toContain("Fetch 'credentials/runner' '.runner'");
  });
});

describe("pickTool", () => {
  const tools = [
    { os: "linux", architecture: "x64", download_url: "a", filename: "a" },
    { os: "linux", architecture: "arm64", download_url: "b", filename: "b" },
    { os: "win", architecture: "x64", download_url: "c", filename: "c" },
  ];
  it("maps GARM's os/arch names to GitHub's", () => {
    expect(pickTool(tools, "linux", "amd64")?.download_url).toBe("a");
    expect(pickTool(tools, "linux", "arm64")?.download_url).toBe("b");
    expect(pickTool(tools, "windows", "amd64")?.download_url).toBe("c");
    expect(pickTool(tools, "linux", "i386")).toBeNull();
  });
});
