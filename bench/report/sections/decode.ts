// Report chapter 2: decoding a record, JSON + ajv against the real Protobuf path.
import type { DecodeResult } from "../../sections/decode.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { fmt, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

export const decodeReport: SectionRenderer<DecodeResult> = {
  heading: "2. Decode",

  summaryRows: (d) => [
    [
      "2. Decode: JSON + ajv vs Protobuf (real ingest path)",
      `${fmt(d.json.nsPerMessage)} vs ${fmt(d.protobuf.nsPerMessage)} ns/message`,
      `JSON ${x(d.jsonOverProtobufCost)} the real path (${x(d.jsonOverProtobufBufferReaderCost)} protobufjs's BufferReader); at 50k/s ${fmt(d.json.cpuMsPerSecondAt50k)} vs ${fmt(d.protobuf.cpuMsPerSecondAt50k)} ms of CPU per second`,
    ],
  ],

  chapter: (d, chart) => [
    `${d.messages} simulated transactions, one per record. Protobuf: \`decodeTransactionRecord\` (delimited framing, ` +
      `generated static decoder, \`validateTransaction\`). JSON: \`JSON.parse\` of the UTF-8 record and an ajv-compiled ` +
      `schema with the same rules (bench/sections/transactionJsonSchema.ts). Median of ${d.rounds} alternating rounds.`,
    "",
    table(
      [
        "",
        "ns / message",
        "messages / s (one core)",
        "parse alone, ns",
        "bytes / message",
        "CPU ms per second at 50k/s",
      ],
      [
        ...(
          [
            ["Protobuf (real path)", d.protobuf],
            ["JSON + ajv", d.json],
          ] as const
        ).map(([name, side]) => [
          name,
          fmt(side.nsPerMessage),
          fmt(side.messagesPerSecond),
          fmt(side.parseOnlyNsPerMessage),
          fmt(side.bytesPerMessage),
          fmt(side.cpuMsPerSecondAt50k),
        ]),
        [
          "Protobuf, protobufjs BufferReader (not used)",
          fmt(d.protobufBufferReader.nsPerMessage),
          fmt(Math.round(1e9 / d.protobufBufferReader.nsPerMessage)),
          fmt(d.protobufBufferReader.parseOnlyNsPerMessage),
          fmt(d.protobuf.bytesPerMessage),
          fmt((d.protobufBufferReader.nsPerMessage * 50_000) / 1e6),
        ],
      ],
    ),
    "",
    `**Per message, JSON + ajv costs ${x(d.jsonOverProtobufCost)} what the real Protobuf path costs**, and ` +
      `${x(d.jsonOverProtobufBufferReaderCost)} what the same Protobuf decoder costs on protobufjs's BufferReader. ` +
      "`src/codec/messages.ts` decodes from a plain Uint8Array view on purpose (the BufferReader truncates a string that " +
      "overruns its message instead of failing), which sends every string through protobufjs's JavaScript UTF-8 decoder; " +
      "the last row shows what that choice costs.",
    "",
    chart(
      "decode",
      barChart(
        [
          {
            label: "decode + validate",
            bars: [
              { name: "Protobuf", value: d.protobuf.nsPerMessage },
              { name: "JSON + ajv", value: d.json.nsPerMessage },
              { name: "Protobuf, BufferReader", value: d.protobufBufferReader.nsPerMessage },
            ],
          },
          {
            label: "parse alone",
            bars: [
              { name: "Protobuf", value: d.protobuf.parseOnlyNsPerMessage },
              { name: "JSON + ajv", value: d.json.parseOnlyNsPerMessage },
              { name: "Protobuf, BufferReader", value: d.protobufBufferReader.parseOnlyNsPerMessage },
            ],
          },
        ],
        { title: "Decode cost per message", yLabel: "ns per message" },
      ),
    ),
    "",
  ],
};
