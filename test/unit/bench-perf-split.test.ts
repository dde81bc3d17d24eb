import { describe, expect, it } from "vitest";
import { splitPerfScript } from "../../bench/perf-split.ts";

// The burst benchmark's split of workerd's CPU, from `perf script -F ip,sym,dso` stacks.
describe("perf split of workerd's CPU", () => {
  it("puts each sample in the first category one of its frames belongs to", () => {
    const stack = (...frames: [string, string][]) => frames.map(([sym, dso]) => `\t1234abcd ${sym} (${dso})`).join("\n");
    const text = [
      // fsync under SQLite: SQLite's, though the leaf is the kernel's
      stack(["ext4_sync_file", "[kernel.kallsyms]"], ["unixSync", "/bin/workerd"], ["sqlite3PagerCommitPhaseOne", "/bin/workerd"]),
      stack(["kj::Event::fire", "/bin/workerd"], ["workerd::tracing::(anonymous namespace)::TailStreamTarget::report", "/bin/workerd"]),
      stack(["__schedule", "[kernel.kallsyms]"], ["kj::UnixEventPort::wait", "/bin/workerd"]),
      stack(["Builtins_JSONStringify", "/bin/workerd"], ["[unknown]", "[unknown]"]),
      stack(["v8::internal::Heap::Scavenge", "/bin/workerd"]),
    ].join("\n\n");
    expect(splitPerfScript(`${text}\n`)).toEqual({ tail_stream: 1, sqlite: 1, kernel: 1, rest: 2, samples: 5 });
  });
});
