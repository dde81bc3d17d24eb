import { spawn } from "node:child_process";

/**
 * Runs the provider executable once, the way GARM does: no arguments, exactly the given
 * environment, the stdin bytes (only CreateInstance has any), stdout and stderr captured.
 *
 * Unlike GARM, the process gets its own process group and the whole group is killed
 * (SIGKILL) on timeout or runaway output, so a provider script's children (an `lxc` or
 * `openstack` CLI it started) cannot outlive the call and pile up.
 */

export interface RunRequest {
  executable: string;
  env: Record<string, string>;
  stdin?: Uint8Array;
  timeoutMs: number;
  /** Per stream. */
  maxOutputBytes: number;
}

export type RunResult =
  | {
      kind: "exited";
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: Buffer;
      stderr: Buffer;
      durationMs: number;
      pid: number | undefined;
    }
  | { kind: "timeout"; stdout: Buffer; stderr: Buffer; durationMs: number; pid: number | undefined }
  | { kind: "output_too_large"; stream: "stdout" | "stderr"; stdout: Buffer; stderr: Buffer; durationMs: number; pid: number | undefined }
  | { kind: "spawn_failed"; message: string; durationMs: number; pid: undefined };

export function runProvider(req: RunRequest): Promise<RunResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(req.executable, [], {
        env: req.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      resolve({ kind: "spawn_failed", message: (err as Error).message, durationMs: elapsed(), pid: undefined });
      return;
    }
    const pid = child.pid;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const size = { stdout: 0, stderr: 0 };
    let stopped: { kind: "timeout" } | { kind: "output_too_large"; stream: "stdout" | "stderr" } | null = null;

    const killGroup = () => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone; fall back to the process itself in case it left its group.
        try {
          child.kill("SIGKILL");
        } catch {
          /* gone */
        }
      }
    };

    const timer = setTimeout(() => {
      if (stopped) return;
      stopped = { kind: "timeout" };
      killGroup();
    }, req.timeoutMs);

    const collect = (stream: "stdout" | "stderr", into: Buffer[]) => (chunk: Buffer) => {
      if (stopped) return;
      size[stream] += chunk.length;
      if (size[stream] > req.maxOutputBytes) {
        stopped = { kind: "output_too_large", stream };
        // Keep what fits so the error can show how it started.
        into.push(chunk.subarray(0, Math.max(0, chunk.length - (size[stream] - req.maxOutputBytes))));
        killGroup();
        return;
      }
      into.push(chunk);
    };
    child.stdout.on("data", collect("stdout", out));
    child.stderr.on("data", collect("stderr", err));
    // A provider that exits without reading its stdin closes the pipe under us: not our failure.
    child.stdin.on("error", () => {});
    let settled = false;
    child.on("error", (e) => {
      // ENOENT, EACCES…: there is no process to wait for.
      if (pid !== undefined || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ kind: "spawn_failed", message: e.message, durationMs: elapsed(), pid: undefined });
    });

    child.on("exit", () => {
      if (stopped) return;
      clearTimeout(timer);
      // A daemon the provider left behind may hold our pipes open: stop waiting for them soon.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 1000).unref();
    });

    child.on("close", (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (stopped) killGroup();
      const durationMs = elapsed();
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err);
      if (stopped?.kind === "timeout") resolve({ kind: "timeout", stdout, stderr, durationMs, pid });
      else if (stopped?.kind === "output_too_large")
        resolve({ kind: "output_too_large", stream: stopped.stream, stdout, stderr, durationMs, pid });
      else resolve({ kind: "exited", code, signal, stdout, stderr, durationMs, pid });
    });

    if (req.stdin?.length) child.stdin.end(req.stdin);
    else child.stdin.end();
  });
}
