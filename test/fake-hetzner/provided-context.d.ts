export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the fake Hetzner Cloud (test/fake-hetzner/server.ts), started by the shims-worker project's globalSetup. */
    fakeHetznerUrl: string;
  }
}
