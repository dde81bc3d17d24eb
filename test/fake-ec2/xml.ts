import type { FakeInstance } from "./types.ts";

/**
 * EC2's XML answers, element for element as the Query API writes them (namespace
 * http://ec2.amazonaws.com/doc/2016-11-15/, lists as `<xSet><item>`, errors as
 * `<Response><Errors><Error>`). AWS's SDK parses them in test/contract/ec2-sdk.test.ts.
 */

export const NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/";

export const STATE_CODES: Record<string, number> = {
  pending: 0,
  running: 16,
  "shutting-down": 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

export type Xml = string;

/** `<name>text</name>`, or nothing for undefined. */
export const el = (name: string, content: string | number | boolean | undefined | Xml[]): Xml =>
  content === undefined ? "" : `<${name}>${Array.isArray(content) ? content.join("") : escapeXml(String(content))}</${name}>`;

/** A list element: `<name><item>…</item>…</name>` (empty lists are written as `<name/>`). */
export const set = (name: string, items: Xml[][]): Xml =>
  items.length ? `<${name}>${items.map((i) => `<item>${i.join("")}</item>`).join("")}</${name}>` : `<${name}/>`;

/** A list of plain values: `<name><item>value</item>…</name>`. */
export const textSet = (name: string, values: string[]): Xml =>
  values.length ? `<${name}>${values.map((v) => `<item>${escapeXml(v)}</item>`).join("")}</${name}>` : `<${name}/>`;

export const state = (name: string, s: string): Xml => el(name, [el("code", STATE_CODES[s] ?? 0), el("name", s)]);

export function document(action: string, requestId: string, children: Xml[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${NAMESPACE}">${el("requestId", requestId)}${children.join("")}</${action}Response>`;
}

export function errorDocument(code: string, message: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>${el("Code", code)}${el("Message", message)}</Error></Errors>${el("RequestID", requestId)}</Response>`;
}

export function instanceItem(i: FakeInstance): Xml[] {
  return [
    el("instanceId", i.instanceId),
    el("imageId", i.imageId),
    state("instanceState", i.state),
    el("privateDnsName", `ip-${i.privateIp.replace(/\./g, "-")}.ec2.internal`),
    el("dnsName", ""),
    el("keyName", i.keyName),
    el("amiLaunchIndex", 0),
    el("instanceType", i.instanceType),
    el("launchTime", i.launchTime),
    el("placement", [el("availabilityZone", i.availabilityZone), el("groupName", ""), el("tenancy", "default")]),
    el("platform", i.platform),
    el("monitoring", [el("state", "disabled")]),
    el("subnetId", i.subnetId),
    el("vpcId", i.vpcId),
    el("privateIpAddress", i.privateIp),
    el("ipAddress", i.publicIp),
    set(
      "groupSet",
      i.securityGroupIds.map((g) => [el("groupId", g), el("groupName", g)]),
    ),
    el("architecture", i.architecture),
    el("rootDeviceType", "ebs"),
    el("rootDeviceName", i.blockDevice?.DeviceName ?? "/dev/xvda"),
    el("instanceLifecycle", i.lifecycle),
    el("clientToken", i.clientToken ?? ""),
    set(
      "tagSet",
      Object.entries(i.tags).map(([k, v]) => [el("key", k), el("value", v)]),
    ),
    el("hypervisor", "xen"),
    el("ebsOptimized", false),
    el("iamInstanceProfile", i.iamInstanceProfile ? [el("arn", i.iamInstanceProfile), el("id", "AIPAFAKE")] : undefined),
  ];
}
