import { type ValidProviderInstance, validateProviderInstance, validateProviderInstanceList } from "../../src/providers/shim-protocol.ts";
import type { GarmCommand } from "./provider-env.ts";
import type { RunResult } from "./run-provider.ts";

/**
 * What one provider run means for the HTTP answer. GARM's exit codes: 0 ok, 30 not found,
 * 31 duplicate, anything else a failure whose stdout and stderr go into the error.
 */

export const EXIT_NOT_FOUND = 30;
export const EXIT_DUPLICATE = 31;

/** A failure as the bridge answers it: `{error}` with this status. */
export interface Failure {
  status: number;
  message: string;
  /** For callbacks: whether trying again may work. */
  retryable: boolean;
}

export type ExitOutcome =
  | { type: "ok"; stdout: string }
  | { type: "not_found"; message: string }
  | { type: "duplicate"; message: string }
  | { type: "failed"; failure: Failure };

/** How much of each stream goes into an error (the coordinator keeps 512 characters anyway). */
const MAX_STREAM_SNIPPET = 2048;

function snippet(buf: Buffer): string {
  const text = buf.toString("utf8").trim();
  return text.length > MAX_STREAM_SNIPPET ? `${text.slice(0, MAX_STREAM_SNIPPET)}… (${buf.length} bytes)` : text;
}

function streams(r: { stdout: Buffer; stderr: Buffer }): string {
  return `stdout: ${snippet(r.stdout) || "(empty)"}; stderr: ${snippet(r.stderr) || "(empty)"}`;
}

export function exitOutcome(command: GarmCommand, r: RunResult, timeoutMs: number): ExitOutcome {
  switch (r.kind) {
    case "spawn_failed":
      return { type: "failed", failure: { status: 500, retryable: true, message: `cannot run the provider for ${command}: ${r.message}` } };
    case "timeout":
      return {
        type: "failed",
        failure: {
          status: 504,
          retryable: true,
          message: `provider ${command} did not finish within ${timeoutMs} ms and was killed; ${streams(r)}`,
        },
      };
    case "output_too_large":
      return {
        type: "failed",
        failure: { status: 502, retryable: false, message: `provider ${command} wrote more ${r.stream} than allowed and was killed` },
      };
    case "exited":
      if (r.code === 0) return { type: "ok", stdout: r.stdout.toString("utf8") };
      if (r.code === EXIT_NOT_FOUND) return { type: "not_found", message: `provider ${command}: not found; ${streams(r)}` };
      if (r.code === EXIT_DUPLICATE) return { type: "duplicate", message: `provider ${command}: duplicate; ${streams(r)}` };
      return {
        type: "failed",
        failure: {
          status: 500,
          retryable: true,
          message: `provider ${command} ${r.code === null ? `was killed by ${r.signal}` : `exited with code ${r.code}`}; ${streams(r)}`,
        },
      };
  }
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; failure: Failure };

const malformed = (message: string): { ok: false; failure: Failure } => ({
  ok: false,
  failure: { status: 502, retryable: false, message },
});

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** One ProviderInstance on stdout, checked with GARM's rule (and, for a create, that it is the machine asked for). */
export function parseInstance(command: GarmCommand, stdout: string, expectedName?: string): Parsed<ValidProviderInstance> {
  const json = parseJson(stdout);
  if (!json.ok) return malformed(`provider ${command} printed something that is not JSON: ${stdout.trim().slice(0, 200) || "(nothing)"}`);
  const valid = validateProviderInstance(json.value);
  if (!valid.ok) return malformed(`provider ${command} returned an invalid instance: ${valid.problems.join("; ")}`);
  if (expectedName !== undefined && valid.value.name !== expectedName) {
    return malformed(`provider ${command} returned instance '${valid.value.name}', not '${expectedName}'`);
  }
  return valid;
}

/** ListInstances: a JSON array (Go prints `null` for an empty one), every entry valid. */
export function parseInstanceList(stdout: string): Parsed<ValidProviderInstance[]> {
  const json = parseJson(stdout);
  if (!json.ok)
    return malformed(`provider ListInstances printed something that is not JSON: ${stdout.trim().slice(0, 200) || "(nothing)"}`);
  if (json.value === null) return { ok: true, value: [] };
  const valid = validateProviderInstanceList(json.value);
  if (!valid.ok) return malformed(`provider ListInstances returned an invalid list: ${valid.problems.slice(0, 5).join("; ")}`);
  return valid;
}
