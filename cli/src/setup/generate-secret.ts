/** New secret values, from the operating system's CSPRNG: 32 random bytes, as base64 (`key`) or base64url (`token`). */
import { randomBytes } from "node:crypto";
import type { SecretKind } from "./plan.ts";

export function generateSecret(kind: SecretKind): string {
  const bytes = randomBytes(32);
  return kind === "key" ? bytes.toString("base64") : bytes.toString("base64url");
}
