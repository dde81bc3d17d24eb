import type { BootstrapInstance } from "../../src/providers/shim-protocol.ts";
import { linuxCloudConfig } from "../aws-ec2/user-data.ts";

/**
 * The user data a Hetzner server boots with: the same cloud-init document as the EC2 shim's
 * (the `runner` user, packages, CA bundle, and a bootstrap script that fetches the
 * coordinator's install script with the instance token), sent as text. Hetzner's cloud images
 * are Linux only, and `user_data` is a JSON string limited to 32 KiB
 * (https://docs.hetzner.cloud/reference/cloud#servers-create-a-server), so there is no gzip
 * fallback: binary would not survive JSON.
 */

export const USER_DATA_LIMIT = 32 * 1024;

export type UserData = { ok: true; text: string } | { ok: false; problem: string };

export function renderUserData(b: BootstrapInstance): UserData {
  if (b.os_type !== "linux") return { ok: false, problem: `Hetzner Cloud runs Linux images only, not ${b.os_type}` };
  let text: string;
  try {
    text = linuxCloudConfig(b);
  } catch (err) {
    // The EC2 renderer refuses control characters and bad CA bundles with a message worth showing.
    return { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
  const size = new TextEncoder().encode(text).length;
  if (size > USER_DATA_LIMIT)
    return {
      ok: false,
      problem: `the user data would be ${size} bytes, over Hetzner's ${USER_DATA_LIMIT} (fewer SSH keys or a smaller CA bundle)`,
    };
  return { ok: true, text };
}
