/**
 * A CPU profile of the coordinator's isolate under `wrangler dev`, over the DevTools protocol
 * (wrangler's inspector proxy, `--inspector-port`): Profiler.start before a measured span,
 * Profiler.stop after it, then the samples' self time summed by source module of the bundle.
 *
 * That isolate is the coordinator: its Worker and every
 * Durable Object (workerd gives a script one isolate), with the native work its calls do on that
 * thread (WebCrypto, JSON, the objects' own SQLite, console): what production bills. Local D1
 * (SQLite behind a miniflare object, `d1:db`), wrangler's entry worker and trace collector are
 * other isolates of the same process: in the process's /proc CPU, not in this profile.
 *
 * The sampler is wall-clock: a sample while the thread waits for the CPU (a busy machine) or on
 * a blocking write counts as busy. Compare isolates with each other, and the total with the
 * process's CPU from /proc, rather than reading one figure as CPU time.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * One DevTools protocol session on the coordinator's isolate, through wrangler dev's inspector
 * proxy (`--inspector-port`). workerd's own inspector takes one session per isolate and wrangler
 * holds it; its proxy shares that session with us.
 */
export async function openProfiler(inspectorPort: number, samplingIntervalUs = 1000) {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  const target = targets[0]?.webSocketDebuggerUrl;
  if (!target) throw new Error(`no inspector target on port ${inspectorPort}`);
  // Node's WebSocket (undici) takes headers; the proxy wants an Origin from a client that sends a user agent.
  const ws = new WebSocket(target, { headers: { origin: "http://127.0.0.1" } } as unknown as string[]);
  await new Promise<void>((res, rej) => {
    ws.addEventListener("open", () => res(), { once: true });
    ws.addEventListener("error", () => rej(new Error(`inspector WebSocket ${target} failed`)), { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, { res: (v: any) => void; rej: (e: Error) => void }>();
  ws.addEventListener("message", (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; method?: string; result?: unknown; error?: { message: string } };
    // Events (console, scripts) carry no id. workerd answers a command that returns nothing with
    // the command itself ({id, method, params}), and one that does with {id, method, result}.
    const w = msg.id === undefined ? undefined : waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id!);
    if (msg.error) w.rej(new Error(msg.error.message));
    else w.res(msg.result ?? {});
  });
  // A session that never answers fails the run rather than hanging it.
  const send = (method: string, params: object = {}): Promise<any> =>
    new Promise((res, rej) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        rej(new Error(`${target}: no answer to ${method}`));
      }, 30_000);
      waiting.set(id, {
        res: (v) => {
          clearTimeout(timer);
          res(v);
        },
        rej,
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
  return {
    start: () => send("Profiler.start"),
    stop: async (): Promise<CpuProfile> => {
      const { profile } = await send("Profiler.stop");
      if (!profile) throw new Error("Profiler.stop answered without a profile");
      return profile;
    },
    close: () => ws.close(),
  };
}

/**
 * The module each line of an esbuild bundle came from: esbuild writes `// <path>` before each
 * module's code, which is enough to name src/ files and node_modules packages without a source map.
 */
export function bundleModules(source: string): (line: number) => string {
  const starts: { line: number; module: string }[] = [];
  source.split("\n").forEach((text, i) => {
    const m = /^\/\/ (\S+\.[cm]?[jt]sx?)$/.exec(text);
    if (m) starts.push({ line: i, module: moduleName(m[1]!) });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.module;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** Our files as src/…; node_modules collapse to their package. */
export function moduleName(path: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `pkg:${pkg[1]}`;
  const ours = /(?:^|\/)((?:src|shims|bench)\/.*)$/.exec(path);
  return ours ? ours[1]! : path.replace(/^(\.\.\/)+/, "");
}

export interface ProfileSummary {
  sampled_ms: number;
  /** Time the isolate was running anything: the samples that were not idle. */
  busy_ms: number;
  idle_ms: number;
  gc_ms: number;
  /** Native time not inside any JavaScript function ((program)). */
  program_ms: number;
  /**
   * Self time by module, busiest first; native calls (console, WebCrypto, D1's client) count
   * for the nearest module of the bundle that called them, so src/observability/log.ts includes console.log.
   */
  by_module: Record<string, number>;
  /** Self time by function (name @ module, native functions as they are), busiest first. */
  top_functions: Record<string, number>;
  /** Time with the function on the stack (once per sample), for functions of src/, busiest first. */
  inclusive_src: Record<string, number>;
}

/** Sums each sample's self time (the delta to the next sample) by module and by function. */
export function summarizeProfile(profile: CpuProfile, moduleOf: (url: string, line: number) => string, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  // The sampler is wall-clock: a gap between two samples longer than the interval is the thread
  // off the CPU (blocked on a full log pipe, or waiting for a core on a busy machine), not work.
  // A sample stands for at most twice the median gap.
  const gaps = profile.timeDeltas.filter((d) => d > 0).sort((a, b) => a - b);
  const cap = 2 * (gaps[gaps.length >> 1] ?? 1000);
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = Math.min(profile.timeDeltas[i + 1] ?? 0, cap);
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt);
  }
  const bundled = (url: string) => url !== "" && !url.includes(":");
  const modOf = (f: CallFrame) => (f.url ? (bundled(f.url) ? moduleOf(f.url, f.lineNumber) : f.url) : "(native)");
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  const mod = new Map<string, number>();
  const fn = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let gc = 0;
  let program = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    total += us;
    if (f.functionName === "(idle)") idle += us;
    else if (f.functionName === "(garbage collector)") gc += us;
    else if (f.functionName === "(program)" || f.functionName === "(root)") program += us;
    if (f.functionName.startsWith("(")) continue;
    add(fn, `${f.functionName || "(anonymous)"} @ ${modOf(f)}`, us);
    // Walk up: the nearest bundled caller takes native and runtime-internal time; every src/ function on the way gets it inclusively.
    let owner: string | null = null;
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const cf = byId.get(n)!.callFrame;
      if (!bundled(cf.url)) continue;
      const m = moduleOf(cf.url, cf.lineNumber);
      owner ??= m;
      const name = `${cf.functionName || "(anonymous)"} @ ${m}`;
      if (m.startsWith("src/") && !seen.has(name)) {
        seen.add(name);
        add(incl, name, us);
      }
    }
    add(mod, owner ?? modOf(f), us);
  }
  const ms = (us: number) => Math.round(us / 100) / 10;
  const sorted = (m: Map<string, number>, n = Infinity) =>
    Object.fromEntries(
      [...m]
        .sort(([, a], [, b]) => b - a)
        .slice(0, n)
        .map(([k, v]) => [k, ms(v)]),
    );
  return {
    sampled_ms: ms(total),
    busy_ms: ms(total - idle),
    idle_ms: ms(idle),
    gc_ms: ms(gc),
    program_ms: ms(program),
    by_module: sorted(mod, top),
    top_functions: sorted(fn, top),
    inclusive_src: sorted(incl, top * 2),
  };
}

/** The newest bundle `wrangler dev` built in `dir` (its .wrangler/tmp/dev-…/index.js), if any. */
export function bundlePath(dir: string, name = "index.js"): string | null {
  const tmp = join(dir, ".wrangler", "tmp");
  const builds = existsSync(tmp) ? readdirSync(tmp).map((d) => join(tmp, d, name)) : [];
  return builds.filter((f) => existsSync(f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null;
}

/**
 * A module resolver that reads each bundle once: a file: URL or path as it is, a bare name
 * ("index.js", as wrangler dev names its bundle) looked for under `dir`/.wrangler/tmp.
 */
export function moduleResolver(dir?: string): (url: string, line: number) => string {
  const bundles = new Map<string, ((line: number) => string) | null>();
  const find = (url: string): string | null => {
    if (url.startsWith("file:")) return fileURLToPath(url);
    if (isAbsolute(url)) return url;
    return dir ? bundlePath(dir, url) : null;
  };
  return (url, line) => {
    if (!bundles.has(url)) {
      try {
        const path = find(url);
        bundles.set(url, path ? bundleModules(readFileSync(path, "utf8")) : null);
      } catch {
        bundles.set(url, null);
      }
    }
    return bundles.get(url)?.(line) ?? url;
  };
}

// `node bench/cpu-profile.ts <file.cpuprofile> <bundle.js> [runners]`: the summary of a saved profile.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, bundle, runners] = process.argv.slice(2);
  if (!file || !bundle) throw new Error("usage: cpu-profile.ts <file.cpuprofile> <bundle.js> [runners]");
  const modules = bundleModules(readFileSync(bundle, "utf8"));
  const sum = summarizeProfile(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, (_url, line) => modules(line));
  const per = Number(runners ?? 1);
  const scale = (v: unknown): unknown =>
    typeof v === "number"
      ? Math.round((v / per) * 100) / 100
      : Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, scale(x)]));
  console.log(JSON.stringify(scale(sum), null, 2));
}
