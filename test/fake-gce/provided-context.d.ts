export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the fake Compute Engine (test/fake-gce/server.ts), started by the shims-worker project's globalSetup. */
    fakeGceUrl: string;
  }
}
