import { gunzipSync } from "node:zlib";

/**
 * What a booting instance of the fake EC2 reads from its user data, the way cloud-init and
 * EC2Launch would: the text (gunzipped when cloud-init would), the bootstrap script cloud-init
 * writes from `write_files`, and the coordinator URL and instance token the script carries.
 */

export interface Bootstrap {
  os: "linux" | "windows";
  metadataUrl: string;
  token: string;
}

/** The raw user data text from RunInstances' base64 UserData; gzip is undone as cloud-init does. */
export function userDataText(base64: string): string {
  const bytes = Buffer.from(base64, "base64");
  return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString("utf8");
}

/** The script cloud-init writes to /usr/local/sbin/edgerunner-bootstrap (the `content: |` block, unindented). */
export function linuxBootstrapScript(cloudConfig: string): string | null {
  const lines = cloudConfig.split("\n");
  const start = lines.findIndex((l, i) => l.trim() === "content: |" && lines[i - 3]?.includes("/usr/local/sbin/edgerunner-bootstrap"));
  if (start < 0) return null;
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l !== "" && !l.startsWith("      ")) break;
    out.push(l.slice(6));
  }
  return out.join("\n");
}

const shellValue = (script: string, name: string) => {
  const m = new RegExp(`^${name}=('.*')$`, "m").exec(script);
  return m ? m[1]!.slice(1, -1).replaceAll(`'"'"'`, "'") : null;
};
const psValue = (script: string, name: string) => {
  const m = new RegExp(`^\\$${name} = ('.*')$`, "m").exec(script);
  return m ? m[1]!.slice(1, -1).replaceAll("''", "'") : null;
};

export function readBootstrap(base64: string): Bootstrap | null {
  const text = userDataText(base64);
  if (text.startsWith("<powershell>")) {
    const metadataUrl = psValue(text, "MetadataUrl");
    const token = psValue(text, "InstanceToken");
    return metadataUrl && token ? { os: "windows", metadataUrl, token } : null;
  }
  const script = linuxBootstrapScript(text);
  const metadataUrl = script && shellValue(script, "METADATA_URL");
  const token = script && shellValue(script, "INSTANCE_TOKEN");
  return metadataUrl && token ? { os: "linux", metadataUrl, token } : null;
}
