/** The CPU interpreter of Graph IR. */
import './ops';

export { interpret, interpretValues } from './interpret';
export type { InterpretOptions } from './interpret';
export { bindInputs } from './bind-inputs';
export { defineImpl, implementedOps } from './registry';
export type { ImplContext, ImplFn, RuntimeArg, RuntimeValue } from './registry';
