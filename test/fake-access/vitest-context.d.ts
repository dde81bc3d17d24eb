// What test/fake-access/global-setup.ts provides to tests (vitest inject()).
declare module "vitest" {
  export interface ProvidedContext {
    accessCertsUrl: string;
    accessSigningJwk: Record<string, unknown>;
  }
}

export {};
