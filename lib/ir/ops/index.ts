/** Loads every op family's declarations into the op table. */
import './sym';
import './pointwise';
import './nn';
import './shape';
import './complex';
import './dynamic';
import './collective';
import './control-flow';
import './numeric';
import './sequence-state';
import './data-dependent';
import './quantize';
import './deferred';
import './strings';
import './sequences';
import './ml';

export { defineOp, getOp, opNames } from './registry';
export type { InferFn, OpDefinition } from './registry';
