/** EC2's filter values take * and ? wildcards: a value as the pattern it is. */
export const glob = (pattern: string) =>
  new RegExp(
    "^" +
      pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".") +
      "$",
  );
