// Whether asking ONNX Runtime for CUDA can succeed, decided before asking: ORT prints its own red
// error to stderr when the CUDA provider library is missing, and a CPU-only machine in `auto`
// must not show that on every start. Two things must be there: the CUDA provider libraries that
// onnxruntime-node's installer downloads (not bundled in the npm package) beside its binding, and
// an NVIDIA driver. A machine that passes both and still fails is a real CUDA problem, and ORT
// saying so is then useful.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type CudaAvailability =
  { readonly available: true } | { readonly available: false; readonly reason: string };

const PROVIDER_LIBRARIES: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ["libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"],
  win32: ["onnxruntime_providers_shared.dll", "onnxruntime_providers_cuda.dll"],
};

/** Files whose presence means an NVIDIA kernel driver is loaded (Linux) or installed (Windows). */
const DRIVER_MARKERS: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ["/proc/driver/nvidia/version", "/dev/nvidiactl"],
  win32: ["C:\\Windows\\System32\\nvcuda.dll"],
};

/** The folder onnxruntime-node loads its native binding and provider libraries from. */
export function onnxRuntimeBinaryDir(platform = process.platform, arch = process.arch): string {
  const packageJson = createRequire(import.meta.url).resolve("onnxruntime-node/package.json");
  return join(dirname(packageJson), "bin", "napi-v6", platform, arch);
}

export function cudaAvailability({
  platform = process.platform,
  arch = process.arch,
  binaryDir = onnxRuntimeBinaryDir(platform, arch),
  exists = existsSync,
}: {
  platform?: NodeJS.Platform;
  arch?: NodeJS.Architecture;
  binaryDir?: string;
  exists?: (path: string) => boolean;
} = {}): CudaAvailability {
  const libraries = PROVIDER_LIBRARIES[platform];
  const drivers = DRIVER_MARKERS[platform];
  if (libraries === undefined || drivers === undefined || arch !== "x64") {
    return { available: false, reason: `onnxruntime-node has no CUDA provider for ${platform}/${arch}` };
  }
  const missing = libraries.filter((file) => !exists(join(binaryDir, file)));
  if (missing.length > 0) {
    return {
      available: false,
      reason: `${missing.join(", ")} not installed in ${binaryDir} (install with ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci)`,
    };
  }
  if (!drivers.some((marker) => exists(marker))) {
    return { available: false, reason: `no NVIDIA driver found (${drivers.join(", ")})` };
  }
  return { available: true };
}
