// An instance's side of promotion: follow the control channel and hand each record to the slot
// it controls. Loading and warming a model happens here, off the scoring loop; the slot changes
// `current` only when the new model is ready.
import type { ModelSlot } from "../model/modelSlot.js";
import type { ShadowSlot } from "../model/shadowSlot.js";
import type { RuleSetSlot } from "../rules/ruleSetSlot.js";
import type { ControlChannel, ControlSubscription } from "./controlChannel.js";
import type { ControlRecord } from "./controlRecord.js";

export interface ControlTargets {
  readonly model: ModelSlot;
  readonly rules: RuleSetSlot;
  /** Without one, shadow records are left unapplied ("unchanged"). */
  readonly shadow?: ShadowSlot;
  readonly onOutcome?: (record: ControlRecord, outcome: "switched" | "unchanged" | "refused") => void;
}

export function followControl(
  channel: ControlChannel,
  targets: ControlTargets,
): Promise<ControlSubscription> {
  return channel.follow(async (record) => {
    const outcome =
      record.key === "model"
        ? await targets.model.apply(record)
        : record.key === "shadow"
          ? ((await targets.shadow?.apply(record)) ?? "unchanged")
          : targets.rules.apply(record);
    targets.onOutcome?.(record, outcome);
  });
}
