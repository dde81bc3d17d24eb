export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the fake EC2 (test/fake-ec2/server.ts), started by the shims-worker project's globalSetup. */
    fakeEc2Url: string;
  }
}
