/**
 * Where each sealed value lives. The context is authenticated with the ciphertext, so a
 * value only opens in the row and column it was written for.
 */
export const secretContext = {
  credential: (id: string) => `github_credentials.secret_enc:${id}`,
  appWebhookSecret: (credentialId: string) => `github_credentials.webhook_secret_enc:${credentialId}`,
  webhookSecret: (entityId: string) => `entities.webhook_secret_enc:${entityId}`,
  provider: (id: string) => `providers.secret_enc:${id}`,
  jitConfig: (instanceId: string) => `instances.jit_config_enc:${instanceId}`,
  registrationToken: (instanceId: string) => `instances.registration_token_enc:${instanceId}`,
  appPrivateKey: (appRowId: string) => `github_apps.private_key_enc:${appRowId}`,
  appOwnWebhookSecret: (appRowId: string) => `github_apps.webhook_secret_enc:${appRowId}`,
  appClientSecret: (appRowId: string) => `github_apps.client_secret_enc:${appRowId}`,
  installationToken: (credentialId: string) => `github_credential_state.token_enc:${credentialId}`,
  /** Not a D1 column: a ScaleSet object's own SQLite (its scale set API session's queue token, short-lived). */
  listenerQueueToken: (scaleSetId: string) => `scaleset_object.listener_queue_token:${scaleSetId}`,
};

/** Every D1 column holding sealed values, for key rotation. Add new sealed columns here. */
export const sealedColumns = [
  { table: "github_credentials", key: "id", column: "secret_enc", context: secretContext.credential },
  { table: "github_credentials", key: "id", column: "webhook_secret_enc", context: secretContext.appWebhookSecret },
  { table: "github_apps", key: "id", column: "private_key_enc", context: secretContext.appPrivateKey },
  { table: "github_apps", key: "id", column: "webhook_secret_enc", context: secretContext.appOwnWebhookSecret },
  { table: "github_apps", key: "id", column: "client_secret_enc", context: secretContext.appClientSecret },
  { table: "entities", key: "id", column: "webhook_secret_enc", context: secretContext.webhookSecret },
  { table: "providers", key: "id", column: "secret_enc", context: secretContext.provider },
  { table: "instances", key: "id", column: "jit_config_enc", context: secretContext.jitConfig },
  { table: "instances", key: "id", column: "registration_token_enc", context: secretContext.registrationToken },
  { table: "github_credential_state", key: "credential_id", column: "token_enc", context: secretContext.installationToken },
] as const;
