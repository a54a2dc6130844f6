#!/usr/bin/env node
// Entry point of the `fraud-scorer` command. TypeScript sources run through tsx's loader,
// so there is no separate build to forget.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
