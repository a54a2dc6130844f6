// pbjs wrapper for native ESM on Node: protobufjs is CommonJS, so take its default export
// and name the file with its extension (Node's ESM resolver does not guess ".js").
import $protobuf from "protobufjs/minimal.js";

// int64 fields (amounts in minor units, epoch milliseconds) stay far below 2^53, so decode
// them as plain numbers: no Long objects allocated on the hot path.
$protobuf.util.Long = undefined;
$protobuf.configure();

$OUTPUT;

export { $root as default };
