import type { BridgeConfig } from "./config.ts";
import { createLimiter, QueueFull } from "./limiter.ts";
import { type Logger, redact } from "./log.ts";
import { type ExitOutcome, exitOutcome } from "./outcome.ts";
import { type GarmCommand, type ProviderCall, providerEnv } from "./provider-env.ts";
import { runProvider } from "./run-provider.ts";

/** The scale set a request is about, from its context headers: every pool command carries it. */
export interface Pool {
  controllerId: string;
  poolId: string;
  extraSpecsBase64: string;
}

export const poolCall = (command: GarmCommand, pool: Pool, instanceId?: string): ProviderCall => ({
  command,
  controllerId: pool.controllerId,
  poolId: pool.poolId,
  extraSpecsBase64: pool.extraSpecsBase64,
  ...(instanceId === undefined ? {} : { instanceId }),
});

export interface ProviderCaller {
  /**
   * Runs one provider command through the concurrency limit and says what its exit means;
   * never throws. Every secret, and each of `hide` (an instance token), is redacted from the
   * messages, since a provider's output may echo what it was given.
   */
  run(call: ProviderCall, stdin: Uint8Array | undefined, hide: string[]): Promise<ExitOutcome>;
  /** Provider calls running and waiting, for the health check. */
  stats(): { running: number; queued: number };
}

export function createProviderCaller(cfg: BridgeConfig, log: Logger, environ: NodeJS.ProcessEnv): ProviderCaller {
  const timeoutMs = Math.round(cfg.timeout_seconds * 1000);
  const limiter = createLimiter(cfg.concurrency, cfg.max_queue);
  const secrets = [cfg.secret, ...cfg.previous_secrets];

  async function run(call: ProviderCall, stdin: Uint8Array | undefined, hide: string[]): Promise<ExitOutcome> {
    const env = providerEnv(
      call,
      { interfaceVersion: cfg.interface_version, providerConfigFile: cfg.provider_config_file, env: cfg.env, passEnv: cfg.pass_env },
      environ,
    );
    let outcome: ExitOutcome;
    try {
      const result = await limiter.run(() =>
        runProvider({ executable: cfg.provider_executable, env, stdin, timeoutMs, maxOutputBytes: cfg.max_output_bytes }),
      );
      outcome = exitOutcome(call.command, result, timeoutMs);
      log("provider_exec", {
        command: call.command,
        scale_set: call.poolId,
        instance: call.instanceId,
        result: result.kind,
        exit_code: result.kind === "exited" ? result.code : null,
        signal: result.kind === "exited" ? result.signal : null,
        duration_ms: result.durationMs,
        stdout_bytes: "stdout" in result ? result.stdout.length : 0,
        stderr_bytes: "stderr" in result ? result.stderr.length : 0,
      });
    } catch (err) {
      if (!(err instanceof QueueFull)) throw err;
      outcome = { type: "failed", failure: { status: 503, retryable: true, message: err.message } };
      log("provider_queue_full", { command: call.command, scale_set: call.poolId, running: err.running, queued: err.queued });
    }
    const all = [...secrets, ...hide];
    if (outcome.type === "failed") outcome.failure.message = redact(outcome.failure.message, all);
    else if (outcome.type !== "ok") outcome.message = redact(outcome.message, all);
    return outcome;
  }

  return {
    run,
    stats: () => limiter.stats(),
  };
}
