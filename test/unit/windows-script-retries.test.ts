// The Windows bootstrap retries its calls as the Linux one does (issue 37): the same calls, as
// many times, after the same failures, honouring Retry-After, so a lost answer costs no machine
// on Windows either. PowerShell is not installed here, so these read the rendered script: the
// retry counts are taken from both scripts and compared, and the retry loop is checked piece by
// piece against what curl's --retry does.
import { describe, expect, it } from "vitest";
import { UpdateScaleSet } from "../../src/api/scaleset-input";
import { type InstallScriptInput, renderInstallScript } from "../../src/bootstrap/install-script";

function input(registration: boolean): InstallScriptInput {
  return {
    instanceName: "runner-1",
    metadataUrl: "https://coord.example/api/v1/metadata",
    callbackUrl: "https://coord.example/api/v1/callbacks",
    token: "tok",
    tool: { os: "win", architecture: "x64", download_url: "https://dl.example/r.zip", filename: "r.zip", temp_download_token: "dl" },
    runAsUser: "runner",
    serviceName: "actions.runner.octo.app",
    registration: registration ? { repoUrl: "https://github.example/octo/app", labels: ["self-hosted"], runnerGroup: "" } : null,
  };
}

const scripts = (registration: boolean) => ({
  linux: renderInstallScript("linux", input(registration)),
  windows: renderInstallScript("windows", input(registration)),
});

/** The HTTP statuses curl's `--retry` counts as transient (curl(1)); any other is final. */
const CURL_TRANSIENT = [408, 429, 500, 502, 503, 504];

const lineWith = (script: string, marker: string): string => {
  const lines = script.split("\n").filter((l) => l.includes(marker));
  expect(lines, marker).toHaveLength(1);
  return lines[0]!;
};
const num = (text: string, re: RegExp): number => {
  const m = re.exec(text);
  expect(m, `${re} in ${text}`).not.toBeNull();
  return Number(m![1]);
};

/** A PowerShell function's whole text, `function Name(…) { … }`, by counting braces. */
function psFunction(script: string, name: string): string {
  const at = script.indexOf(`\nfunction ${name}(`);
  expect(at, name).toBeGreaterThan(0);
  let depth = 0;
  for (let i = script.indexOf("{", at); i < script.length; i++) {
    if (script[i] === "{") depth++;
    if (script[i] === "}" && --depth === 0) return script.slice(at + 1, i + 1);
  }
  throw new Error(`${name} does not end`);
}

/** The `{ … }` script blocks handed to With-Retries: the calls it makes. */
function retriedBlocks(script: string): string[] {
  const blocks: string[] = [];
  for (const m of script.matchAll(/With-Retries \S+ \{/g)) {
    let depth = 0;
    for (let i = m.index + m[0].length - 1; i < script.length; i++) {
      if (script[i] === "{") depth++;
      if (script[i] === "}" && --depth === 0) {
        blocks.push(script.slice(m.index + m[0].length, i));
        break;
      }
    }
  }
  return blocks;
}

// How many retries each call gets, in each script.
const linuxFetchDefault = (linux: string) => num(linux, /^fetch\(\) \{[^\n]*\n[^\n]*--retry "\$\{3:-(\d+)\}"/m);
const windowsFetchDefault = (windows: string) => num(psFunction(windows, "Fetch"), /\[int\]\$Retries = (\d+)\)/);
const linuxFetch = (linux: string, route: string, file: string) => {
  const m = new RegExp(`^\\s*fetch ${route} ${file.replace(".", "\\.")}(?: (\\d+))?$`, "m").exec(linux);
  expect(m, route).not.toBeNull();
  return m![1] ? Number(m![1]) : linuxFetchDefault(linux);
};
const windowsFetch = (windows: string, route: string, file: string) => {
  const m = new RegExp(`^\\s*Fetch '${route}' '${file.replace(".", "\\.")}'(?: (\\d+))?$`, "m").exec(windows);
  expect(m, route).not.toBeNull();
  return m![1] ? Number(m![1]) : windowsFetchDefault(windows);
};
const JIT_FILES: [string, string][] = [
  ["credentials/runner", ".runner"],
  ["credentials/credentials", ".credentials"],
  ["credentials/credentials_rsaparams", ".credentials_rsaparams"],
];

describe("Windows bootstrap: retries like the Linux one", () => {
  it("sends every web call through With-Retries, with basic parsing (Windows PowerShell 5.1 without Internet Explorer)", () => {
    for (const registration of [true, false]) {
      const { windows } = scripts(registration);
      const calls = [...windows.matchAll(/Invoke-(WebRequest|RestMethod)\b/g)];
      expect(calls.length).toBeGreaterThanOrEqual(3);
      for (const call of calls) {
        const line = windows.slice(windows.lastIndexOf("\n", call.index) + 1, windows.indexOf("\n", call.index));
        expect(line).toMatch(/With-Retries (\d+|\$Retries) \{ Invoke-(WebRequest|RestMethod) -UseBasicParsing /);
      }
    }
  });

  it("gives the registration token as many retries as the Linux script's curl", () => {
    const { linux, windows } = scripts(true);
    const retries = num(lineWith(linux, "runner-registration-token"), /--retry (\d+)/);
    expect(retries).toBeGreaterThan(0);
    expect(num(lineWith(windows, "/runner-registration-token/"), /With-Retries (\d+) \{ Invoke-WebRequest/)).toBe(retries);
    // Giving up is a reported failure, as on Linux.
    expect(lineWith(windows, "/runner-registration-token/")).toMatch(/\} catch \{ Fail 'could not fetch the registration token' \}$/);
  });

  it("gives each JIT file as many retries as the Linux script's fetch (30 for the first, which may wait in line)", () => {
    const { linux, windows } = scripts(false);
    for (const [route, file] of JIT_FILES) expect(windowsFetch(windows, route, file), route).toBe(linuxFetch(linux, route, file));
    expect(windowsFetch(windows, "credentials/runner", ".runner")).toBe(30);
    expect(psFunction(windows, "Fetch")).toMatch(
      /try \{ With-Retries \$Retries \{ Invoke-WebRequest [^}]*\} \} catch \{ Fail "could not fetch \$Route" \}/,
    );
  });

  it("gives the runner download and every report as many retries as the Linux script's curl", () => {
    const { linux, windows } = scripts(true);
    expect(num(lineWith(windows, "-Uri $DownloadUrl"), /With-Retries (\d+) \{/)).toBe(num(lineWith(linux, "download=("), /--retry (\d+)/));
    const linuxReports = num(linux, /^call_home\(\) \{[^\n]*\n[^\n]*--retry (\d+)/m);
    expect(num(psFunction(windows, "Call-Home"), /With-Retries (\d+) \{ Invoke-RestMethod/)).toBe(linuxReports);
  });

  it("tries once more per retry, after no answer or one of curl's transient statuses only, then throws", () => {
    const { windows } = scripts(true);
    const f = psFunction(windows, "With-Retries");
    expect(f).toMatch(/^function With-Retries\(\[int\]\$Retries, \[scriptblock\]\$Call\) \{/);
    // Bounded: the counter starts at 0 and the call's error is thrown once it reaches $Retries,
    // so 1 + $Retries tries in all, as curl's --retry N.
    const counter = /for \(\$(\w+) = 0; ; \$\1\+\+\)/.exec(f)?.[1];
    expect(counter).toBeDefined();
    expect(f).toContain("try { return & $Call }");
    const giveUp = /if \((.*)\) \{ throw \}/.exec(f)?.[1];
    expect(giveUp).toBeDefined();
    expect(giveUp).toContain(`$${counter} -ge $Retries -or `);
    // The status is the exception's Response's (WebException in 5.1, HttpResponseException in 7);
    // without a Response (refused, timed out, cut) the call is tried again.
    expect(f).toContain("$answer = $_.Exception.Response");
    const statuses = /\(\$answer -and \[int\]\$answer\.StatusCode -notin ([\d, ]+)\)/.exec(giveUp!)?.[1];
    expect(statuses?.split(",").map(Number)).toEqual(CURL_TRANSIENT);
    expect(f).toContain("Start-Sleep -Seconds (Retry-Seconds $answer)");
  });

  it("waits Retry-After's seconds or date from either PowerShell, at least the Linux script's --retry-delay, at most a minute", () => {
    const { linux, windows } = scripts(true);
    const f = psFunction(windows, "Retry-Seconds");
    // Windows PowerShell 5.1: an HttpWebResponse, headers by name; PowerShell 7: an HttpResponseMessage.
    expect(f).toContain("if ($Answer -is [System.Net.WebResponse]) { $Answer.Headers['Retry-After'] }");
    expect(f).toContain('elseif ($Answer) { "$($Answer.Headers.RetryAfter)" }');
    expect(f).toContain('[long]::TryParse("$after", [ref]$seconds)');
    expect(f).toMatch(/\[DateTimeOffset\]::TryParseExact\("\$after", 'r', \[Globalization\.CultureInfo\]::InvariantCulture/);
    const clamp = /\[int\]\[Math\]::Min\((\d+), \[Math\]::Max\((\d+), \$seconds\)\)\s*\}$/.exec(f);
    expect(clamp).not.toBeNull();
    const [cap, floor] = [Number(clamp![1]), Number(clamp![2])];
    // curl waits --retry-delay, or Retry-After when longer; every Linux call has the same delay.
    const delays = new Set([...linux.matchAll(/--retry-delay (\d+)/g)].map((m) => Number(m[1])));
    expect([...delays]).toEqual([floor]);
    // curl sets no cap; a wait here never outlasts the shortest bootstrap timeout (minutes),
    // which counts from the machine's last ask.
    expect(cap).toBeGreaterThan(floor);
    expect(UpdateScaleSet.safeParse({ bootstrap_timeout: cap / 60 }).success).toBe(true);
    expect(UpdateScaleSet.safeParse({ bootstrap_timeout: cap / 60 - 1 }).success).toBe(false);
  });

  it("runs the retried blocks without With-Retries' own variables in the way (PowerShell scopes are dynamic)", () => {
    for (const registration of [true, false]) {
      const { windows } = scripts(registration);
      const f = psFunction(windows, "With-Retries");
      const own = new Set([...f.matchAll(/\$(\w+)/g)].map((m) => m[1]!.toLowerCase()).filter((v) => v !== "_"));
      const blocks = retriedBlocks(windows);
      expect(blocks.length).toBeGreaterThanOrEqual(3);
      for (const block of blocks) {
        const used = [...block.matchAll(/\$(\w+)/g)].map((m) => m[1]!.toLowerCase());
        expect(
          used.filter((v) => own.has(v)),
          block,
        ).toEqual([]);
      }
    }
  });
});
