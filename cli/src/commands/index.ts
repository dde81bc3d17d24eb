/** Every command, in the order help lists them. A new resource adds its file here. */
import type { Command } from "../command.ts";
import { appCommands } from "./apps.ts";
import { auditCommands } from "./audit.ts";
import { credentialCommands } from "./credentials.ts";
import { doctorCommands } from "./doctor.ts";
import { endpointCommands } from "./endpoints.ts";
import { entityCommandList } from "./entities.ts";
import { instanceCommands } from "./instances.ts";
import { jobCommands } from "./jobs.ts";
import { profileCommands } from "./profiles.ts";
import { providerCommands } from "./providers.ts";
import { recoveryCommands } from "./recovery.ts";
import { scaleSetCommands } from "./scalesets.ts";
import { secretCommands } from "./secrets.ts";
import { setupCommands } from "./setup.ts";
import { tokenCommands } from "./tokens.ts";
import { usageCommands } from "./usage.ts";

export const COMMANDS: Command[] = [
  ...setupCommands,
  ...profileCommands,
  ...endpointCommands,
  ...credentialCommands,
  ...appCommands,
  ...entityCommandList,
  ...providerCommands,
  ...scaleSetCommands,
  ...instanceCommands,
  ...jobCommands,
  ...secretCommands,
  ...tokenCommands,
  ...auditCommands,
  ...doctorCommands,
  ...recoveryCommands,
  ...usageCommands,
];
