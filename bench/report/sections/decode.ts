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
      `JSON ${x(d.jsonOverProtobufCost)} the real path; at 50k/s ${fmt(d.json.cpuMsPerSecondAt50k)} vs ${fmt(d.protobuf.cpuMsPerSecondAt50k)} ms of CPU per second`,
    ],
  ],

  chapter: (d, chart) => [
    `${d.messages} simulated transactions, one per record. Protobuf: \`decodeTransactionRecord\` (delimited framing, ` +
      "generated static decoder on protobufjs's BufferReader, made strict about truncated strings and with short codes " +
      `from a table in src/codec/messages.ts, \`validateTransaction\`). JSON: \`JSON.parse\` of the UTF-8 record and an ajv-compiled ` +
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
      ],
    ),
    "",
    `**Per message, JSON + ajv costs ${x(d.jsonOverProtobufCost)} what the real Protobuf path costs.**`,
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
            ],
          },
          {
            label: "parse alone",
            bars: [
              { name: "Protobuf", value: d.protobuf.parseOnlyNsPerMessage },
              { name: "JSON + ajv", value: d.json.parseOnlyNsPerMessage },
            ],
          },
        ],
        { title: "Decode cost per message", yLabel: "ns per message" },
      ),
    ),
    "",
  ],
};
