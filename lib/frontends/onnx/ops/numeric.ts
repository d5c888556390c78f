/**
 * ONNX mappers of CumProd (opset 26), Det and BitCast (opset 26): lib/ir/ops/numeric.ts.
 */
import { dtypeInfo, isComplex } from '../../../ir/dtype';
import { dtypeFromOnnx } from '../tensor-proto';
import { defineOnnxOp } from '../registry';

defineOnnxOp('CumProd', (ctx) => {
  const x = ctx.input(0);
  const axis = ctx.staticInts(1, 'axis');
  if (axis.length !== 1) ctx.bad(`axis must be a single integer, got [${axis.join(', ')}]`);
  const rank = x.tensorType.shape.length;
  if (axis[0]! < -rank || axis[0]! >= Math.max(rank, 1)) ctx.bad(`axis ${axis[0]} is out of range for rank ${rank}`);
  const flag = (name: string): boolean => {
    const v = ctx.attrInt(name, 0);
    if (v !== 0 && v !== 1) ctx.bad(`attribute ${name} must be 0 or 1, got ${v}`);
    return v === 1;
  };
  const dtype = x.tensorType.dtype;
  if (dtype === 'bool' || isComplex(dtype)) ctx.unsupported(`CumProd of ${dtype} is not supported`);
  return [ctx.emit('trt.cumprod_onnx', { self: x, dim: axis[0]!, exclusive: flag('exclusive'), reverse: flag('reverse') })];
});

defineOnnxOp('Det', (ctx) => [ctx.emit('aten.linalg_det.default', { A: ctx.input(0) })]);

defineOnnxOp('BitCast', (ctx) => {
  const x = ctx.input(0);
  const to = dtypeFromOnnx(ctx.attrInt('to'), `${ctx.where}: attribute to`);
  const from = x.tensorType.dtype;
  if (from === to) return [x];
  if (isComplex(from) || isComplex(to)) ctx.unsupported(`BitCast between ${from} and ${to} is not supported`);
  if (dtypeInfo(from).itemBytes !== dtypeInfo(to).itemBytes) {
    ctx.unsupported(`BitCast from ${from} to ${to} changes the element width; only casts between types of one width are supported`);
  }
  if (to === 'bool') ctx.unsupported('BitCast to bool is not supported (a byte other than 0 or 1 is no bool)');
  return [ctx.emit('trt.bitcast', { self: x, dtype: to })];
});
