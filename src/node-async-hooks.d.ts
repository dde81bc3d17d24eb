// nodejs_compat gives workerd `node:async_hooks`; @cloudflare/workers-types does not declare it.
// Only what src/ uses (Node code is checked against @types/node by tsconfig.node.json instead).
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, fn: () => R): R;
  }
}
