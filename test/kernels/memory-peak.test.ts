/**
 * The memory a large elementwise op, unary op, slice or reduction takes beyond its input and
 * output: the kernels compute in float64 a chunk at a time and read float32 inputs in place,
 * so a 128 MiB float32 op holds about its input and output, where whole-tensor float64 copies
 * of the input and the result once took three times more (a program's peak then ran to 4-5×
 * its planned live tensors). Measured in a child process (its peak RSS, from
 * process.resourceUsage()) over the built kernels in dist/, one op per process.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const DIST = path.join(__dirname, '..', '..', 'dist');
const MIB = 2 ** 20;
const ELEMENTS = 32 * MIB; // 128 MiB of float32

/** Peak RSS growth (bytes) of running `op` on a float32 tensor of ELEMENTS ones, past the RSS with the input in place. */
function peakGrowth(op: string): number {
  const script = `
    const { Tensor } = require(${JSON.stringify(path.join(DIST, 'ir', 'tensor'))});
    const elementwise = require(${JSON.stringify(path.join(DIST, 'kernels', 'elementwise'))});
    const unary = require(${JSON.stringify(path.join(DIST, 'kernels', 'unary'))});
    const reduce = require(${JSON.stringify(path.join(DIST, 'kernels', 'reduce'))});
    const { slice } = require(${JSON.stringify(path.join(DIST, 'network', 'evaluate', 'data'))});
    const x = new Tensor('float32', [${ELEMENTS}], new Float32Array(${ELEMENTS}).fill(1));
    const one = new Tensor('float32', [1], new Float32Array([2]));
    const before = process.resourceUsage().maxRSS * 1024;
    let y;
    switch (${JSON.stringify(op)}) {
      case 'add': y = elementwise.add(x, one); break;
      case 'relu': y = unary.relu(x); break;
      case 'sum': y = reduce.sum(x); break;
      case 'slice': y = slice({ kind: 'slice', start: [0], size: [${ELEMENTS}], stride: [0], mode: 'strict_bounds' }, [one], { name: 'fill' })[0]; break;
    }
    const after = process.resourceUsage().maxRSS * 1024;
    process.stdout.write(JSON.stringify({ growth: after - before, first: Number(y.data[0]) }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { growth: number; first: number };
  expect(out.first).toBe(op === 'add' ? 3 : op === 'relu' ? 1 : op === 'sum' ? ELEMENTS : 2);
  return out.growth;
}

describe('large CPU kernels hold about their input and output', () => {
  // The output (128 MiB) plus chunks; float64 copies of the input and the result would add 384 MiB.
  test.each([
    ['add', 128 * MIB],
    ['relu', 128 * MIB],
    ['slice', 128 * MIB],
    // A reduction also holds the offsets of the elements it reduces into one (4 bytes each).
    ['sum', 128 * MIB],
  ])('%s of 128 MiB of float32', (op, output) => {
    expect(peakGrowth(op)).toBeLessThan(output + 64 * MIB);
  }, 60000);
});
