#!/usr/bin/env node
// node bench/profile-summary.mjs FILE.cpuprofile [--top 30]
//
// Summarizes a V8 CPU profile (bench:webhooks --cpu-profile): self time by function and by
// source file, and total (inclusive) time of the functions that matter most, so "where does
// the time go" can be answered without opening DevTools.

import { readFileSync } from "node:fs";

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error("usage: node bench/profile-summary.mjs FILE.cpuprofile [--top N]");
const top = rest[0] === "--top" ? Number(rest[1]) : 30;
const profile = JSON.parse(readFileSync(file, "utf8"));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample: the gap to the next one (the last sample gets the mean).
const deltas = profile.timeDeltas ?? [];
const total = (profile.endTime - profile.startTime) / 1000;
const selfMs = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (deltas[i + 1] ?? total / profile.samples.length) / 1000;
  selfMs.set(profile.samples[i], (selfMs.get(profile.samples[i]) ?? 0) + dt);
}

const label = (n) => {
  const f = n.callFrame;
  const url = (f.url || "").replace(/^.*\/(src|node_modules)\//, "$1/");
  return `${f.functionName || "(anonymous)"} ${url}:${f.lineNumber + 1}`;
};
const fileOf = (n) => (n.callFrame.url || `(${n.callFrame.functionName})`).replace(/^.*\/(src|node_modules)\//, "$1/");

const bySelf = new Map();
const byFile = new Map();
const inclusive = new Map();
let busy = 0;
for (const [id, ms] of selfMs) {
  const n = byId.get(id);
  const name = n.callFrame.functionName;
  if (name !== "(idle)" && name !== "(program)") busy += ms;
  bySelf.set(label(n), (bySelf.get(label(n)) ?? 0) + ms);
  byFile.set(fileOf(n), (byFile.get(fileOf(n)) ?? 0) + ms);
  // Inclusive: every distinct frame on the sample's stack.
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur));
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + ms);
  }
}

const table = (title, m) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${v.toFixed(1).padStart(9)} ms  ${k}`);
};
console.log(`profile: ${total.toFixed(0)} ms wall, ${busy.toFixed(0)} ms in JavaScript or the runtime (not idle)`);
table("self time by function", bySelf);
table("self time by file", byFile);
table("inclusive time by function", inclusive);
