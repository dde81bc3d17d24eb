import { randomUUID } from "node:crypto";
import {
  type BootstrapInstance,
  OperationAccepted,
  type ShimCapabilities,
  type ValidProviderInstance,
  validateProviderInstance,
  validateProviderInstanceList,
} from "../../src/providers/shim-protocol.ts";
import type { CallbackInbox } from "./callbacks.ts";
import { type Answer, type SendOptions, type ShimTarget, send } from "./client.ts";

/**
 * What the checks share: the shim under test, two fresh pools of its (A and B, so isolation can
 * be seen), the machines made so far, the 202s answered, and helpers that wait the way the
 * coordinator would (an asynchronous create is done when its callback comes or GET shows it).
 */

export interface ProviderConfig {
  image: string;
  flavor: string;
  os_type: "linux" | "windows";
  arch: "amd64" | "arm64" | "i386" | "arm";
  extra_specs: Record<string, unknown>;
}

export const DEFAULT_PROVIDER: ProviderConfig = {
  image: "ubuntu:24.04",
  flavor: "small",
  os_type: "linux",
  arch: "amd64",
  extra_specs: {},
};

export class CheckFailed extends Error {}
export class CheckSkipped extends Error {}
export const fail = (message: string): never => {
  throw new CheckFailed(message);
};
export const skip = (message: string): never => {
  throw new CheckSkipped(message);
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ContextOptions {
  target: ShimTarget;
  provider: ProviderConfig;
  /** How long a wait for an asynchronous outcome may take. */
  waitMs: number;
  /** How many machines the list check makes (more than the cloud's page size exercises paging). */
  machines: number;
  inbox: CallbackInbox | null;
  /** The coordinator URL the machines are told about (metadata and callbacks). */
  coordinatorUrl: string;
}

export class Context {
  readonly run = randomUUID().slice(0, 8);
  readonly poolA = randomUUID();
  readonly poolB = randomUUID();
  capabilities: ShimCapabilities | null = null;
  /** Machines of pool A made by the checks, by name. */
  readonly machines = new Map<string, ValidProviderInstance>();
  /** Every 202 answered: its operation id, and for what. */
  readonly accepted: { operation_id: string; kind: "create" | "delete"; name: string }[] = [];
  private n = 0;
  readonly o: ContextOptions;

  constructor(o: ContextOptions) {
    this.o = o;
  }

  get async() {
    return this.capabilities?.async === true;
  }

  nextName() {
    return `conformance-${this.run}-${++this.n}`;
  }

  send(method: string, path: string, opts: SendOptions = {}): Promise<Answer> {
    return send(this.o.target, method, path, { pool: this.poolA, extraSpecs: this.o.provider.extra_specs, ...opts });
  }

  bootstrap(name: string, pool = this.poolA): BootstrapInstance {
    const p = this.o.provider;
    return {
      name,
      tools: [],
      repo_url: "https://github.com/edgerunner-conformance/kit",
      "callback-url": `${this.o.coordinatorUrl}/api/v1/callbacks`,
      "metadata-url": `${this.o.coordinatorUrl}/api/v1/metadata`,
      "instance-token": `conformance-token-${randomUUID()}`,
      "ssh-keys": null,
      extra_specs: p.extra_specs,
      "github-runner-group": "",
      "ca-cert-bundle": null,
      arch: p.arch,
      os_type: p.os_type,
      flavor: p.flavor,
      image: p.image,
      pool_id: pool,
      labels: null,
      user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
      jit_config_enabled: true,
    };
  }

  /** Polls until `fn` gives a value, or fails the check saying what never happened. */
  async eventually<T>(what: string, fn: () => Promise<T | null | undefined | false>): Promise<T> {
    const until = Date.now() + this.o.waitMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > until) return fail(`${what} did not happen within ${this.o.waitMs / 1000} s`);
      await sleep(delay);
    }
  }

  /** A machine from a create answer: 200/201 at once, or 202 then its callback (or GET by name). */
  async createdMachine(name: string, a: Answer, pool = this.poolA): Promise<ValidProviderInstance> {
    if (a.status === 200 || a.status === 201) {
      const v = validateProviderInstance(a.json);
      if (!v.ok) return fail(`create answered ${a.status} with an invalid ProviderInstance: ${v.problems.join("; ")}`);
      if (v.value.name !== name) return fail(`create answered the machine ${JSON.stringify(v.value.name)}, not ${name}`);
      return v.value;
    }
    if (a.status !== 202) return fail(`create answered ${a.status}: ${a.text.slice(0, 300)}`);
    const op = OperationAccepted.safeParse(a.json);
    if (!op.success) return fail(`create answered 202 without a valid {operation_id}: ${a.text.slice(0, 200)}`);
    if (!this.async) return fail("create answered 202, but capabilities say the shim is not asynchronous");
    this.accepted.push({ operation_id: op.data.operation_id, kind: "create", name });
    if (this.o.inbox) {
      const cb = await this.eventually(`the callback for create ${name}`, async () => this.o.inbox!.find(op.data.operation_id));
      if (cb.error || !cb.result) return fail(`the create callback for ${name} reports failure: ${JSON.stringify(cb.error)}`);
    }
    return this.eventually(`${name} showing up at GET`, async () => {
      const g = await this.send("GET", `/v1/instances/${encodeURIComponent(name)}`, { pool });
      if (g.status !== 200) return null;
      const v = validateProviderInstance(g.json);
      return v.ok && v.value.status !== "unknown" ? v.value : null;
    });
  }

  async create(name: string, pool = this.poolA): Promise<ValidProviderInstance> {
    const m = await this.createdMachine(name, await this.send("POST", "/v1/instances", { body: this.bootstrap(name, pool), pool }), pool);
    if (pool === this.poolA) this.machines.set(name, m);
    return m;
  }

  async list(pool = this.poolA): Promise<ValidProviderInstance[]> {
    const a = await this.send("GET", "/v1/instances", { pool });
    if (a.status !== 200) return fail(`list answered ${a.status}: ${a.text.slice(0, 300)}`);
    const v = validateProviderInstanceList(a.json);
    return v.ok ? v.value : fail(`list is not an array of valid ProviderInstances: ${v.problems.slice(0, 3).join("; ")}`);
  }

  /** Deletes and waits until GET says 404 (a 202 delete finishes later). */
  async deleted(id: string, pool = this.poolA): Promise<number> {
    const a = await this.send("DELETE", `/v1/instances/${encodeURIComponent(id)}`, { pool });
    if (![200, 202, 204].includes(a.status)) return fail(`delete of ${id} answered ${a.status}: ${a.text.slice(0, 300)}`);
    if (a.status === 202) {
      const op = OperationAccepted.safeParse(a.json);
      if (!op.success) return fail(`delete answered 202 without a valid {operation_id}: ${a.text.slice(0, 200)}`);
      this.accepted.push({ operation_id: op.data.operation_id, kind: "delete", name: id });
    }
    await this.eventually(
      `${id} gone (GET 404)`,
      async () => (await this.send("GET", `/v1/instances/${encodeURIComponent(id)}`, { pool })).status === 404,
    );
    return a.status;
  }

  /** The machine a check needs from an earlier one, or a skip. */
  firstMachine(): ValidProviderInstance {
    return this.machines.values().next().value ?? skip("needs the machine from the create check, which failed");
  }
}
