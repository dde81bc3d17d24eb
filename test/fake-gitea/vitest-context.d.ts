// What test/fake-gitea/global-setup.ts provides to tests (vitest inject()).
declare module "vitest" {
  export interface ProvidedContext {
    fakeGiteaUrl: string;
  }
}

export {};
