import { createRoute, z } from "@hono/zod-openapi";
import { keyringFor } from "../crypto/keyring";
import { open, seal, sealedWithOldKey } from "../crypto/secret-box";
import { sealedColumns } from "../crypto/secret-contexts";
import { readSealedValues, replaceSealedValues } from "../db/sealed-values-store";
import { ApiError, ErrorSchema } from "../http/errors";
import { errorResponses, jsonResponse } from "../http/openapi";
import { createRouter } from "../http/router";
import { logEvent } from "../observability/log";

const RotationResult = z
  .object({
    key_id: z.string().openapi({ description: "Id of the current ENCRYPTION_KEY" }),
    resealed: z.int().openapi({ description: "Values that were sealed with an older key and now use the current one" }),
    current: z.int().openapi({ description: "Values already sealed with the current key" }),
  })
  .openapi("SecretRotation");

export const secretRoutes = createRouter().openapi(
  createRoute({
    method: "post",
    path: "/secrets/rotate",
    tags: ["Secrets"],
    summary: "Re-seal every stored secret with the current ENCRYPTION_KEY",
    description:
      "Run after making a new key ENCRYPTION_KEY and moving the old one to ENCRYPTION_KEYS_PREVIOUS. " +
      "When it reports resealed values and no errors, the old key can be dropped.",
    responses: {
      200: jsonResponse(RotationResult, "Rotation done"),
      ...errorResponses,
      422: jsonResponse(ErrorSchema, "Some values open with no configured key"),
    },
  }),
  async (c) => {
    const keyring = await keyringFor(c.env);
    const reads = await readSealedValues(c.env.DB, sealedColumns);
    const replacements: Parameters<typeof replaceSealedValues>[1] = [];
    const unreadable: { table: string; id: string }[] = [];
    let current = 0;
    for (const [i, spec] of sealedColumns.entries()) {
      for (const row of reads[i]!) {
        if (!sealedWithOldKey(keyring, row.sealed)) {
          current++;
          continue;
        }
        const context = spec.context(row.id);
        try {
          const plain = await open(keyring, row.sealed, context);
          replacements.push({ column: spec, id: row.id, read: row.sealed, resealed: await seal(keyring, plain, context) });
        } catch {
          unreadable.push({ table: spec.table, id: row.id });
        }
      }
    }
    if (unreadable.length) {
      throw new ApiError(422, "some secrets open with no configured key; nothing was changed", { unreadable });
    }
    await replaceSealedValues(c.env.DB, replacements);
    logEvent({ event: "secrets_rotated", key_id: keyring.current.id, resealed: replacements.length });
    return c.json({ key_id: keyring.current.id, resealed: replacements.length, current }, 200);
  },
);
