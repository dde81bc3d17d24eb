/**
 * What e2e SHAPES asks of each cloud (e2e/shapes.ts runs it): a shaped scale set's bounds, the
 * five shapes its jobs ask for, and the flavor each must get, written by hand from the cloud's
 * table (shims/simulator/flavors.ts, test/fake-ec2/instance-types.ts,
 * test/fake-hetzner/server-types.ts) rather than computed: the coordinator's chooser
 * (src/shapes/flavor-choice.ts) is what is under test, so the expectation must not come from it.
 * Each cloud's shapes are two arm64, one spot (Hetzner has none: a dedicated-core shape there),
 * two images; the jobs that must be refused ask above the bounds or for an image not allowed.
 */
import type { ShapeBoundsInput } from "../src/shapes/shape-bounds.ts";

export type CloudName = "sim" | "ec2" | "hetzner";

export interface ExpectedMachine {
  flavor: string;
  /** The cloud's image id the allow-list maps the job's image name to. */
  imageId: string;
  spot: boolean;
  /** The root disk the job asked for (null: none). */
  diskGb: number | null;
}

export interface PlannedShape {
  /** The job's name at the fake GitHub says which shape it asked for: `<cloud>-<shape>-r<run>`. */
  name: string;
  /** What follows `<key>=<run id>` in the job's label. */
  fields: string;
  expect: ExpectedMachine;
}

export interface PlannedRefusal {
  name: string;
  fields: string;
  /** The refusal the job's row must show (GET /api/v1/jobs `refusal`). */
  reason: RegExp;
  /** The run id the label names, when not the job's own (a label copied from another run). */
  foreignRun?: boolean;
}

export interface CloudPlan {
  cloud: CloudName;
  scaleSet: string;
  labels: string[];
  key: string;
  maxRunners: number;
  bounds: ShapeBoundsInput;
  /** The scale set's own image and flavor (the API wants them; a shaped machine gets its job's). */
  image: string;
  flavor: string;
  shapes: PlannedShape[];
  refusals: PlannedRefusal[];
}

const SIM_2404 = "ubuntu:24.04";
const SIM_2204 = "ubuntu:22.04";
const AMI_X86 = "ami-0123456789abcdef0";
const AMI_ARM = "ami-0fedcba98765432a1";
/** The fake EC2's account is told AMI_ARM is an arm64 image, as the real one would say. */
export const EC2_ARM_AMIS = [AMI_ARM];

const machine = (flavor: string, imageId: string, o: { spot?: boolean; diskGb?: number } = {}): ExpectedMachine => ({
  flavor,
  imageId,
  spot: o.spot ?? false,
  diskGb: o.diskGb ?? null,
});

const outOfBounds = (cloud: CloudName, cpu: number, cpuMax: number): PlannedRefusal[] => [
  { name: `${cloud}-too-big`, fields: `cpu=${cpu}/ram=8`, reason: new RegExp(`cpu=${cpu} is above this scale set's ${cpuMax}`) },
  { name: `${cloud}-windows`, fields: "cpu=2/image=windows-2022", reason: /image=windows-2022 is not one of this scale set's images/ },
];

/**
 * The simulator's catalogue has prices: each shape gets the cheapest flavor that fits.
 * - cpu=2/ram=4: c1.small ($0.020) beats g1.small ($0.024) and a1 (arm64);
 * - arm64 4 vCPUs 16 GB: a1.medium ($0.038); arm64 2 vCPUs: a1.small ($0.019);
 * - spot 4 vCPUs 16 GB: g1.medium ($0.048), c1.large ($0.080) dearer, m1/d1 not on spot;
 * - family m1 or d1, 100 GB disk: d1.medium ($0.090, a 160 GB disk) beats m1.large ($0.100).
 */
const SIM: CloudPlan = {
  cloud: "sim",
  scaleSet: "shaped-sim",
  labels: ["self-hosted", "linux", "shaped-sim"],
  key: "edgerunner",
  maxRunners: 40,
  bounds: {
    key: "edgerunner",
    cpu: { min: 1, max: 16 },
    ram_gb: { min: 1, max: 64 },
    architectures: ["amd64", "arm64"],
    spot: true,
    images: { "ubuntu-24.04": SIM_2404, "ubuntu-22.04": SIM_2204 },
  },
  image: SIM_2404,
  flavor: "g1.small",
  shapes: [
    { name: "sim-small", fields: "cpu=2/ram=4", expect: machine("c1.small", SIM_2404) },
    { name: "sim-arm", fields: "cpu=4/ram=16/arch=arm64", expect: machine("a1.medium", SIM_2404) },
    { name: "sim-arm-2204", fields: "cpu=2/arch=arm64/image=ubuntu-22.04", expect: machine("a1.small", SIM_2204) },
    { name: "sim-spot", fields: "cpu=4/ram=16/spot=true", expect: machine("g1.medium", SIM_2404, { spot: true }) },
    // Commas between the fields, as a job may write them (the runners register with JIT configs).
    {
      name: "sim-disk",
      fields: "cpu=4,ram=16,image=ubuntu-22.04,family=m1+d1,disk=100",
      expect: machine("d1.medium", SIM_2204, { diskGb: 100 }),
    },
  ],
  refusals: [
    ...outOfBounds("sim", 32, 16),
    // A label naming another run: refused a machine. Its fields are no other job's, as GitHub
    // gives a job to any runner with its labels: had it copied another run's label whole, it
    // could take the runner made for that run's job (which would then get a machine of its own).
    { name: "sim-other-run", fields: "cpu=3/ram=4", reason: /the label's run id \d+ is not this job's run/, foreignRun: true },
  ],
};

/**
 * EC2 publishes no prices: each shape gets the smallest type that fits (fewest vCPUs, then least
 * memory, then the job's family order), within the families the bounds allow (no t3 bursts).
 * - 4 vCPUs 8 GB: c7a.xlarge (8 GB) before m7a/m7i-flex.xlarge (16 GB);
 * - arm64 4 vCPUs 16 GB: m7g.xlarge (c7g.xlarge has 8 GB); arm64 2 vCPUs: c7g.large;
 * - spot, 2 vCPUs 8 GB, family m7i-flex+m7a: m7i-flex.large, the job's first family breaking
 *   the tie with m7a.large;
 * - 8 vCPUs 16 GB with a 100 GB root volume: c7a.2xlarge (m7a.2xlarge has 32 GB).
 */
const EC2: CloudPlan = {
  cloud: "ec2",
  scaleSet: "shaped-ec2",
  labels: ["self-hosted", "linux", "shaped-ec2"],
  key: "edgerunner",
  maxRunners: 20,
  bounds: {
    key: "edgerunner",
    cpu: { min: 2, max: 8 },
    ram_gb: { min: 2, max: 32 },
    architectures: ["amd64", "arm64"],
    families: ["c7a", "m7a", "m7i-flex", "c7g", "m7g"],
    spot: true,
    images: { "ubuntu-24.04": AMI_X86, "ubuntu-24.04-arm": AMI_ARM },
  },
  image: AMI_X86,
  flavor: "c7a.xlarge",
  shapes: [
    { name: "ec2-c4", fields: "cpu=4/ram=8", expect: machine("c7a.xlarge", AMI_X86) },
    { name: "ec2-arm", fields: "cpu=4/ram=16/arch=arm64/image=ubuntu-24.04-arm", expect: machine("m7g.xlarge", AMI_ARM) },
    { name: "ec2-arm-small", fields: "cpu=2/arch=arm64/image=ubuntu-24.04-arm", expect: machine("c7g.large", AMI_ARM) },
    { name: "ec2-spot", fields: "cpu=2/ram=8/spot=true/family=m7i-flex+m7a", expect: machine("m7i-flex.large", AMI_X86, { spot: true }) },
    { name: "ec2-disk", fields: "cpu=8,ram=16,disk=100", expect: machine("c7a.2xlarge", AMI_X86, { diskGb: 100 }) },
  ],
  refusals: outOfBounds("ec2", 16, 8),
};

/**
 * Hetzner's catalogue (fsn1, euros) has prices: the cheapest type that fits, its fixed disk
 * large enough. Its own shape key, so a second key is exercised.
 * - 2 vCPUs 4 GB: cx22 (€0.0060/h) before cpx21 (€0.0120);
 * - arm64 4 vCPUs 8 GB: cax21; arm64 2 vCPUs: cax11;
 * - family ccx or cpx, 4 vCPUs 16 GB: ccx23 (cpx31 has 8 GB);
 * - 4 vCPUs 8 GB with 100 GB of disk: cpx31 (€0.0216, 160 GB), as cx32 (€0.0108) has 80 GB.
 */
const HETZNER: CloudPlan = {
  cloud: "hetzner",
  scaleSet: "shaped-hetzner",
  labels: ["self-hosted", "linux", "shaped-hetzner"],
  key: "hz",
  maxRunners: 20,
  bounds: {
    key: "hz",
    cpu: { min: 1, max: 8 },
    ram_gb: { min: 1, max: 32 },
    disk_gb: { min: 20, max: 400 },
    architectures: ["amd64", "arm64"],
    images: { "ubuntu-24.04": "ubuntu-24.04", "debian-12": "debian-12" },
  },
  image: "ubuntu-24.04",
  flavor: "cx22",
  shapes: [
    { name: "hz-small", fields: "cpu=2/ram=4", expect: machine("cx22", "ubuntu-24.04") },
    { name: "hz-arm", fields: "cpu=4/ram=8/arch=arm64", expect: machine("cax21", "ubuntu-24.04") },
    { name: "hz-arm-debian", fields: "cpu=2/arch=arm64/image=debian-12", expect: machine("cax11", "debian-12") },
    { name: "hz-dedicated", fields: "cpu=4/ram=16/family=ccx+cpx", expect: machine("ccx23", "ubuntu-24.04") },
    { name: "hz-disk", fields: "cpu=4,ram=8,disk=100,image=debian-12", expect: machine("cpx31", "debian-12", { diskGb: 100 }) },
  ],
  refusals: outOfBounds("hetzner", 16, 8),
};

export const SHAPE_PLANS: CloudPlan[] = [SIM, EC2, HETZNER];

/** The runs, shared by the three clouds as one workflow's jobs may be: 8 runs, ids GitHub-like. */
export const RUN_IDS = Array.from({ length: 8 }, (_, i) => 9_100_000_001 + i * 7);

/**
 * Which shapes a run's five jobs ask for on each cloud (indices into `shapes`). Even runs ask one
 * job of each; odd runs ask two of one shape (two jobs of one run and shape may take each other's
 * runners) and leave another out, so every shape is asked by several runs and 40 jobs a cloud.
 */
export function shapesOfRun(run: number): number[] {
  if (run % 2 === 0) return [0, 1, 2, 3, 4];
  const twice = run % 5;
  const left = (twice + 2) % 5;
  return [0, 1, 2, 3, 4].filter((s) => s !== left).flatMap((s) => (s === twice ? [s, s] : [s]));
}

/** The job's shape label: `<key>=<run id>/<fields>`, the separator after the run id as the fields use. */
export const shapeLabel = (key: string, runId: number, fields: string) => `${key}=${runId}${fields.includes(",") ? "," : "/"}${fields}`;
