// What test/fake-github/global-setup.ts provides to tests (vitest inject()).
declare module "vitest" {
  export interface ProvidedContext {
    fakeGithubUrl: string;
  }
}

export {};
