import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "src/codec/generated/",
      "scripts/pbjs-esm-wrapper.js",
      ".stack/",
      ".cache/",
      "models/",
      "bench/results/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setImmediate: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // The data flow runs ingest → features → rules/model → scoring: the stages the core is
    // handed (stores, rules) declare their ports themselves and never import the core.
    files: ["src/ingest/**", "src/features/**", "src/rules/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["**/scoring/*"], message: "the scoring core imports this stage, not the reverse" },
          ],
        },
      ],
    },
  },
);
