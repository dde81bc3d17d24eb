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

// Quoting lives in its own module so the EC2 shim's user data can use it without the rest.
export { commentSafe, psQuote, shellQuote } from "./quoting";

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
