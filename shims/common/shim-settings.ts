/**
 * Settings every cloud shim Worker reads the same way (shared by the EC2, GCE and Hetzner
 * shims' config.ts). Each adds what is wrong to `problems`, so one answer names every mistake.
 */

/** The shared secret and, while one is rotated out, the older ones still accepted. */
export function shimSecrets(env: { SHIM_SECRET?: string; SHIM_PREVIOUS_SECRETS?: string }, problems: string[]): string[] {
  const secret = env.SHIM_SECRET ?? "";
  if (secret.length < 16) problems.push("SHIM_SECRET must be set (16+ characters, the secret registered with the coordinator)");
  const previous = (env.SHIM_PREVIOUS_SECRETS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length >= 16);
  return [secret, ...previous];
}

/** A duration var in seconds (0 < n ≤ max), in milliseconds; the fallback when unset or wrong. */
export function secondsSetting(v: string | undefined, fallback: number, max: number, name: string, problems: string[]): number {
  if (v === undefined || v === "") return fallback * 1000;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > max) {
    problems.push(`${name} must be a number of seconds between 0 and ${max}`);
    return fallback * 1000;
  }
  return Math.round(n * 1000);
}
