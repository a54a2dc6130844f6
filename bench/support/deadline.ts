// Every wait in a bench section is bounded: a client that never acknowledges or a consumer
// that never reaches the end fails the section with what it was waiting for, instead of
// hanging the run.
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
