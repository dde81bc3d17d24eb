/**
 * The shims `edgerunner setup --shim` deploys, one entry each: its Worker, the vars setup writes
 * into its deploy config (each with an option), the cloud secrets it needs and where they come
 * from, and what to tell someone who has to give them. shim-setup.ts is the one code path that
 * reads an entry; a new shim is a new entry. What each checks mirrors the shim's own config.ts,
 * so a value the Worker would refuse on every request is refused before anything is deployed.
 */
import { AWS_EC2_SHIM, GCE_SHIM, HETZNER_SHIM, type WorkerTarget } from "./deploy-config-file.ts";

export const SHIM_NAMES = ["aws-ec2", "gce", "hetzner"] as const;
export type ShimName = (typeof SHIM_NAMES)[number];

/** A `[vars]` value of the shim's deploy config. */
export interface ShimVar {
  name: string;
  /** The setup option that gives it (`aws-region`), its placeholder and its line in help. */
  option: string;
  arg: string;
  about: string;
  /** An environment variable the cloud's own tools read for the same thing (below the option and the last setup's value). */
  env?: string;
  /** The value as the shim reads it, or undefined when it would refuse it. */
  parse: (value: string) => string | undefined;
  /** What a good value looks like, for the refusal. */
  expected: string;
}

/** Where a secret's value may be found: an environment variable holding it, or naming a file that does. */
export interface SecretSource {
  env: string;
  file?: boolean;
}

export interface ShimSecret {
  name: string;
  required: boolean;
  sources: SecretSource[];
  /** Asked in a terminal when no source has it: the value itself (not echoed), or the path of a file holding it. */
  prompt?: { question: string; file: boolean };
  /** What is wrong with a value, never quoting it; undefined when it is fine. */
  problem?: (value: string) => string | undefined;
}

export interface ShimKind {
  name: ShimName;
  target: WorkerTarget;
  doc: string;
  vars: ShimVar[];
  secrets: ShimSecret[];
  /** What to set when a required secret is missing and nobody can be asked. */
  credentialsHint: string;
}

const matching = (re: RegExp) => (v: string) => (re.test(v) ? v : undefined);

// The shims' own patterns (shims/aws-ec2/config.ts, shims/gce/config.ts): the CLI is built apart from them.
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const GCE_ZONE = /^[a-z]+-[a-z]+[0-9]+-[a-z]$/;
const GCE_PROJECT = /^[a-z][-a-z0-9]{4,28}[a-z0-9]$|^[a-z0-9.-]+:[a-z][-a-z0-9]{4,28}[a-z0-9]$/;

/** Zones as GCE_ZONES holds them: comma-separated, spaces dropped; undefined when one is not a zone. */
function zoneList(value: string): string | undefined {
  const zones = value
    .split(",")
    .map((z) => z.trim())
    .filter(Boolean);
  return zones.length && zones.every((z) => GCE_ZONE.test(z)) ? zones.join(",") : undefined;
}

/**
 * A key file the shim can sign tokens with. The usual mistake is the file `gcloud auth
 * application-default login` writes (type authorized_user): it is a person's login, not a
 * service account's key, and GOOGLE_APPLICATION_CREDENTIALS often points at one.
 */
function serviceAccountKeyProblem(text: string): string | undefined {
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    return "is not JSON: give the whole key file that `gcloud iam service-accounts keys create` writes";
  }
  const k = (key && typeof key === "object" ? key : {}) as Record<string, unknown>;
  if (k.type !== "service_account") {
    const type = typeof k.type === "string" ? ` (its type is ${k.type})` : "";
    return `is not a service account key${type}: make one with \`gcloud iam service-accounts keys create\` (docs/gce-shim.md, step 3)`;
  }
  const missing = ["client_email", "private_key", "project_id"].filter((f) => typeof k[f] !== "string" || k[f] === "");
  return missing.length ? `lacks ${missing.join(", ")}: give the key file as Google wrote it` : undefined;
}

const TERMINAL = "or run setup in a terminal to be asked";

export const SHIM_KINDS: Record<ShimName, ShimKind> = {
  "aws-ec2": {
    name: "aws-ec2",
    target: AWS_EC2_SHIM,
    doc: "docs/aws-ec2-shim.md",
    vars: [
      {
        name: "AWS_REGION",
        option: "aws-region",
        arg: "REGION",
        about: "the region it launches in (default: the last setup's, then AWS_REGION, then us-east-1)",
        env: "AWS_REGION",
        parse: matching(AWS_REGION),
        expected: "a region such as eu-central-1",
      },
    ],
    secrets: [
      {
        name: "AWS_ACCESS_KEY_ID",
        required: true,
        sources: [{ env: "AWS_ACCESS_KEY_ID" }],
        prompt: { question: "AWS access key id for the shim's IAM user: ", file: false },
      },
      {
        name: "AWS_SECRET_ACCESS_KEY",
        required: true,
        sources: [{ env: "AWS_SECRET_ACCESS_KEY" }],
        prompt: { question: "its secret access key: ", file: false },
      },
      { name: "AWS_SESSION_TOKEN", required: false, sources: [{ env: "AWS_SESSION_TOKEN" }] },
    ],
    credentialsHint: `set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (an IAM user's key with the policy in docs/aws-ec2-shim.md), ${TERMINAL}`,
  },
  gce: {
    name: "gce",
    target: GCE_SHIM,
    doc: "docs/gce-shim.md",
    vars: [
      {
        name: "GCE_ZONES",
        option: "gce-zones",
        arg: "ZONES",
        about: "the zones it tries, comma-separated (default: the last setup's, then CLOUDSDK_COMPUTE_ZONE, then us-central1-a,b,c)",
        env: "CLOUDSDK_COMPUTE_ZONE",
        parse: zoneList,
        expected: "zones such as europe-west1-b,europe-west1-c",
      },
      {
        name: "GCE_PROJECT",
        option: "gce-project",
        arg: "PROJECT",
        about: "the project it makes machines in (default: the last setup's, then the key's project)",
        parse: matching(GCE_PROJECT),
        expected: "a project id such as my-project-123",
      },
    ],
    secrets: [
      {
        name: "GCE_SERVICE_ACCOUNT_KEY",
        required: true,
        // The shim's own name first: GOOGLE_APPLICATION_CREDENTIALS may be set for something else.
        sources: [{ env: "GCE_SERVICE_ACCOUNT_KEY" }, { env: "GOOGLE_APPLICATION_CREDENTIALS", file: true }],
        prompt: { question: "path to the shim's service account key file (JSON): ", file: true },
        problem: serviceAccountKeyProblem,
      },
    ],
    credentialsHint:
      "set GOOGLE_APPLICATION_CREDENTIALS to the path of the shim's service account key file, or GCE_SERVICE_ACCOUNT_KEY to its JSON" +
      ` (docs/gce-shim.md, step 3), ${TERMINAL}`,
  },
  hetzner: {
    name: "hetzner",
    target: HETZNER_SHIM,
    doc: "docs/hetzner-shim.md",
    vars: [],
    secrets: [
      {
        name: "HCLOUD_TOKEN",
        required: true,
        sources: [{ env: "HCLOUD_TOKEN" }],
        prompt: { question: "Hetzner Cloud API token (Read & Write) of the runners' project: ", file: false },
        // Hetzner's tokens are printable characters only; anything else would break the Authorization header.
        problem: (v) => (/^[\x21-\x7e]{16,}$/.test(v) ? undefined : "is not an API token (16 or more printable characters, no spaces)"),
      },
    ],
    credentialsHint: `set HCLOUD_TOKEN to an API token (Read & Write) of the runners' Hetzner Cloud project (docs/hetzner-shim.md), ${TERMINAL}`,
  },
};

export const isShimName = (name: string): name is ShimName => (SHIM_NAMES as readonly string[]).includes(name);

/** Every var option of every shim, with the shim it belongs to. */
export const shimVarOptions = () => SHIM_NAMES.flatMap((name) => SHIM_KINDS[name].vars.map((v) => ({ kind: SHIM_KINDS[name], v })));
