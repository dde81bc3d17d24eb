/**
 * Bounds how many provider processes run at once (each may be a heavy CLI talking to a
 * cloud API with its own rate limits). Calls beyond the limit wait in a FIFO queue; when the
 * queue is full too, `run` refuses at once so the coordinator backs off (503) instead of
 * piling requests on a bridge that cannot keep up.
 */

export class QueueFull extends Error {
  readonly running: number;
  readonly queued: number;
  constructor(running: number, queued: number) {
    super(`bridge busy: ${running} provider calls running and ${queued} queued`);
    this.running = running;
    this.queued = queued;
  }
}

export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  stats(): { running: number; queued: number };
}

export function createLimiter(concurrency: number, maxQueue: number): Limiter {
  let running = 0;
  const waiting: (() => void)[] = [];

  const release = () => {
    running--;
    const next = waiting.shift();
    if (next) {
      running++;
      next();
    }
  };

  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (running >= concurrency) {
        if (waiting.length >= maxQueue) throw new QueueFull(running, waiting.length);
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running++;
      }
      try {
        return await task();
      } finally {
        release();
      }
    },
    stats: () => ({ running, queued: waiting.length }),
  };
}
