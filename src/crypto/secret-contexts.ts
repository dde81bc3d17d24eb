/**
 * Where each sealed value lives. The context is authenticated with the ciphertext, so a
 * value only opens in the row and column it was written for.
 */
export const secretContext = {
  credential: (id: string) => `github_credentials.secret_enc:${id}`,
  webhookSecret: (entityId: string) => `entities.webhook_secret_enc:${entityId}`,
  provider: (id: string) => `providers.secret_enc:${id}`,
  installationToken: (credentialId: string) => `github_credential_state.token_enc:${credentialId}`,
};
