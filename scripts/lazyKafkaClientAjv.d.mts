import type { Plugin } from "esbuild";

export declare const lazyKafkaClientAjv: Plugin;
