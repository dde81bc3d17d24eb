import { registerHooks } from "node:module";

/**
 * The project's source (src/) imports siblings without a file extension, as bundlers and
 * vitest allow; Node's own loader does not. This resolve hook retries a relative specifier
 * that has no extension with `.ts`, so the shims run the project's pure modules
 * (shim-protocol, shim-signing) unchanged under `node --experimental-strip-types` (the GARM bridge, the conformance kit).
 * Imported for its effect, before anything that reaches into src/.
 */
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (err) {
      const relative = specifier.startsWith("./") || specifier.startsWith("../");
      if ((err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND" || !relative || /\.[cm]?[jt]s$/.test(specifier)) throw err;
      return nextResolve(`${specifier}.ts`, context);
    }
  },
});
