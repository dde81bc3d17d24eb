import type { Market } from "./launch-plan.ts";

/**
 * The EC2 Query API parameters of every call the shim makes, built from plain inputs. Pure.
 * Names follow EC2's query serialization (lists flattened as `Name.1`, `Name.2`, structures as
 * `Name.Member`); test/contract/ec2-sdk.test.ts proves each builder sends exactly what AWS's
 * own SDK sends for the same call.
 */

export const EC2_API_VERSION = "2016-11-15";

export type QueryParams = Record<string, string>;

export interface Tag {
  key: string;
  value: string;
}

export interface Filter {
  name: string;
  values: string[];
}

export interface RootVolume {
  deviceName: string;
  sizeGb?: number;
  type?: string;
  iops?: number;
  throughput?: number;
}

export interface RunInstanceInput {
  imageId: string;
  instanceType: string;
  subnetId: string | null;
  securityGroupIds: string[];
  clientToken: string;
  /** base64 of the raw user data. */
  userData: string;
  tags: Tag[];
  market: Market;
  spotMaxPrice?: string;
  keyName?: string;
  iamInstanceProfile?: { arn: string } | { name: string };
  launchTemplate?: { id?: string; name?: string; version?: string };
  rootVolume?: RootVolume;
}

const list = (p: QueryParams, prefix: string, values: readonly string[]) =>
  values.forEach((v, i) => {
    p[`${prefix}.${i + 1}`] = v;
  });

function tagSpecification(p: QueryParams, n: number, resourceType: string, tags: Tag[]) {
  p[`TagSpecification.${n}.ResourceType`] = resourceType;
  tags.forEach((t, i) => {
    p[`TagSpecification.${n}.Tag.${i + 1}.Key`] = t.key;
    p[`TagSpecification.${n}.Tag.${i + 1}.Value`] = t.value;
  });
}

/** One instance, tagged at launch (instance and its volumes), idempotent on the client token. */
export function runInstancesParams(i: RunInstanceInput): QueryParams {
  const p: QueryParams = {
    ImageId: i.imageId,
    InstanceType: i.instanceType,
    MinCount: "1",
    MaxCount: "1",
    ClientToken: i.clientToken,
    UserData: i.userData,
  };
  if (i.subnetId) p.SubnetId = i.subnetId;
  list(p, "SecurityGroupId", i.securityGroupIds);
  if (i.keyName) p.KeyName = i.keyName;
  if (i.iamInstanceProfile) {
    if ("arn" in i.iamInstanceProfile) p["IamInstanceProfile.Arn"] = i.iamInstanceProfile.arn;
    else p["IamInstanceProfile.Name"] = i.iamInstanceProfile.name;
  }
  if (i.launchTemplate) {
    if (i.launchTemplate.id) p["LaunchTemplate.LaunchTemplateId"] = i.launchTemplate.id;
    if (i.launchTemplate.name) p["LaunchTemplate.LaunchTemplateName"] = i.launchTemplate.name;
    if (i.launchTemplate.version) p["LaunchTemplate.Version"] = i.launchTemplate.version;
  }
  if (i.rootVolume) {
    const v = i.rootVolume;
    p["BlockDeviceMapping.1.DeviceName"] = v.deviceName;
    p["BlockDeviceMapping.1.Ebs.DeleteOnTermination"] = "true";
    if (v.sizeGb !== undefined) p["BlockDeviceMapping.1.Ebs.VolumeSize"] = String(v.sizeGb);
    if (v.type !== undefined) p["BlockDeviceMapping.1.Ebs.VolumeType"] = v.type;
    if (v.iops !== undefined) p["BlockDeviceMapping.1.Ebs.Iops"] = String(v.iops);
    if (v.throughput !== undefined) p["BlockDeviceMapping.1.Ebs.Throughput"] = String(v.throughput);
  }
  if (i.market === "spot") {
    p["InstanceMarketOptions.MarketType"] = "spot";
    // One-time and terminate: a runner is ephemeral, an interrupted one is simply gone.
    p["InstanceMarketOptions.SpotOptions.SpotInstanceType"] = "one-time";
    p["InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"] = "terminate";
    if (i.spotMaxPrice) p["InstanceMarketOptions.SpotOptions.MaxPrice"] = i.spotMaxPrice;
  }
  tagSpecification(p, 1, "instance", i.tags);
  tagSpecification(p, 2, "volume", i.tags);
  return p;
}

/** Describe by filters (paged with MaxResults/NextToken) or by instance ids (no paging: EC2 refuses MaxResults with ids). */
export function describeInstancesParams(q: {
  filters: Filter[];
  instanceIds?: string[];
  maxResults?: number;
  nextToken?: string;
}): QueryParams {
  const p: QueryParams = {};
  if (q.instanceIds?.length) list(p, "InstanceId", q.instanceIds);
  q.filters.forEach((f, i) => {
    p[`Filter.${i + 1}.Name`] = f.name;
    list(p, `Filter.${i + 1}.Value`, f.values);
  });
  if (q.maxResults !== undefined) p.MaxResults = String(q.maxResults);
  if (q.nextToken) p.NextToken = q.nextToken;
  return p;
}

/** Instance types by filters, paged (EC2 takes MaxResults 5 to 100 here). */
export function describeInstanceTypesParams(q: { filters: Filter[]; maxResults?: number; nextToken?: string }): QueryParams {
  const p: QueryParams = {};
  q.filters.forEach((f, i) => {
    p[`Filter.${i + 1}.Name`] = f.name;
    list(p, `Filter.${i + 1}.Value`, f.values);
  });
  if (q.maxResults !== undefined) p.MaxResults = String(q.maxResults);
  if (q.nextToken) p.NextToken = q.nextToken;
  return p;
}

export const instanceIdsParams = (ids: string[]): QueryParams => {
  const p: QueryParams = {};
  list(p, "InstanceId", ids);
  return p;
};

export const describeImagesParams = (imageIds: string[]): QueryParams => {
  const p: QueryParams = {};
  list(p, "ImageId", imageIds);
  return p;
};

/** The form body of a call: Action and Version first, then the parameters. */
export function queryBody(action: string, params: QueryParams): string {
  return new URLSearchParams({ Action: action, Version: EC2_API_VERSION, ...params }).toString();
}
