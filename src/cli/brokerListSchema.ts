// The --kafka-brokers value as every command's zod schema reads it: comma-separated host:port,
// blanks dropped, at least one broker.
import { z } from "zod";

export const brokerListSchema = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((b) => b.trim())
      .filter((b) => b !== ""),
  )
  .refine((list) => list.length > 0, { error: "--kafka-brokers names no broker" });
