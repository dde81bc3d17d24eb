/**
 * On-boot creates paced to the GitHub budget, as plain arithmetic (issue 26).
 *
 * A machine whose runner is minted on boot asks for its JIT config when it has booted, and then
 * waits in line for the budget (jit-budget-line.ts). Created all at once, a burst's machines all
 * boot together and most of them wait, billed by the second, for the minutes the budget needs: a
 * 1,000-job burst spent most of its machine time booted and waiting. So the object creates a
 * machine only when its JIT config can be minted about when it will ask for it: when the line,
 * projected forward, reaches it within one boot time (`leadMs`) of now, plus the pass's own step
 * (`slackMs`, so the budget never idles between passes).
 *
 * The projection: each machine not minted yet is ready when it asked (booted) or, still booting,
 * at its create plus the lead; the line mints one every `1 / rate` in ready order, never before
 * now. A new machine is ready at now + lead and minted after the last projected one. Creates flow
 * at the pool's minting rate from the first second; when the budget is not the bottleneck (a
 * small burst, a min idle refill) the projection is empty and nothing is held back beyond what one
 * step's slack lets through at once, which covers the budget's first window anyway.
 *
 * Jobs start no later than with every machine created at once: a machine created at t is minted
 * at t + lead at the earliest either way, and the budget mints at the same rate once the first
 * machines have booted. Pure: the object reads the instances and the pool, this decides.
 */

export interface MachineBoot {
  createdAt: number;
  /** When the machine first asked for its runner (it had booted); null: still booting. */
  bootedAt: number | null;
}

export interface PacingInput {
  now: number;
  /** The scale set's on-boot machines whose JIT config is not minted yet. */
  unminted: readonly MachineBoot[];
  /** JIT configs a second the scale set's credential pool can mint. */
  ratePerSecond: number;
  /** The boot time to plan with: create to first ask. */
  leadMs: number;
  /** How far past the lead a create may be minted: the pass interval while creates are held back. */
  slackMs: number;
  /** Creates the plan wants. */
  wanted: number;
}

export interface PacingDecision {
  /** Creates allowed now (≤ wanted). */
  allowed: number;
  /** When the next create would be allowed, if some wanted ones were held back; null otherwise. */
  nextAt: number | null;
  /** The projected mint of the last machine not minted yet (null: none), for the status. */
  lineClearsAt: number | null;
}

/** How many of `wanted` creates may go now, and when to look again for the rest. */
export function paceCreates(input: PacingInput): PacingDecision {
  const { now, unminted, ratePerSecond, leadMs, slackMs, wanted } = input;
  // No known rate (no budget, no usable credential): nothing to pace against.
  if (!(ratePerSecond > 0) || wanted <= 0) return { allowed: Math.max(0, wanted), nextAt: null, lineClearsAt: null };
  const gapMs = 1000 / ratePerSecond;
  const ready = unminted.map((m) => Math.max(now, m.bootedAt ?? m.createdAt + leadMs)).sort((a, b) => a - b);
  let last = Number.NEGATIVE_INFINITY;
  for (const at of ready) last = Math.max(at, last + gapMs);
  const lineClearsAt = ready.length ? last : null;
  const horizon = now + leadMs + slackMs;
  const first = Math.max(now + leadMs, last + gapMs);
  const allowed = first > horizon ? 0 : Math.min(wanted, Math.floor((horizon - first) / gapMs) + 1);
  if (allowed >= wanted) return { allowed, nextAt: null, lineClearsAt };
  // The next create's mint is at first + allowed · gap; it may go when that is within the horizon.
  const nextAt = first + allowed * gapMs - leadMs - slackMs;
  return { allowed, nextAt: Math.max(now + 1, Math.ceil(nextAt)), lineClearsAt };
}

/** Boot times the lead is learned from: the last this many machines'. */
export const BOOT_SAMPLES_KEPT = 50;
/** Fewer samples than this: the default lead. */
export const BOOT_SAMPLES_NEEDED = 3;
/** The lead until a scale set's machines have booted a few times, or when nothing else says. */
export const DEFAULT_BOOT_LEAD_MS = 30_000;

/** What the object keeps of its machines' boots: recent boot times, and the newest boot taken. */
export interface BootSamples {
  /** Boot times (ms), oldest first, at most BOOT_SAMPLES_KEPT. */
  ms: number[];
  /** The latest `bootedAt` already taken: machines that booted after it are new samples. */
  takenUpTo: number;
}

export const NO_BOOT_SAMPLES: BootSamples = { ms: [], takenUpTo: 0 };

/** Adds the boots of machines that booted since the last look; the same object if nothing is new. */
export function takeBootSamples(samples: BootSamples, machines: readonly MachineBoot[]): BootSamples {
  const fresh = machines
    .filter((m): m is MachineBoot & { bootedAt: number } => m.bootedAt !== null && m.bootedAt > samples.takenUpTo)
    .sort((a, b) => a.bootedAt - b.bootedAt);
  if (!fresh.length) return samples;
  const ms = [...samples.ms, ...fresh.map((m) => Math.max(0, m.bootedAt - m.createdAt))].slice(-BOOT_SAMPLES_KEPT);
  return { ms, takenUpTo: fresh.at(-1)!.bootedAt };
}

/** The lead to plan with: the scale set's setting, else the p90 of its recent boots, else the default. */
export function bootLead(
  setting: number | null,
  samples: BootSamples,
): { ms: number; source: "setting" | "observed" | "default"; samples: number } {
  if (setting !== null && setting > 0) return { ms: setting * 1000, source: "setting", samples: samples.ms.length };
  if (samples.ms.length < BOOT_SAMPLES_NEEDED) return { ms: DEFAULT_BOOT_LEAD_MS, source: "default", samples: samples.ms.length };
  const sorted = [...samples.ms].sort((a, b) => a - b);
  const p90 = sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;
  return { ms: p90, source: "observed", samples: sorted.length };
}
