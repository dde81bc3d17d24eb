// What test/fake-forgejo/global-setup.ts provides to tests (vitest inject()).
declare module "vitest" {
  export interface ProvidedContext {
    fakeForgejoUrl: string;
  }
}

export {};
