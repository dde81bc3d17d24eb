// `npm run dev` works on a fresh clone: start from the example development secrets
// unless the developer already has their own .dev.vars.
import { copyFileSync, existsSync } from "node:fs";

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example (development secrets)");
}
