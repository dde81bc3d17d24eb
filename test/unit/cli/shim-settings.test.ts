/**
 * Where `setup --shim` finds what a shim Worker is given (cli/src/setup/shim-settings.ts): the
 * vars' order of sources, and the cloud secrets from the environment, a file, or a question in
 * the terminal (played here by a fake Io), each refused when the shim would refuse it.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Io } from "../../../cli/src/command.ts";
import { UsageError } from "../../../cli/src/errors.ts";
import { writeDeployConfig } from "../../../cli/src/setup/deploy-config-file.ts";
import { canPrompt } from "../../../cli/src/setup/prompt.ts";
import { SHIM_KINDS } from "../../../cli/src/setup/shim-kinds.ts";
import { cloudSecrets, shimVars } from "../../../cli/src/setup/shim-settings.ts";

const repo = join(import.meta.dirname, "../../..");
const key = JSON.stringify({
  type: "service_account",
  project_id: "runners-123",
  private_key: "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
  client_email: "shim@runners-123.iam.gserviceaccount.com",
});

let dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "edgerunner-shim-settings-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
  vi.unstubAllEnvs();
});

/** An Io whose terminal gives these answers in turn, and remembers the questions. */
function io(env: Record<string, string>, answers: (string | undefined)[] = []) {
  const asked: { question: string; hidden: boolean }[] = [];
  const value: Io = {
    stdout: () => {},
    stderr: () => {},
    readStdin: async () => "",
    env,
    prompt: async (question, opts) => {
      asked.push({ question, hidden: opts.hidden });
      return answers.shift();
    },
  };
  return { io: value, asked };
}

/** The UsageError a call stops with (it must stop with one). */
async function refusal(run: () => unknown): Promise<{ message: string; hint: string | undefined }> {
  let e: unknown;
  try {
    await run();
  } catch (err) {
    e = err;
  }
  expect(e).toBeInstanceOf(UsageError);
  return { message: (e as UsageError).message, hint: (e as UsageError).hint };
}

describe("the shim's vars", () => {
  /** A checkout with the shims' committed wrangler.toml files. */
  const checkout = () => {
    const root = tempDir();
    for (const shim of ["aws-ec2", "gce"]) {
      mkdirSync(join(root, "shims", shim), { recursive: true });
      copyFileSync(join(repo, "shims", shim, "wrangler.toml"), join(root, "shims", shim, "wrangler.toml"));
    }
    return root;
  };

  it("the option, else the last setup's, else the cloud's own variable, else the committed file; one found nowhere is left out", () => {
    const root = checkout();
    const gce = SHIM_KINDS.gce;
    expect(shimVars(root, gce, {}, {})).toEqual({ GCE_ZONES: "us-central1-a,us-central1-b,us-central1-c" });
    expect(shimVars(root, gce, {}, { CLOUDSDK_COMPUTE_ZONE: "europe-west4-a" })).toEqual({ GCE_ZONES: "europe-west4-a" });
    writeDeployConfig(root, gce.target, { vars: { GCE_ZONES: "asia-east1-a", GCE_PROJECT: "runners-123" } });
    expect(shimVars(root, gce, {}, { CLOUDSDK_COMPUTE_ZONE: "europe-west4-a" })).toEqual({
      GCE_ZONES: "asia-east1-a",
      GCE_PROJECT: "runners-123",
    });
    expect(shimVars(root, gce, { GCE_ZONES: "europe-west1-b" }, {})).toMatchObject({ GCE_ZONES: "europe-west1-b" });
  });

  it("a bad value from the environment is refused naming the variable and the option to give instead", async () => {
    const root = checkout();
    expect(await refusal(() => shimVars(root, SHIM_KINDS["aws-ec2"], {}, { AWS_REGION: "Frankfurt" }))).toEqual({
      message: 'AWS_REGION from $AWS_REGION: a region such as eu-central-1, not "Frankfurt"',
      hint: "give --aws-region REGION",
    });
  });
});

describe("the cloud's secrets", () => {
  it("the shim's own variable first, then the file GOOGLE_APPLICATION_CREDENTIALS names; existing ones are kept", async () => {
    const path = join(tempDir(), "key.json");
    writeFileSync(path, key);
    const gce = SHIM_KINDS.gce;
    expect(await cloudSecrets(gce, [], io({ GOOGLE_APPLICATION_CREDENTIALS: path }).io, false)).toEqual({
      values: { GCE_SERVICE_ACCOUNT_KEY: key },
      from: { GCE_SERVICE_ACCOUNT_KEY: `from the file GOOGLE_APPLICATION_CREDENTIALS=${path}` },
    });
    const both = await cloudSecrets(gce, [], io({ GCE_SERVICE_ACCOUNT_KEY: key, GOOGLE_APPLICATION_CREDENTIALS: "/nowhere" }).io, false);
    expect(both.from).toEqual({ GCE_SERVICE_ACCOUNT_KEY: "from $GCE_SERVICE_ACCOUNT_KEY" });
    expect(await cloudSecrets(gce, ["GCE_SERVICE_ACCOUNT_KEY"], io({}).io, false)).toEqual({ values: {}, from: {} });
  });

  it("asks in the terminal: a key not echoed, a key file by its path (echoed, ~ expanded)", async () => {
    const aws = io({}, ["AKIAEXAMPLE", " wJalrXUtnFEMI/K7MDENG "]);
    expect((await cloudSecrets(SHIM_KINDS["aws-ec2"], [], aws.io, false)).values).toEqual({
      AWS_ACCESS_KEY_ID: "AKIAEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG",
    });
    expect(aws.asked.map((a) => a.hidden)).toEqual([true, true]);

    const home = tempDir();
    writeFileSync(join(home, "key.json"), key);
    vi.stubEnv("HOME", home);
    const gce = io({}, ["~/key.json"]);
    expect(await cloudSecrets(SHIM_KINDS.gce, [], gce.io, false)).toEqual({
      values: { GCE_SERVICE_ACCOUNT_KEY: key },
      from: { GCE_SERVICE_ACCOUNT_KEY: "from the file ~/key.json" },
    });
    expect(gce.asked).toEqual([{ question: "path to the shim's service account key file (JSON): ", hidden: false }]);
  });

  it("refuses what the shim would refuse, without quoting it", async () => {
    const hetzner = await refusal(() => cloudSecrets(SHIM_KINDS.hetzner, [], io({}, ["not a token"]).io, false));
    expect(hetzner.message).toBe("HCLOUD_TOKEN typed in is not an API token (16 or more printable characters, no spaces)");
    expect(hetzner.hint).toContain("set HCLOUD_TOKEN");

    const gce = SHIM_KINDS.gce;
    const half = await refusal(() => cloudSecrets(gce, [], io({ GCE_SERVICE_ACCOUNT_KEY: '{"type":"service_account"' }).io, false));
    expect(half.message).toBe(
      "GCE_SERVICE_ACCOUNT_KEY from $GCE_SERVICE_ACCOUNT_KEY is not JSON: give the whole key file that `gcloud iam service-accounts keys create` writes",
    );
    const partial = JSON.stringify({ type: "service_account", project_id: "runners-123", private_key: "k" });
    const lacking = await refusal(() => cloudSecrets(gce, [], io({ GCE_SERVICE_ACCOUNT_KEY: partial }).io, false));
    expect(lacking.message).toContain("lacks client_email");
    const missing = await refusal(() => cloudSecrets(gce, [], io({ GOOGLE_APPLICATION_CREDENTIALS: "/nonexistent/key.json" }).io, false));
    expect(missing.message).toBe("cannot read /nonexistent/key.json: no such file");
  });

  it("nobody to ask: the variables to set; under --dry-run the secret is shown as asked for, and nothing is asked", async () => {
    const none = await refusal(() => cloudSecrets(SHIM_KINDS.gce, [], io({}).io, false));
    expect(none.message).toBe("the GCE shim needs GCE_SERVICE_ACCOUNT_KEY");
    expect(none.hint).toMatch(/^set GOOGLE_APPLICATION_CREDENTIALS to the path .* or run setup in a terminal to be asked$/);
    const dry = io({}, ["never read"]);
    expect(await cloudSecrets(SHIM_KINDS.hetzner, [], dry.io, true)).toEqual({ values: {}, from: { HCLOUD_TOKEN: "asked for" } });
    expect(dry.asked).toEqual([]);
  });

  it("a terminal is asked only when there is one and CI is not set", () => {
    expect(canPrompt(true, {})).toBe(true);
    expect(canPrompt(undefined, {})).toBe(false);
    expect(canPrompt(true, { CI: "true" })).toBe(false);
    expect(canPrompt(true, { CI: "1" })).toBe(false);
    expect(canPrompt(true, { CI: "false" })).toBe(true);
  });
});
