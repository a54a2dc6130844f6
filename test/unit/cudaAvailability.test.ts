// `auto` decides whether CUDA can load before asking ONNX Runtime, so a CPU-only machine starts
// without ORT's error text; `cuda` asked for explicitly fails with a reason a user can act on.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { cudaAvailability } from "../../src/model/cudaAvailability.js";
import { loadModelRunner } from "../../src/model/loadModelRunner.js";
import { ModelProviderError } from "../../src/model/modelProviderError.js";
import { committedModelDir } from "../support/committedModel.js";

const run = promisify(execFile);
const BIN = "/ort/bin";
const present =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path);
const libs = [join(BIN, "libonnxruntime_providers_shared.so"), join(BIN, "libonnxruntime_providers_cuda.so")];

describe("CUDA availability probe", () => {
  it("names the missing provider library when onnxruntime-node was installed without CUDA", () => {
    const probe = cudaAvailability({
      platform: "linux",
      arch: "x64",
      binaryDir: BIN,
      exists: present(libs[1]!),
    });
    expect(probe.available).toBe(false);
    expect(probe.available === false && probe.reason).toMatch(
      /libonnxruntime_providers_shared\.so not installed/,
    );
  });

  it("wants an NVIDIA driver as well as the libraries", () => {
    const noDriver = cudaAvailability({
      platform: "linux",
      arch: "x64",
      binaryDir: BIN,
      exists: present(...libs),
    });
    expect(noDriver.available === false && noDriver.reason).toMatch(/no NVIDIA driver/);
    const ready = cudaAvailability({
      platform: "linux",
      arch: "x64",
      binaryDir: BIN,
      exists: present(...libs, "/dev/nvidiactl"),
    });
    expect(ready.available).toBe(true);
  });

  it("knows onnxruntime-node has no CUDA provider on macOS", () => {
    const probe = cudaAvailability({ platform: "darwin", arch: "arm64", binaryDir: BIN, exists: () => true });
    expect(probe.available === false && probe.reason).toMatch(/darwin\/arm64/);
  });
});

describe("loading the model with a provider choice", () => {
  it("refuses an explicit cuda with the reason when CUDA cannot load", async () => {
    const err = await loadModelRunner({
      dir: committedModelDir(),
      trustedKeysDir: "models/trusted-keys",
      provider: "cuda",
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      probeCuda: () => ({ available: false, reason: "no NVIDIA driver found" }),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelProviderError);
    expect((err as ModelProviderError).kind).toBe("cuda_unavailable");
    expect((err as Error).message).toMatch(/no NVIDIA driver found/);
  });

  it("auto on a machine without CUDA starts with our one line and none of ONNX Runtime's error text", async () => {
    const script = `
      import { loadModelRunner } from "./src/model/loadModelRunner.ts";
      const said = (_, msg) => console.log(msg);
      const m = await loadModelRunner({ dir: ${JSON.stringify(committedModelDir())}, trustedKeysDir: "models/trusted-keys",
        provider: "auto", expectedFeatureSchemaVersion: ${JSON.stringify(FEATURE_SCHEMA_VERSION)}, logger: { info: said, warn: said } });
      console.log("provider " + m.provider);
      await m.close();`;
    const { stdout, stderr } = await run(process.execPath, [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      script,
    ]);
    expect(stderr).not.toMatch(/onnxruntime|providers_shared|ONNXRuntimeError/i);
    // On a machine with a working CUDA this loads on it, just as quietly.
    const expected = cudaAvailability().available
      ? /provider cuda/
      : /CUDA unavailable, running the model on CPU[\s\S]*provider cpu/;
    expect(stdout).toMatch(expected);
  });
});
