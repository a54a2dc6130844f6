// Stands in for `ajv/dist/2020.js` inside the bundle, for @platformatic/kafka only (see
// lazyKafkaClientAjv.mjs). The Kafka client compiles ~40 option validators when it is
// imported, most of them for admin calls `serve` never makes and all but two only run with its
// `strict` option: about 200 ms of a start. This Ajv compiles a schema the first time its
// validator runs, without checking the schema itself against the meta-schema; the validator
// checks the same data the same way and reports the same errors. Remove it once the client
// compiles lazily itself.
import { Ajv2020 as EagerAjv2020 } from "ajv/dist/2020.js";

export class Ajv2020 extends EagerAjv2020 {
  // The schemas are the client's own constants (its tests hold them to the meta-schema);
  // checking them again would compile the 2020-12 meta-schema first, ~50 ms of every start.
  constructor(options = {}) {
    super({ ...options, validateSchema: false });
  }

  compile(schema, meta) {
    let validate;
    const compileOnce = () => (validate ??= super.compile(schema, meta));
    const lazy = (data, ...rest) => {
      const valid = compileOnce()(data, ...rest);
      lazy.errors = validate.errors;
      return valid;
    };
    lazy.errors = null;
    lazy.schema = schema;
    return lazy;
  }
}

export default Ajv2020;
