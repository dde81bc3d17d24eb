-- The registration token a runner without JIT was served, sealed (AES-GCM, context
-- instances.registration_token_enc:<id>), so a machine whose answer was lost gets the same token
-- when it asks again instead of a refusal (src/db/runner/registration-token-store.ts).
ALTER TABLE `instances` ADD `registration_token_enc` text;
