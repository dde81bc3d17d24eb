/**
 * Every machine each cloud of e2e SHAPES ever made, as the cloud itself recorded it (not as the
 * coordinator says): the simulator's machine timelines, the fake EC2's instances (terminated ones
 * stay listed), the fake Hetzner's servers (deleted ones too). The checks compare these with
 * what each job asked for.
 */
import type { MachineTimeline } from "../shims/simulator/simulator.ts";
import type { HetznerCloud } from "./hetzner-cloud.ts";
import type { CloudName } from "./shapes-plan.ts";
import type { Stack } from "./stack.ts";

export interface CloudMachine {
  cloud: CloudName;
  name: string;
  /** The scale set it was made for, as the cloud's tag or label says. */
  pool_id: string;
  flavor: string;
  image: string;
  /** Null where the cloud cannot say (Hetzner has no spot). */
  spot: boolean | null;
  /** The root disk the create asked for; undefined where the cloud's record cannot say (a Hetzner type's disk is fixed). */
  diskGb: number | null | undefined;
  live: boolean;
}

const EC2_LIVE = new Set(["pending", "running", "stopping", "stopped"]);
const HETZNER_POOL_LABEL = "edgerunner-pool-id";

export async function simMachines(stack: Stack): Promise<CloudMachine[]> {
  const q = new URLSearchParams({ tenant: stack.w.tenant.id });
  const res = await fetch(`${stack.sim.url}/_control/simulator/timeline?${q}`);
  if (!res.ok) throw new Error(`simulator timeline: ${res.status} ${await res.text()}`);
  return ((await res.json()) as MachineTimeline[]).map((t) => ({
    cloud: "sim",
    name: t.name,
    pool_id: t.pool_id,
    flavor: t.flavor ?? "",
    image: t.image ?? "",
    spot: t.shape?.spot ?? null,
    diskGb: t.shape ? t.shape.disk_gb : undefined,
    live: t.deleted_at === null,
  }));
}

export async function ec2Machines(stack: Stack): Promise<CloudMachine[]> {
  return (await stack.ec2!.instances()).map((i) => {
    const size = i.blockDevice?.["Ebs.VolumeSize"];
    return {
      cloud: "ec2",
      name: i.tags.Name ?? i.instanceId,
      pool_id: i.tags["edgerunner:pool-id"] ?? "",
      flavor: i.instanceType,
      image: i.imageId,
      spot: i.lifecycle === "spot",
      // No volume size: the AMI's own, which is what a job without disk= gets.
      diskGb: size === undefined ? null : Number(size),
      live: EC2_LIVE.has(i.state),
    };
  });
}

export async function hetznerMachines(stack: Stack): Promise<CloudMachine[]> {
  return (await (stack.cloud as HetznerCloud).project.servers()).map((s) => ({
    cloud: "hetzner",
    name: s.name,
    pool_id: s.labels[HETZNER_POOL_LABEL] ?? "",
    flavor: s.server_type,
    image: s.image,
    spot: null,
    diskGb: undefined,
    live: !s.deleted,
  }));
}

/** Every cloud's machines, in one list. */
export async function allMachines(stack: Stack): Promise<CloudMachine[]> {
  return (await Promise.all([simMachines(stack), ec2Machines(stack), hetznerMachines(stack)])).flat();
}

/** How often each cloud was asked for its catalogue: the shim's GET /v1/flavors, and what the EC2 and Hetzner shims asked their cloud. */
export async function catalogueCalls(
  stack: Stack,
): Promise<{ sim_get_flavors: number; ec2_describe_instance_types: number; hetzner_get_server_types: number }> {
  const [simRequests, ec2Requests, hzRequests] = await Promise.all([
    fetch(`${stack.w.shimControl}/requests`).then((r) => r.json() as Promise<{ operation: string }[]>),
    stack.ec2!.account.requests(),
    (stack.cloud as HetznerCloud).project.requests(),
  ]);
  return {
    sim_get_flavors: simRequests.filter((r) => r.operation === "flavors").length,
    ec2_describe_instance_types: ec2Requests.filter((r) => r.action === "DescribeInstanceTypes").length,
    hetzner_get_server_types: hzRequests.filter((r) => r.method === "GET" && r.path.startsWith("/server_types")).length,
  };
}
