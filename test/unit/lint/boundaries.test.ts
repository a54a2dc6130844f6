// The boundaries in eslint.config.js hold: an import that crosses one is reported, under the
// boundary's id, by the project's own lint configuration; the same import where it belongs is
// not. The sources are linted as if they stood at these paths (nothing is written to the tree).
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

interface Case {
  readonly what: string;
  readonly file: string;
  readonly code: string;
  /** The boundary id the lint must name; absent: the import is allowed there. */
  readonly boundary?: string;
  readonly rule?: "no-restricted-imports" | "no-restricted-syntax";
}

const CASES: readonly Case[] = [
  {
    what: "scoring → stream",
    file: "src/scoring/probe.ts",
    code: 'import { ScoringQueue } from "../stream/scoringQueue.js";\nexport { ScoringQueue };\n',
    boundary: "scoring-is-handed-ports",
  },
  {
    what: "scoring → stream, by a dynamic import",
    file: "src/scoring/probe.ts",
    code: 'export const scorer = () => import("../stream/scorer.js");\n',
    boundary: "scoring-is-handed-ports",
    rule: "no-restricted-syntax",
  },
  {
    what: "scoring → the CLI",
    file: "src/scoring/probe.ts",
    code: 'export const cli = () => import("../cli/main.js");\n',
    boundary: "product-not-harness",
    rule: "no-restricted-syntax",
  },
  {
    what: "scoring → the Kafka client",
    file: "src/scoring/probe.ts",
    code: 'import { Producer } from "@platformatic/kafka";\nexport { Producer };\n',
    boundary: "kafka-client-in-adapter",
  },
  {
    what: "scoring → the Redis client",
    file: "src/scoring/probe.ts",
    code: 'import { Redis } from "ioredis";\nexport { Redis };\n',
    boundary: "redis-client-in-adapter",
  },
  {
    what: "the live demo → the Redis client (it goes through src/state)",
    file: "src/tools/demo/liveDemo.ts",
    code: 'import { Redis } from "ioredis";\nexport { Redis };\n',
    boundary: "redis-client-in-adapter",
  },
  {
    what: "features → model",
    file: "src/features/probe.ts",
    code: 'import type { ModelRunner } from "../model/loadModelRunner.js";\nexport type { ModelRunner };\n',
    boundary: "features-before-model-and-scoring",
  },
  {
    what: "features → stream",
    file: "src/features/probe.ts",
    code: 'import { ScoringQueue } from "../stream/scoringQueue.js";\nexport { ScoringQueue };\n',
    boundary: "features-before-model-and-scoring",
  },
  {
    what: "rules → model",
    file: "src/rules/probe.ts",
    code: 'import { loadModelRunner } from "../model/loadModelRunner.js";\nexport { loadModelRunner };\n',
    boundary: "rules-beside-the-model",
  },
  {
    what: "src → bench",
    file: "src/ops/probe.ts",
    code: 'import { coldStart } from "../../bench/sections/coldStart.js";\nexport { coldStart };\n',
    boundary: "src-not-offline",
  },
  {
    what: "src → test",
    file: "src/cli/probe.ts",
    code: 'import { makeTransactions } from "../../test/integration/support/transactionTraffic.js";\nexport { makeTransactions };\n',
    boundary: "src-not-offline",
  },
  {
    what: "src → chaos",
    file: "src/tools/probe.ts",
    code: 'import { readWholeTopic } from "../../chaos/topicReader.js";\nexport { readWholeTopic };\n',
    boundary: "src-not-offline",
  },
  {
    what: "src → pipelines",
    file: "src/replay/probe.ts",
    code: 'import { train } from "../../pipelines/train.js";\nexport { train };\n',
    boundary: "src-not-offline",
  },
  {
    what: "the Kafka client in src/stream, outside its adapter folder",
    file: "src/stream/probe.ts",
    code: 'import { Consumer } from "@platformatic/kafka";\nexport { Consumer };\n',
    boundary: "kafka-client-in-adapter",
  },
  {
    what: "ONNX Runtime outside src/model",
    file: "src/scoring/probe.ts",
    code: 'import * as ort from "onnxruntime-node";\nexport { ort };\n',
    boundary: "onnx-runtime-in-model",
  },
  {
    what: "the Kafka client in its adapter folder (allowed)",
    file: "src/stream/kafka/probe.ts",
    code: 'import { Consumer } from "@platformatic/kafka";\nexport { Consumer };\n',
  },
  {
    what: "the Redis client in src/state (allowed)",
    file: "src/state/probe.ts",
    code: 'import { Redis } from "ioredis";\nexport { Redis };\n',
  },
  {
    what: "the stream importing scoring (allowed: it hands scoring its ports)",
    file: "src/stream/probe.ts",
    code: 'import { scoreBatch } from "../scoring/scoreBatch.js";\nexport { scoreBatch };\n',
  },
];

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: process.cwd() });
});

/** "<rule> [<boundary id>]" for each boundary message the lint gives the source. */
async function boundaryReports({ file, code }: Case): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file });
  return (result?.messages ?? [])
    .map((m) => ({ rule: m.ruleId, id: /\[([a-z]+(?:-[a-z]+)+)\]/.exec(m.message)?.[1] }))
    .filter((m) => m.id !== undefined)
    .map((m) => `${m.rule} [${m.id}]`);
}

describe("the lint's import boundaries", () => {
  for (const c of CASES) {
    if (c.boundary === undefined)
      it(`allows ${c.what}`, async () => {
        expect(await boundaryReports(c)).toEqual([]);
      });
    else
      it(`reports ${c.what} as [${c.boundary}]`, async () => {
        expect(await boundaryReports(c)).toContain(`${c.rule ?? "no-restricted-imports"} [${c.boundary}]`);
      });
  }
});
