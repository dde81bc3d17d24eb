/**
 * One reconcile run at a time per scale set object, and no request lost to it.
 *
 * A run is up to `maxPasses` passes: a pass that acted goes again at once (its marks and
 * failures change what the next plan sees), boundedly. A request made while a run is under
 * way (a nudge for a job just written, an admin reconcile, a create that settled) is served by
 * one more pass of that run; when the run has used its passes, or the request comes after the
 * last pass read D1, the run hands it on (`done(true)`) so the caller can arm the alarm at once.
 * Without that hand-on a job written during the last pass waited for the next tick.
 */
export interface RunHooks {
  /** One pass; resolves to whether it acted. */
  pass(): Promise<boolean>;
  /** After the last pass of a run that did not throw. */
  after(): Promise<void>;
  /** Always, last: `leftOver` when a request made during the run was not served by it. */
  done(leftOver: boolean): Promise<void> | void;
}

export class RunCoalescer {
  private running: Promise<void> | null = null;
  private asked = false;

  constructor(private readonly maxPasses: number) {}

  get underWay(): boolean {
    return this.running !== null;
  }

  /** A request while a run is under way: that run makes one more pass for it, or hands it on. */
  ask(): void {
    if (this.running) this.asked = true;
  }

  /** Starts a run, or joins the one under way (asking it for one more pass). */
  run(hooks: RunHooks): Promise<void> {
    if (this.running) {
      this.asked = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let passes = 0;
        let acted: boolean;
        do {
          this.asked = false;
          acted = await hooks.pass();
        } while ((acted || this.asked) && ++passes < this.maxPasses);
        await hooks.after();
      } finally {
        this.running = null;
        const leftOver = this.asked;
        this.asked = false;
        await hooks.done(leftOver);
      }
    })();
    return this.running;
  }
}
