/**
 * The coordinator's CPU over one burst, per runner: user + system CPU of the processes under
 * `wrangler dev` from /proc, and, for the burst that is instrumented, a CPU profile of the
 * coordinator's isolate (BENCH_CPU_PROFILE=file) and a Linux perf split of workerd
 * (BENCH_PERF=file). Started before the burst's jobs are queued, stopped once it has settled.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import type { Stack } from "../e2e/stack.ts";
import { bundlePath, moduleResolver, openProfiler, summarizeProfile } from "./cpu-profile.ts";
import { PERF_CATEGORIES, recordPerf, workerdPid } from "./perf-split.ts";

/** The workerd CPU per runner, shared out as perf's samples are. */
function splitPerRunner(
  split: Record<(typeof PERF_CATEGORIES)[number], number> & { samples: number },
  cpuSeconds: number,
  runners: number,
) {
  const perRunner = (n: number) => Math.round(((cpuSeconds * 1000 * n) / split.samples / runners) * 10) / 10;
  return {
    ...Object.fromEntries(PERF_CATEGORIES.map((c) => [c, perRunner(split[c])])),
    samples: split.samples,
    note: "perf stack samples of workerd: tail_stream = wrangler dev's trace collection, sqlite = local D1 and the objects' storage (bench/perf-split.ts)",
  };
}

/** The profile's summary, every figure per runner: the coordinator's JavaScript apart from D1 and workerd's own work. */
function isolateProfile(profile: Parameters<typeof summarizeProfile>[0], runners: number, bundleDir: string) {
  const sum = summarizeProfile(profile, moduleResolver(bundleDir));
  const per = (ms: number) => Math.round((ms / runners) * 100) / 100;
  const perAll = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, per(v)]));
  return {
    busy_ms_per_runner: per(sum.busy_ms),
    gc_ms_per_runner: per(sum.gc_ms),
    program_ms_per_runner: per(sum.program_ms),
    by_module_ms_per_runner: perAll(sum.by_module),
    top_functions_ms_per_runner: perAll(sum.top_functions),
    inclusive_src_ms_per_runner: perAll(sum.inclusive_src),
    sampled_s: Math.round(sum.sampled_ms / 100) / 10,
    note: "self time sampled in the coordinator's isolate (Worker and objects; not local D1), DevTools protocol",
  };
}

/** Starts measuring; `instrument`: also the CPU profile and perf when their variables ask for them. */
export async function measureCpu(stack: Stack, opts: { instrument: boolean; localObservability: boolean }) {
  const { coordinator } = stack;
  // Every coordinator has an inspector port now; a profile is taken only when BENCH_CPU_PROFILE names its file.
  const profiler = opts.instrument && process.env.BENCH_CPU_PROFILE ? await openProfiler(coordinator.inspectorPort) : null;
  await profiler?.start();
  const perfFile = opts.instrument ? process.env.BENCH_PERF : undefined;
  const perfPid = perfFile ? workerdPid(coordinator.processGroup()!) : null;
  if (perfFile && !perfPid) throw new Error("BENCH_PERF: no workerd found");
  const perf = perfPid ? recordPerf(perfPid, perfFile!) : null;
  const cpuBefore = coordinator.cpuSeconds();

  return {
    /** Stops measuring; the figures, per runner created. */
    async stop() {
      const cpuAfter = coordinator.cpuSeconds();
      const perfSplit = await perf?.stop();
      const cpuProfile = await profiler?.stop();
      profiler?.close();
      if (cpuProfile) {
        writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(cpuProfile));
        // The bundle the profile's lines refer to, for `node bench/cpu-profile.ts <profile> <bundle>` later.
        const bundle = bundlePath(coordinator.work);
        if (bundle) copyFileSync(bundle, `${process.env.BENCH_CPU_PROFILE}.bundle.js`);
      }
      return (runners: number) => ({
        // A workerd restarted meanwhile (wrangler dev rebuilds when a source file changes) counts from zero: no figure.
        coordinator_cpu_ms_per_runner:
          cpuBefore && cpuAfter && runners && String(cpuBefore.workerdPids) === String(cpuAfter.workerdPids)
            ? {
                workerd: Math.round(((cpuAfter.workerd - cpuBefore.workerd) * 1000 * 10) / runners) / 10,
                wrangler_dev_proxy: Math.round(((cpuAfter.wrangler - cpuBefore.wrangler) * 1000 * 10) / runners) / 10,
                local_observability: opts.localObservability ? "on" : "off",
                log_level: process.env.BENCH_LOG_LEVEL ?? "info",
                note: "user+system CPU of the processes under wrangler dev, from /proc; target ≤ 10 ms (workerd)",
              }
            : null,
        workerd_cpu_split_ms_per_runner:
          perfSplit && cpuBefore && cpuAfter && runners
            ? splitPerRunner(perfSplit, cpuAfter.workerd - cpuBefore.workerd, runners)
            : undefined,
        coordinator_isolate_profile: cpuProfile && runners ? isolateProfile(cpuProfile, runners, coordinator.work) : undefined,
      });
    },
  };
}
