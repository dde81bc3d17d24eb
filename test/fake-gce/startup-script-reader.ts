/**
 * What a booting instance of the fake Compute Engine reads from its `startup-script` metadata,
 * the way the shim wrote it: the bootstrap script it saves to /usr/local/sbin/edgerunner-bootstrap
 * (one single-quoted shell word), and the coordinator URL and instance token that script carries.
 */

export const STARTUP_SCRIPT_KEY = "startup-script";

const unquote = (word: string) => word.slice(1, -1).replaceAll(`'"'"'`, "'");

/** The bootstrap script the startup script writes, or null when it writes none. */
export function bootstrapFromStartupScript(script: string): string | null {
  const m = /^printf '%s' ('(?:[^']|'"'"')*') > \/usr\/local\/sbin\/edgerunner-bootstrap$/m.exec(script);
  return m ? unquote(m[1]!) : null;
}

const shellValue = (script: string, name: string) => {
  const m = new RegExp(`^${name}=('.*')$`, "m").exec(script);
  return m ? unquote(m[1]!) : null;
};

export function readStartupScript(metadata: { items?: { key: string; value: string }[] } | undefined): {
  metadataUrl: string;
  token: string;
} | null {
  const script = metadata?.items?.find((i) => i.key === STARTUP_SCRIPT_KEY)?.value;
  const bootstrap = script ? bootstrapFromStartupScript(script) : null;
  const metadataUrl = bootstrap && shellValue(bootstrap, "METADATA_URL");
  const token = bootstrap && shellValue(bootstrap, "INSTANCE_TOKEN");
  return metadataUrl && token ? { metadataUrl, token } : null;
}
