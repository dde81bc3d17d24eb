/**
 * Vitest's reporter for this project (vitest.config.ts): passing tests print nothing. Vitest's
 * default lists every test file, and every test slower than 300 ms, when its output is not a
 * terminal; in CI that buried a failure among some 900 lines of passes. This one prints what the
 * default prints for a failure (the failed file and test, what the test logged, the error with its
 * diff and stack, unhandled errors) and closes with one line of counts. In a terminal the
 * default's live view of the files under way stays, and is erased at the end.
 * `npx vitest run --reporter=default` lists everything again.
 */
import type { TestCase, TestModule, TestModuleState } from "vitest/node";
import { DefaultReporter } from "vitest/node";

type RunEnd = Parameters<DefaultReporter["onTestRunEnd"]>;

export default class QuietReporter extends DefaultReporter {
  private modules: readonly TestModule[] = [];

  protected override printTestModule(testModule: TestModule): void {
    if (testModule.state() === "failed") super.printTestModule(testModule);
  }

  protected override printTestCase(moduleState: TestModuleState, test: TestCase): void {
    if (test.result().state === "failed") super.printTestCase(moduleState, test);
  }

  override onTestRunEnd(testModules: RunEnd[0], unhandledErrors: RunEnd[1], reason: RunEnd[2]): void {
    this.modules = testModules;
    super.onTestRunEnd(testModules, unhandledErrors, reason);
  }

  /** In place of the default's block (files, tests, start, duration, tuning hints): one line. */
  override reportTestSummary(_files: unknown[], errors: unknown[], leakCount: number): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of this.modules)
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed" || state === "failed") count[state]++;
        else count.skipped++;
      }
    const brokenFiles = this.modules.filter((m) => m.state() === "failed").length;
    const parts = [`${count.passed} passed, ${count.failed} failed`];
    if (count.skipped) parts.push(`${count.skipped} skipped`);
    const files = this.modules.length;
    let line = `Tests: ${parts.join(", ")} in ${files} file${files === 1 ? "" : "s"}`;
    if (brokenFiles) line += ` (${brokenFiles} failed)`;
    if (errors.length) line += `, ${errors.length} unhandled error${errors.length > 1 ? "s" : ""}`;
    if (leakCount) line += `, ${leakCount} leak${leakCount > 1 ? "s" : ""}`;
    this.log(`${line}, ${Math.round((this.end - this.start) / 1000)} s`);
  }
}
