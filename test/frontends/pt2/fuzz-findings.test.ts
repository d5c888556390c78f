/**
 * The fuzzer's .pt2 findings (fuzz/findings/README.md): archives whose model.json has the
 * wrong structure, or whose weights declare absurd sizes, are E_BAD_MODEL naming the file, the
 * entry and the JSON path, never a TypeError or RangeError. The saved inputs that are small
 * are replayed from test/fixtures/fuzz-findings/; the larger ones are rebuilt as edits of the
 * mlp fixture that break the same structure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { unzipSync, zipSync } from 'fflate';

import { loadPt2 } from '../../../lib/frontends/pt2';
import { FIXTURES } from '../../helpers/fixtures';
import { thrownError } from '../../helpers/errors';

const FINDINGS = path.join(FIXTURES, 'fuzz-findings');
const MODEL_JSON = 'model/models/model.json';
const WEIGHTS_JSON = 'model/data/weights/model_weights_config.json';

function refusal(bytes: Uint8Array, ...parts: string[]): string {
  const e = thrownError(() => loadPt2(bytes, { decompose: false }));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.details.file).toBe('pt2 buffer');
  for (const p of parts) expect(e.message).toContain(p);
  return e.message;
}

/** The mlp fixture with JSON entry `entry` edited. */
function edited(entry: string, edit: (json: any) => void): Uint8Array {
  const files = unzipSync(new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2'))));
  const json = JSON.parse(new TextDecoder().decode(files[entry]!));
  edit(json);
  return zipSync({ ...files, [entry]: new TextEncoder().encode(JSON.stringify(json)) }, { level: 0 });
}

const program = (edit: (ep: any) => void) => edited(MODEL_JSON, edit);
/** The first node of mlp whose target is `target`. */
const nodeOf = (ep: any, target: string) => ep.graph_module.graph.nodes.find((n: any) => n.target === target);

describe('saved findings', () => {
  const cases: [string, string][] = [
    ['pt2-6b131beae1f3', 'graph_module.graph.nodes[4].inputs[0].arg.as_tensor.name is not a string (got a list)'],
    ['pt2-6eef65743736', 'graph_module.graph.nodes[8].outputs is not a list (got nothing)'],
    ['pt2-928f485ba226', 'graph_module.graph.nodes[0].inputs[0].arg is not an object (got null)'],
    ['pt2-96ad3e404aa4', 'graph_module.graph.nodes[15].inputs is not a list (got false)'],
    ['pt2-9f4287ec04f5', 'graph_module.graph.nodes[15].inputs is not a list (got -1)'],
    ['pt2-a1b366c5618c', 'graph_module.graph.nodes[0].inputs is not a list (got 2)'],
    ['pt2-ca2c151cd1f3', 'graph_module.graph.nodes[2].inputs[0] is not an object (got null)'],
    ['pt2-fd31daacc1cc', 'graph_module.signature.input_specs[2].user_input is not an object (got 9007199254740994)'],
    ['pt2-ac9df8ef24e9', 'parameter "net.2.weight"', 'dim 1 = 1e+21, not a non-negative integer below 2^53'],
  ].map(([file, ...parts]) => [file!, parts.join('\u0000')]);

  test.each(cases)('%s', (file, parts) => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(FINDINGS, file)));
    const split = parts.split('\u0000');
    const message = refusal(bytes, ...split);
    if (split[0]!.startsWith('graph_module')) expect(message).toContain('entry "model/models/model.json"');
  });
});

describe('model.json structure, rebuilt (pt2-f6111a8aa71b, pt2-c52ad45c687d, pt2-f59a10129d39 and kin)', () => {
  test('a tensor_values entry that is null', () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.tensor_values.linear = null;
    });
    refusal(bytes, 'entry "model/models/model.json"', 'graph_module.graph.tensor_values["linear"] is not an object (got null)');
  });

  test('tensor sizes that are not a list', () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.tensor_values.linear.sizes = { as_int: 3 };
    });
    refusal(bytes, 'graph_module.graph.tensor_values["linear"].sizes is not a list (got an object)');
  });

  test('a size that is not a SymInt object', () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.tensor_values.linear.sizes[1] = 64;
    });
    refusal(bytes, 'graph_module.graph.tensor_values["linear"].sizes[1] is not an object (got 64)');
  });

  test("a node's outputs that are a number", () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.nodes[1].outputs = 256;
    });
    refusal(bytes, 'graph_module.graph.nodes[1].outputs is not a list (got 256)');
  });

  test("a node's inputs that are an object", () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.nodes[1].inputs = { name: 'input' };
    });
    refusal(bytes, 'graph_module.graph.nodes[1].inputs is not a list (got an object)');
  });

  test('a node without a target', () => {
    const bytes = program((ep) => {
      delete ep.graph_module.graph.nodes[0].target;
    });
    refusal(bytes, 'graph_module.graph.nodes[0].target is not a string (got nothing)');
  });

  test('a tensor list argument that is not a list', () => {
    const bytes = program((ep) => {
      const node = ep.graph_module.graph.nodes[0];
      node.inputs[0].arg = { as_tensors: { name: 'x' } };
    });
    refusal(bytes, 'graph_module.graph.nodes[0].inputs[0].arg.as_tensors is not a list (got an object)');
  });

  test('a SymInt list argument whose items are not objects', () => {
    const bytes = program((ep) => {
      const node = ep.graph_module.graph.nodes[0];
      node.inputs[0].arg = { as_sym_ints: [1, null] };
    });
    refusal(bytes, 'graph_module.graph.nodes[0].inputs[0].arg.as_sym_ints[0] is not an object (got 1)');
  });

  test('a graph output that is not an object', () => {
    const bytes = program((ep) => {
      ep.graph_module.graph.outputs[0] = 'softmax';
    });
    refusal(bytes, 'graph_module.graph.outputs[0] is not an object (got "softmax")');
  });

  test('an output spec that is null', () => {
    const bytes = program((ep) => {
      ep.graph_module.signature.output_specs[0] = null;
    });
    refusal(bytes, 'graph_module.signature.output_specs[0] is not an object (got null)');
  });

  test('a parameter spec whose argument names no tensor', () => {
    const bytes = program((ep) => {
      const spec = ep.graph_module.signature.input_specs.find((s: any) => s.parameter);
      spec.parameter.arg = { as_tensor: 7 };
    });
    refusal(bytes, 'graph_module.signature.input_specs[0].parameter.arg.as_tensor is not an object (got 7)');
  });

  test('a user input spec without an argument', () => {
    const bytes = program((ep) => {
      const specs = ep.graph_module.signature.input_specs;
      delete specs.find((s: any) => s.user_input).user_input.arg;
    });
    refusal(bytes, 'graph_module.signature.input_specs[6].user_input.arg is not an object (got nothing)');
  });

  test('a range constraint that is a number', () => {
    const bytes = program((ep) => {
      ep.range_constraints = { s0: 3 };
    });
    refusal(bytes, 'range_constraints["s0"] is not an object (got 3)');
  });

  test('an in-place op whose first argument is not a tensor', () => {
    // relu_ on a number where the tensor was: the functional rewrite has no tensor to replace.
    const bytes = program((ep) => {
      const relu = nodeOf(ep, 'torch.ops.aten.relu.default');
      relu.target = 'torch.ops.aten.relu_.default';
      relu.inputs[0].arg = { as_int: 1 };
    });
    refusal(bytes, 'pt2 node "relu" (aten.relu_.default): an in-place op whose first argument is not a tensor');
  });

  test('a weight of 2^38 elements (pt2-0159f814aa36) is refused before allocating', () => {
    const bytes = edited(WEIGHTS_JSON, (c) => {
      c.config['net.0.weight'].tensor_meta.sizes = [{ as_int: 64 }, { as_int: 2 ** 32 }];
      c.config['net.0.weight'].tensor_meta.strides = [{ as_int: 2 ** 32 }, { as_int: 1 }];
    });
    refusal(bytes, 'parameter "net.0.weight"', 'more than 2147483648 elements');
  });
});
