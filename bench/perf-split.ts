/**
 * Where the CPU of the coordinator's workerd process goes, by Linux `perf` (BENCH_PERF=file in
 * bench:workflows): stack samples of the whole process, each put in the first of these that one
 * of its native frames belongs to:
 *
 *  - `tail_stream`: wrangler dev's local trace collection (workerd's tail streams to the
 *    observability collector Worker, with [observability] on). Not the Worker's CPU in production.
 *  - `sqlite`: SQLite, i.e. local D1 (a miniflare object) and the scale set objects' own storage.
 *    In production D1 runs elsewhere; the objects' storage stays the object's CPU.
 *  - `kernel`: system calls and interrupts (sockets between wrangler, workerd and the fakes).
 *  - `rest`: JavaScript (every isolate: the coordinator's, local D1's, wrangler's entry Worker),
 *    the runtime and its allocator.
 *
 * JIT-compiled frames do not unwind, so a sample counts for SQLite or a tail stream only when its
 * native frames show it: these shares are lower bounds, `rest` an upper one.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

export const PERF_CATEGORIES = ["tail_stream", "sqlite", "kernel", "rest"] as const;
export type PerfCategory = (typeof PERF_CATEGORIES)[number];

/** The category of one sample, from its frames (leaf first) as `perf script -F sym,dso` prints them. */
export function categorize(frames: { sym: string; dso: string }[]): PerfCategory {
  if (frames.some((f) => /TailStream|tracing::.*Tail/.test(f.sym))) return "tail_stream";
  if (frames.some((f) => /^sqlite3|ActorSqlite|SqliteDatabase/.test(f.sym))) return "sqlite";
  if (frames[0]?.dso.includes("kernel")) return "kernel";
  return "rest";
}

/** Splits `perf script -F ip,sym,dso` output into samples (blank-line separated stacks) and counts them by category. */
export function splitPerfScript(text: string): Record<PerfCategory, number> & { samples: number } {
  const out = { tail_stream: 0, sqlite: 0, kernel: 0, rest: 0, samples: 0 };
  let frames: { sym: string; dso: string }[] = [];
  const flush = () => {
    if (!frames.length) return;
    out[categorize(frames)]++;
    out.samples++;
    frames = [];
  };
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t) {
      flush();
      continue;
    }
    // "<ip> <sym+off> (<dso>)"
    const m = /^[0-9a-f]+\s+(.*?)\s+\((.*)\)$/.exec(t);
    if (m) frames.push({ sym: m[1]!.replace(/\+0x[0-9a-f]+$/, ""), dso: m[2]! });
  }
  flush();
  return out;
}

/** The workerd of a process group that serves the Worker (wrangler dev starts it with an inspector). */
export function workerdPid(processGroup: number): number | null {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== processGroup) continue;
      if (stat.includes("(workerd)") && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--inspector-addr")) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** Starts `perf record` on a process; stop() ends it and returns the split of what it sampled. */
export function recordPerf(pid: number, file: string) {
  const perf = spawn("perf", ["record", "-F", "499", "-g", "-p", String(pid), "-o", file], { stdio: "ignore" });
  const exited = new Promise<void>((r) => perf.once("exit", () => r()));
  return {
    async stop() {
      perf.kill("SIGINT");
      await exited;
      if (!existsSync(file)) throw new Error(`perf wrote no ${file} (is perf allowed here? /proc/sys/kernel/perf_event_paranoid)`);
      const script = spawnSync("perf", ["script", "-i", file, "-F", "ip,sym,dso"], { encoding: "utf8", maxBuffer: 1 << 30 });
      if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
      return splitPerfScript(script.stdout);
    },
  };
}
