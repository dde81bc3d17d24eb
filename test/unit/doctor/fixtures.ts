import type {
  ConfigFacts,
  CredentialFacts,
  DeliveryFacts,
  EntityFacts,
  Probe,
  ProbeError,
  ProviderFacts,
  ScaleSetFacts,
} from "../../../src/doctor/facts";

/** Facts of a setup where every link works; each test changes the one it is about. */

export const NOW = Date.parse("2026-11-22T10:00:00.000Z");

export const ok = <T>(value: T, ms = 12): Probe<T> => ({ ok: true, value, ms });
export const err = (error: ProbeError, ms = 12): Probe<never> => ({ ok: false, error, ms });
export const refused = (status: number, message = "") => err({ kind: "refused", status, message });

export function config(over: Partial<ConfigFacts> = {}): ConfigFacts {
  return {
    publicUrl: "https://edgerunner.example.workers.dev",
    requestOrigin: "https://edgerunner.example.workers.dev",
    adminToken: { set: true, length: 64 },
    encryptionKey: { set: true, bytes: 32 },
    previousKeys: { count: 0, bad: 0 },
    instanceTokenSecret: { set: true, length: 64 },
    metricsToken: true,
    access: { teamDomainSet: false, teamDomain: null, audSet: false, certsUrl: null, certs: null },
    ...over,
  };
}

export const FULL_APP_PERMISSIONS = {
  administration: "write",
  organization_self_hosted_runners: "write",
  actions: "read",
  metadata: "read",
};

export function appCredentials(over: Partial<CredentialFacts> = {}): CredentialFacts {
  return {
    id: "cred-app",
    name: "octo-app",
    authType: "app",
    appId: 4242,
    installationId: 777,
    endpoint: "github.com",
    apiBaseUrl: "https://api.github.com",
    boundApiUrl: "https://api.github.com",
    health: "ok",
    failureReason: null,
    failedAt: null,
    blockedUntil: null,
    hasWebhookSecret: false,
    installation: ok({
      account: "octo",
      accountType: "Organization",
      permissions: { ...FULL_APP_PERMISSIONS },
      events: ["workflow_job"],
      repositorySelection: "all",
      suspended: false,
    }),
    appHook: null,
    ...over,
  };
}

export function patCredentials(over: Partial<CredentialFacts> = {}): CredentialFacts {
  return {
    ...appCredentials(),
    id: "cred-pat",
    name: "ci",
    authType: "pat",
    appId: null,
    installationId: null,
    installation: null,
    ...over,
  };
}

export const delivery = (statusCode: number, over: Partial<DeliveryFacts> = {}): DeliveryFacts => ({
  at: "2026-11-22T09:59:00Z",
  statusCode,
  status: statusCode === 200 ? "OK" : `Invalid HTTP Response: ${statusCode}`,
  event: "workflow_job",
  ...over,
});

export function repository(over: Partial<EntityFacts> = {}): EntityFacts {
  return {
    id: "ent-repo",
    kind: "repository",
    forge: "github",
    name: "octo/app",
    owner: "octo",
    credentialId: "cred-pat",
    scaleSets: { webhook: 1, scaleset_api: 0, poll: 0 },
    lastJobAt: null,
    runners: ok({ scopes: null }),
    hook: { hook: ok({ id: 9, active: true, events: ["workflow_job"], contentType: "json" }), lastDelivery: ok(delivery(200)) },
    pool: [],
    ...over,
  };
}

export function organization(over: Partial<EntityFacts> = {}): EntityFacts {
  return { ...repository(), id: "ent-org", kind: "organization", name: "octo", ...over };
}

export function provider(over: Partial<ProviderFacts> = {}): ProviderFacts {
  return {
    id: "prov",
    name: "aws",
    url: "https://shim.example.com",
    capabilities: ok({ interfaceVersion: "v1", batchMax: 0 }, 40),
    ...over,
  };
}

export function scaleSet(over: Partial<ScaleSetFacts> = {}): ScaleSetFacts {
  return {
    id: "ss",
    name: "linux",
    entityId: "ent-repo",
    providerId: "prov",
    labels: ["linux", "self-hosted"],
    enabled: true,
    intake: "webhook",
    minIdleRunners: 0,
    maxRunners: 5,
    createdAt: NOW - 60 * 60_000,
    instances: { total: 0, live: 0, idle: 0 },
    cameUp: false,
    lastFault: null,
    queued: { count: 0, oldestAt: null },
    object: ok({ createFailures: 0, lastFailureAt: null, hardLimitedAt: null, createAllowedAt: null, listener: null }),
    ...over,
  };
}
