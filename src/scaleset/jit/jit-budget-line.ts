/**
 * One isolate's line of machines waiting for the GitHub budget to mint their JIT configs (on-boot
 * timing), for one scale set on one credential. Plain logic: the reservation, the clock and the
 * sleeps are passed in.
 *
 * Why a line rather than every machine asking D1 on its own: a burst puts a thousand machines in
 * line at once. Asked one by one, every window's start brought a thousand budget reads to D1,
 * which runs them one at a time; the machines granted a JIT then queued behind them for the reads
 * on their way to GitHub, reached GitHub seconds after their grant, bunched into GitHub's sliding
 * minute and were refused (docs/performance.md). Here one reservation per window asks for the
 * whole line, the grants go to the longest waiting first, and a granted machine goes straight on.
 * Likewise the waiters' claims on their mints are kept fresh for the whole line in one D1 batch,
 * not by each machine on its own (a thousand writes every few seconds, for nothing).
 *
 * No request owns the line. Each reservation is made by one of the waiting requests in its own
 * invocation (whoever wakes first when a window opens); the others look at the line again shortly
 * for their grant. So the line lives exactly as long as someone waits in it, and a request that
 * is cut off mid-reservation is replaced after `stepTimeoutMs`. Nobody awaits a promise another
 * request made or resolves one it is waiting on: workerd ties each promise to the request that
 * made it ("Cannot perform I/O on behalf of a different request"), so waiters share plain data and
 * each sleeps on its own timers.
 */

export interface LineClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** In [0, 1). */
  random(): number;
}

export interface LineReservation {
  windowStart: number;
  wanted: number;
  /** Waiters asking for the first time: those of them left without a grant are counted as budget waits. */
  firstAsks: number;
}

/** JIT configs granted in a window by one credential of the pool. */
export interface LineGrant {
  credentialId: string;
  count: number;
}

export interface JitBudgetLineOptions<Claim> {
  windowMs: number;
  /** Asks D1 for up to `wanted` JIT configs in the window from the credential pool; resolves to what each credential granted, in the order to hand them out. */
  reserve(r: LineReservation): Promise<LineGrant[]>;
  /** Keeps the waiters' claims fresh (one batch); resolves to those still held. The others withdraw. */
  keepClaims(claims: Claim[]): Promise<Claim[]>;
  /** How often the claims are kept. */
  keepEveryMs: number;
  clock: LineClock;
  /** Waiters try again within this long after a window opens, at random (so they do not all wake at once). */
  spreadMs: number;
  /**
   * A window's last stretch in which no reservation is made: a call granted then could not leave
   * in time (its caller's send deadline), so the grant would be wasted. Waiters wait for the next window.
   */
  tailMs: number;
  /** While a reservation is out, waiters look for their grant this often. */
  checkMs: number;
  /** A reservation or keep not answered within this long is abandoned: its request was cut off. */
  stepTimeoutMs: number;
  /** Told once per reservation that left machines waiting (for the logs). */
  onShort?(info: { windowStart: number; wanted: number; granted: number }): void;
  /** A reservation or keep failed (D1): a reservation is tried again after `spreadMs`, a keep at the next turn. */
  onError?(err: unknown): void;
}

/** A waiter's grant: a JIT config paid by `credentialId` in the window ending at `windowEnd`. */
export interface LineTicket {
  windowEnd: number;
  credentialId: string;
}

/** A waiter's answer: its grant; or when to come back; or nothing (its claim was lost). */
export type LineResult = LineTicket | { retryAfterSeconds: number } | "withdrawn";

interface Waiter<Claim> {
  claim: Claim;
  asked: boolean;
  granted: LineTicket | null;
  lost: boolean;
}

export class JitBudgetLine<Claim> {
  private readonly queue: Waiter<Claim>[] = [];
  private step: { token: object; startedAt: number } | null = null;
  /** A window whose reservation fell short: nobody asks again until the next one. */
  private spentWindow = -1;
  /** After a failed reservation, nobody asks again before this. */
  private retryAt = 0;
  /** When the claims were last kept (or the line last started). */
  private keptAt = 0;
  /** What the last reservation that fell short granted: how far the line moves in a window. */
  private perWindow = 0;

  constructor(private readonly o: JitBudgetLineOptions<Claim>) {}

  /** Machines waiting in this line now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Waits for one JIT config until `deadline`, holding `claim` (kept fresh by the line, which was just made). */
  async take(deadline: number, claim: Claim): Promise<LineResult> {
    const me: Waiter<Claim> = { claim, asked: false, granted: null, lost: false };
    if (!this.queue.length) this.keptAt = this.o.clock.now();
    this.queue.push(me);
    try {
      for (;;) {
        if (me.granted) return me.granted;
        if (me.lost) return "withdrawn";
        const now = this.o.clock.now();
        const keepAt = this.keptAt + this.o.keepEveryMs;
        const step = this.step;
        if (step && now - step.startedAt < this.o.stepTimeoutMs) {
          // Someone is at D1 for the whole line: look again shortly (our grant, or the answer).
          // A waiter further back than twice what the last short reservation granted cannot be
          // served by this one: it sleeps to the next window rather than look every few ms.
          const farBack = this.perWindow > 0 && this.queue.indexOf(me) >= 2 * this.perWindow;
          const nextWindow = windowStartOf(now, this.o.windowMs) + this.o.windowMs + Math.floor(this.o.clock.random() * this.o.spreadMs);
          await this.o.clock.sleep(farBack ? Math.max(this.o.checkMs, Math.min(nextWindow, keepAt, deadline) - now) : this.o.checkMs);
          continue;
        }
        if (now >= keepAt) {
          await this.runStep(now, () => this.keepLine(now));
          continue;
        }
        const windowStart = windowStartOf(now, this.o.windowMs);
        const spent = this.spentWindow === windowStart || now >= windowStart + this.o.windowMs - this.o.tailMs;
        if (spent || now < this.retryAt) {
          const from = spent ? Math.max(windowStart + this.o.windowMs, this.retryAt) : this.retryAt;
          const next = from + Math.floor(this.o.clock.random() * this.o.spreadMs);
          if (next > deadline) return { retryAfterSeconds: Math.max(1, Math.ceil((next - now) / 1000)) };
          await this.o.clock.sleep(Math.min(next, keepAt) - now);
          continue;
        }
        await this.runStep(now, () => this.reserveForLine(windowStart));
      }
    } finally {
      const at = this.queue.indexOf(me);
      if (at >= 0) this.queue.splice(at, 1);
    }
  }

  /** One trip to D1 for the whole line, made by the calling waiter; a trip that never answers is given up like anyone else's. */
  private async runStep(now: number, trip: () => Promise<void>): Promise<void> {
    const token = {};
    this.step = { token, startedAt: now };
    try {
      // A moment's grace first, so that machines arriving together go together.
      await this.o.clock.sleep(0);
      await Promise.race([trip(), this.o.clock.sleep(this.o.stepTimeoutMs)]);
    } finally {
      if (this.step?.token === token) this.step = null;
    }
  }

  /** Keeps every waiter's claim; a waiter whose claim is gone (taken over, its instance moved on) withdraws. */
  private async keepLine(now: number): Promise<void> {
    this.keptAt = now;
    const waiting = [...this.queue];
    let kept: Set<Claim>;
    try {
      kept = new Set(await this.o.keepClaims(waiting.map((w) => w.claim)));
    } catch (err) {
      this.o.onError?.(err);
      return;
    }
    for (const w of waiting) {
      if (kept.has(w.claim) || w.granted) continue;
      w.lost = true;
      const at = this.queue.indexOf(w);
      if (at >= 0) this.queue.splice(at, 1);
    }
  }

  /** One reservation for everyone in line; the grants go to the front of the line. */
  private async reserveForLine(windowStart: number): Promise<void> {
    const windowEnd = windowStart + this.o.windowMs;
    const asking = [...this.queue];
    const firstAsks = asking.filter((w) => !w.asked).length;
    let grants: LineGrant[];
    try {
      grants = await this.o.reserve({ windowStart, wanted: asking.length, firstAsks });
    } catch (err) {
      this.retryAt = this.o.clock.now() + this.o.spreadMs;
      this.o.onError?.(err);
      return;
    }
    for (const w of asking) w.asked = true;
    // To the front of the line: a waiter that left while the reservation was out (its deadline,
    // its claim lost) gives its grant to the next, who may have joined since.
    const tickets = grants.flatMap((g) =>
      Array.from({ length: Math.max(0, g.count) }, () => ({ windowEnd, credentialId: g.credentialId })),
    );
    const granted = tickets.length;
    for (const [i, w] of this.queue.splice(0, granted).entries()) w.granted = tickets[i]!;
    if (granted < asking.length) {
      this.perWindow = granted;
      this.spentWindow = Math.max(this.spentWindow, windowStart);
      this.o.onShort?.({ windowStart, wanted: asking.length, granted });
    }
  }
}

const windowStartOf = (now: number, windowMs: number) => Math.floor(now / windowMs) * windowMs;
