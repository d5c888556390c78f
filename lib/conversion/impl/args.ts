/**
 * Argument readers shared by the shape-family and dynamic-shape converters
 * (converters/shape.ts, converters/dynamic.ts): a node's tensor values, static numbers and
 * static number lists, each throwing a TypeError naming the node and argument when the
 * argument is not of the kind asked for (convertSegment wraps it as an InternalError).
 */
import { Value, type Arg, type Node } from '../../ir/graph';

/** The tensor value of argument `name`. */
export function value(node: Node, name: string): Value {
  const a = node.args[name];
  if (!(a instanceof Value)) throw new TypeError(`${node.name}: argument ${name} is not a value`);
  return a;
}

/** The tensor value of an optional argument, or null. */
export function optValue(node: Node, name: string): Value | null {
  const a = node.args[name];
  return a instanceof Value ? a : null;
}

/** A static number argument (a bool reads as 0 or 1). */
export function num(node: Node, name: string): number {
  const a = node.args[name];
  if (typeof a === 'boolean') return Number(a);
  if (typeof a !== 'number') throw new TypeError(`${node.name}: argument ${name} is not a static number`);
  return a;
}

/** An optional static number argument, or null. */
export function optNum(node: Node, name: string): number | null {
  const a = node.args[name];
  return a === null || a === undefined ? null : num(node, name);
}

/** A list argument of static numbers (a single number is a list of one; absent, an empty list). */
export function nums(node: Node, name: string): number[] {
  const a = node.args[name];
  const list: readonly Arg[] = Array.isArray(a) ? a : a === null || a === undefined ? [] : [a as Arg];
  return list.map((x) => {
    if (typeof x !== 'number') throw new TypeError(`${node.name}: argument ${name} holds a non-static entry`);
    return x;
  });
}

/** A list argument of tensor values (`Tensor[]`). */
export function values(node: Node, name: string): Value[] {
  return (node.args[name] as Arg[]).map((a) => a as Value);
}

/** A list argument of optional tensor values (`Tensor?[]`): null where absent. */
export function optValues(node: Node, name: string): Array<Value | null> {
  return (node.args[name] as Arg[]).map((a) => (a instanceof Value ? a : null));
}
