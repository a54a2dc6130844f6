// What `serve` scores with, kept current by the control channel: the model slot, the rules slot
// and a card-state store for the current model version, folded into one BatchPorts value the
// scoring loop reads once per batch. Loading and warming a promoted model happens in the slot,
// off the scoring loop; the ports change only once it is ready, so a switch falls between two
// batches. State keys are namespaced by model version, hence a new store with each model.
// A shadow candidate (ShadowSlot) is kept beside them with a store of its own version.
import type { Logger } from "pino";
import type { ModelRunner } from "../model/loadModelRunner.js";
import { ModelSlot } from "../model/modelSlot.js";
import { ShadowSlot } from "../model/shadowSlot.js";
import { ruleEvaluator } from "../rules/ruleEvaluator.js";
import type { RuleSet } from "../rules/ruleSet.js";
import { RuleSetSlot } from "../rules/ruleSetSlot.js";
import type { CardStateStore, ModelStepper, RuleEvaluator } from "../scoring/ports.js";
import type { ControlChannel, ControlSubscription } from "./controlChannel.js";
import type { ControlRecord } from "./controlRecord.js";
import { followControl } from "./followControl.js";

/** What one batch is scored with. */
export interface BatchPorts {
  readonly store: CardStateStore;
  readonly model: ModelStepper;
  readonly rules: RuleEvaluator;
}

/** What a shadow batch is scored with: the candidate and the card-state store of its version. */
export interface ShadowPorts {
  readonly store: CardStateStore;
  readonly model: ModelStepper;
}

export interface PromotedPortsOptions {
  readonly channel: ControlChannel;
  readonly model: ModelRunner;
  readonly modelDir: string;
  readonly rules: RuleSet;
  /** Verifies, loads and opens a promoted artifact folder (loadModelRunner with serve's settings). */
  readonly loadModel: (dir: string) => Promise<ModelRunner>;
  /** The card-state store of a model version. */
  readonly storeFor: (modelVersion: string) => CardStateStore;
  readonly logger: Logger;
  readonly onModelSwitched?: (to: ModelRunner) => void;
  /** A shadow candidate started (its runner) or stopped (undefined). */
  readonly onShadowChanged?: (candidate: ModelRunner | undefined) => void;
  readonly onOutcome?: (record: ControlRecord, outcome: "switched" | "unchanged" | "refused") => void;
}

export interface PromotedPorts {
  /** The ports for the next batch: read once per batch and keep them for the whole batch. */
  current(): BatchPorts;
  /** The shadow candidate's ports, while one is being shadowed. */
  shadow(): ShadowPorts | undefined;
  /** The model now in use (what shutdown closes). */
  currentModel(): ModelRunner;
  stop(): Promise<void>;
}

/** Applies the latest control records (awaiting a promoted model's warm-up), then follows. */
export async function followPromotions(o: PromotedPortsOptions): Promise<PromotedPorts> {
  const { logger } = o;
  let ports: BatchPorts = {
    store: o.storeFor(o.model.modelVersion),
    model: o.model,
    rules: ruleEvaluator(o.rules),
  };
  let shadowPorts: ShadowPorts | undefined;
  const shadow = new ShadowSlot({
    load: o.loadModel,
    liveVersion: () => ports.model.modelVersion,
    events: {
      started: (candidate) => {
        shadowPorts = { model: candidate, store: o.storeFor(candidate.modelVersion) };
        o.onShadowChanged?.(candidate);
        logger.info(
          { candidate: candidate.modelVersion, live: ports.model.modelVersion },
          "shadow scoring started",
        );
      },
      stopped: (candidate) => {
        shadowPorts = undefined;
        o.onShadowChanged?.(undefined);
        logger.info({ candidate: candidate.modelVersion }, "shadow scoring stopped");
      },
      refused: (kind, dir, reason) => logger.warn({ kind, dir, reason }, "shadow candidate refused"),
    },
  });
  const model = new ModelSlot(o.model, o.modelDir, {
    load: o.loadModel,
    events: {
      switched: (from, to) => {
        // The candidate became live: its state keys are live keys now, so it stops shadowing.
        if (shadowPorts?.model.modelVersion === to.modelVersion) shadow.stop();
        ports = { ...ports, model: to, store: o.storeFor(to.modelVersion) };
        o.onModelSwitched?.(to);
        logger.info({ from: from.modelVersion, to: to.modelVersion }, "model promoted");
      },
      refused: (kind, dir, reason) =>
        logger.warn({ kind, dir, reason, current: ports.model.modelVersion }, "model promotion refused"),
    },
  });
  const rules = new RuleSetSlot(o.rules, {
    switched: (from, to) => {
      ports = { ...ports, rules: ruleEvaluator(to) };
      logger.info({ from: from.version, to: to.version }, "rules promoted");
    },
    refused: (file, issues) =>
      logger.warn({ file, issues, current: ports.rules.version }, "rules promotion refused"),
  });
  const subscription: ControlSubscription = await followControl(o.channel, {
    model,
    rules,
    shadow,
    onOutcome: o.onOutcome,
  });
  return {
    current: () => ports,
    shadow: () => shadowPorts,
    currentModel: () => model.current,
    stop: () => subscription.stop(),
  };
}
