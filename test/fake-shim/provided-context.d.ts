export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the fake provider shim (test/fake-shim/server.ts), started by the worker project's globalSetup. */
    fakeShimUrl: string;
  }
}
