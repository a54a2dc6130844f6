// A YAML file checked against a zod schema, with every problem placed at its line and column: a
// user editing rules or an import mapping must be told where to look, not just what is wrong.
// YAML parse errors carry their own position; a schema issue's path is walked back through the
// parsed document to the node it names (or the nearest ancestor that exists).
import { isCollection, LineCounter, parseDocument, type Document } from "yaml";
import type { z } from "zod";

export interface YamlProblem {
  /** 1-based; 0 when the problem has no place in the file (e.g. it is empty). */
  readonly line: number;
  readonly column: number;
  /** The key path of a schema problem, e.g. `rules[2].when.op`; empty for a parse error. */
  readonly path: string;
  readonly message: string;
}

/** Where the node at a key path starts (or its nearest ancestor that exists). */
export type YamlLocator = (path: readonly PropertyKey[]) => {
  readonly line: number;
  readonly column: number;
};

export type ValidatedYaml<T> =
  | { readonly ok: true; readonly value: T; readonly locate: YamlLocator }
  | { readonly ok: false; readonly problems: readonly YamlProblem[] };

export const formatYamlProblem = (source: string, p: YamlProblem): string =>
  `${source}:${p.line}:${p.column}: ${p.path === "" ? "" : `${p.path}: `}${p.message}`;

export const pathText = (path: readonly PropertyKey[]): string =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("");

/** The start of the deepest node along `path` that the document has. */
function offsetOf(doc: Document, path: readonly PropertyKey[]): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as unknown[], true);
    if (node !== undefined && node !== null && typeof node === "object" && "range" in node) {
      const range = (node as { range?: [number, number, number] }).range;
      if (range) return range[0];
    }
    // A key whose value is a collection: point at the collection.
    if (isCollection(node) && node.range) return node.range[0];
  }
  return undefined;
}

export function validateYaml<S extends z.ZodType>(text: string, schema: S): ValidatedYaml<z.infer<S>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => {
        const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
        return { line: pos.line, column: pos.col, path: "", message: e.message.split("\n")[0]! };
      }),
    };
  }
  const locate: YamlLocator = (path) => {
    const offset = offsetOf(doc, path);
    const pos = offset === undefined ? { line: 0, col: 0 } : lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const parsed = schema.safeParse(doc.toJS({ maxAliasCount: 100 }));
  if (parsed.success) return { ok: true, value: parsed.data as z.infer<S>, locate };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => ({
      ...locate(issue.path),
      path: pathText(issue.path),
      message: issue.message,
    })),
  };
}
