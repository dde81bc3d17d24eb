import type { RunnerTool } from "../scaleset/ports";
import { linuxInstallScript } from "./linux-script";
import { windowsInstallScript } from "./windows-script";

export interface InstallScriptInput {
  instanceName: string;
  metadataUrl: string;
  callbackUrl: string;
  token: string;
  tool: RunnerTool;
  runAsUser: string;
  serviceName: string;
  /**
   * Set when the runner registers without a JIT config: the machine fetches its one-time
   * registration token from the metadata URL and runs config.sh with these.
   */
  registration: { repoUrl: string; labels: string[]; runnerGroup: string } | null;
}

/** Single-quotes a value for bash, so nothing in it is ever interpreted. */
export const shellQuote = (v: string) => `'${v.replaceAll("'", `'"'"'`)}'`;

/**
 * Single-quotes a value for PowerShell. PowerShell also ends a single-quoted string at the
 * typographic single quotes (U+2018..U+201B), so every one of them is doubled too.
 */
export const psQuote = (v: string) => `'${v.replace(/['\u2018\u2019\u201A\u201B]/g, "$&$&")}'`;

/** A value safe to put in a script comment: one line, printable. */
export const commentSafe = (v: string) => v.replace(/[^\x20-\x7E]/g, "?");

/** GitHub names runner architectures x64/arm64/x86/arm; GARM's BootstrapInstance uses amd64/arm64/i386/arm. */
const GITHUB_ARCH: Record<string, string> = { amd64: "x64", arm64: "arm64", i386: "x86", arm: "arm" };
const GITHUB_OS: Record<string, string> = { linux: "linux", windows: "win" };

/** The runner download for an instance's OS and architecture, from GitHub's list. */
export function pickTool(tools: RunnerTool[], osType: string, osArch: string): RunnerTool | null {
  const os = GITHUB_OS[osType] ?? osType;
  const arch = GITHUB_ARCH[osArch] ?? osArch;
  return tools.find((t) => t.os === os && t.architecture === arch) ?? null;
}

export function renderInstallScript(osType: string, input: InstallScriptInput): string {
  return osType === "windows" ? windowsInstallScript(input) : linuxInstallScript(input);
}
