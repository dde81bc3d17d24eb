/**
 * Time as code that waits sees it: tests replace it to drive rate-limit windows and token
 * expiry without sleeping.
 */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** In [0, 1): jitter. */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};
