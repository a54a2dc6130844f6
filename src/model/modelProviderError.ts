// Why the execution provider a user asked for cannot run the model.
export type ModelProviderErrorKind = "cuda_unavailable"; // `cuda` asked for explicitly, and it cannot load

export class ModelProviderError extends Error {
  override readonly name = "ModelProviderError";
  constructor(
    readonly kind: ModelProviderErrorKind,
    message: string,
  ) {
    super(message);
  }
}
