/**
 * What a scenario says on its way ("burst 2/4 queued", "coordinator killed and restarted"): kept
 * back and printed only if the scenario fails, so a green run prints its result lines alone and
 * a red one still shows how it got there. E2E_VERBOSE=1 prints each line as it is said.
 */
const verbose = process.env.E2E_VERBOSE === "1";
let held: string[] = [];

export function say(msg: string) {
  const line = `e2e: ${msg}\n`;
  if (verbose) process.stderr.write(line);
  else held.push(line);
}

/** The scenario failed (or the run is stopped): what it said, in order. */
export function showHeld() {
  for (const line of held) process.stderr.write(line);
  held = [];
}

/** The scenario passed: nothing it said is needed. */
export function dropHeld() {
  held = [];
}
