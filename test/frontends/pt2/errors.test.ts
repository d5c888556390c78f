/**
 * Malformed and unsupported .pt2 archives: each is E_BAD_MODEL (or E_UNSUPPORTED_OP) with a
 * message naming the archive entry, node or value concerned. Archives are modified copies of
 * the rotary_only / mlp / llama_tokens_complex_buffer fixtures, rebuilt with fflate.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { unzipSync, zipSync } from 'fflate';

import { loadPt2 } from '../../../lib/frontends/pt2';
import { dtypeFromScalarType } from '../../../lib/frontends/pt2/serde';
import { TensorRTNodeError } from '../../../lib/errors';
import { FIXTURES } from '../../helpers/fixtures';

type Entries = Record<string, Uint8Array>;

function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(path.join(FIXTURES, name, 'model.pt2')));
}

function entries(name: string): Entries {
  return unzipSync(fixtureBytes(name));
}

function zip(files: Entries): Uint8Array {
  return zipSync(files, { level: 0 });
}

const text = (b: Uint8Array): string => new TextDecoder().decode(b);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function editJson(files: Entries, entry: string, edit: (json: any) => void): Entries {
  const json = JSON.parse(text(files[entry]!));
  edit(json);
  return { ...files, [entry]: bytes(JSON.stringify(json)) };
}

/** Runs `fn`, expects a TensorRTNodeError with `code`, returns its message. */
function errorOf(fn: () => unknown, code: string): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TensorRTNodeError);
    const err = e as TensorRTNodeError;
    if (err.code !== code) throw new Error(`expected ${code}, got ${err.code}: ${err.message}`);
    return err.message;
  }
  throw new Error(`expected ${code}, but nothing was thrown`);
}

const MODEL_JSON = 'model/models/model.json';

describe('archive-level errors', () => {
  test('a truncated archive', () => {
    const full = fixtureBytes('rotary_only');
    const message = errorOf(() => loadPt2(full.subarray(0, Math.floor(full.length / 2))), 'E_BAD_MODEL');
    expect(message).toMatch(/pt2 buffer: not a readable \.pt2 archive/);
    expect(message).toMatch(/truncated/);
    // Cut anywhere, at either end: always E_BAD_MODEL, never a crash or a wrong graph.
    for (const cut of [1, 10, 21, 22, 100, 1000, full.length - 30]) {
      errorOf(() => loadPt2(full.subarray(0, full.length - cut)), 'E_BAD_MODEL');
      errorOf(() => loadPt2(full.subarray(cut)), 'E_BAD_MODEL');
    }
  });

  test('garbage bytes', () => {
    const garbage = new Uint8Array(4096).map((_, i) => (i * 7919) % 251);
    expect(errorOf(() => loadPt2(garbage), 'E_BAD_MODEL')).toMatch(/not a readable \.pt2 archive/);
    expect(errorOf(() => loadPt2(new Uint8Array(3)), 'E_BAD_MODEL')).toMatch(/too short/);
  });

  test('a file that does not exist names the path', () => {
    expect(errorOf(() => loadPt2('/nonexistent/model.pt2'), 'E_BAD_MODEL')).toContain('/nonexistent/model.pt2');
  });

  test('a path is named in messages', () => {
    const message = errorOf(() => loadPt2(path.join(FIXTURES, 'README.md')), 'E_BAD_MODEL');
    expect(message).toContain('README.md');
  });

  test('model.json removed', () => {
    const files = entries('rotary_only');
    delete files[MODEL_JSON];
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toContain('"model/models/model.json"');
  });

  test('model.json that is not JSON', () => {
    const files = { ...entries('rotary_only'), [MODEL_JSON]: bytes('{"graph_module": ') };
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('"model/models/model.json"');
    expect(message).toMatch(/not valid JSON/);
  });

  test('an unknown schema version', () => {
    const files = editJson(entries('rotary_only'), MODEL_JSON, (j) => {
      j.schema_version = { major: 99, minor: 0 };
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('"model/models/model.json"');
    expect(message).toContain('schema version 99.0');
  });

  test('no schema version at all', () => {
    const files = editJson(entries('rotary_only'), MODEL_JSON, (j) => {
      delete j.schema_version;
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toMatch(/no schema_version/);
  });

  test('archive_format that is not pt2', () => {
    const files = { ...entries('rotary_only'), 'model/archive_format': bytes('zip') };
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toContain('"model/archive_format"');
  });

  test('a missing weight file names the entry and the parameter', () => {
    const files = entries('mlp');
    delete files['model/data/weights/weight_2'];
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('"model/data/weights/weight_2"');
    expect(message).toMatch(/parameter "net\.\d\.(weight|bias)"/);
  });

  test('a weight file of the wrong byte length', () => {
    const files = entries('mlp');
    files['model/data/weights/weight_0'] = files['model/data/weights/weight_0']!.subarray(0, 100);
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('"model/data/weights/weight_0"');
    expect(message).toMatch(/holds 100 bytes/);
    files['model/data/weights/weight_0'] = new Uint8Array(4099);
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toMatch(/not a whole number of float32 elements/);
  });

  test('a weights config entry missing', () => {
    const files = entries('mlp');
    delete files['model/data/weights/model_weights_config.json'];
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toMatch(/the archive has no entry "model\/data\/weights\/model_weights_config\.json", which lists parameter "net\.0\.weight"/);
  });

  test('use_pickle: true', () => {
    const files = editJson(entries('mlp'), 'model/data/weights/model_weights_config.json', (j) => {
      j.config['net.0.weight'].use_pickle = true;
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('use_pickle: true');
    expect(message).toContain('"net.0.weight"');
    expect(message).toMatch(/entry "model\/data\/weights\/weight_\d+"/);
  });

  test('a weight whose dtype or shape differs from the program', () => {
    const files = editJson(entries('mlp'), 'model/data/weights/model_weights_config.json', (j) => {
      j.config['net.0.bias'].tensor_meta.sizes = [{ as_int: 8 }, { as_int: 8 }];
      j.config['net.0.bias'].tensor_meta.strides = [{ as_int: 8 }, { as_int: 1 }];
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toMatch(/parameter "net\.0\.bias" is float32\[8, 8\] in the archive, but the program uses it as float32\[\d+\]/);
  });

  test('a legacy (pickle) archive', () => {
    const files = { 'legacy/serialized_exported_program.json': bytes('{}'), 'legacy/serialized_state_dict.pt': new Uint8Array(8) };
    expect(errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP')).toMatch(/legacy torch\.export archive/);
  });
});

describe('program-level errors', () => {
  test('unknown ops are listed all at once, with counts and node names', () => {
    const original = entries('encoder');
    const linears = (JSON.parse(text(original[MODEL_JSON]!)).graph_module.graph.nodes as any[]).filter(
      (n) => n.target === 'torch.ops.aten.linear.default',
    ).length;
    expect(linears).toBeGreaterThanOrEqual(2);
    const files = editJson(original, MODEL_JSON, (j) => {
      const nodes = j.graph_module.graph.nodes as any[];
      for (const n of nodes) if (n.target === 'torch.ops.aten.linear.default') n.target = 'torch.ops.aten.frobnicate.default';
      nodes.find((n) => n.target === 'torch.ops.aten.embedding.default').target = 'torch.ops.aten.quux.default';
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP');
    expect(message).toContain('2 op(s) are not supported');
    expect(message).toContain(`torch.ops.aten.frobnicate.default × ${linears}`);
    expect(message).toContain('torch.ops.aten.quux.default × 1 ("embedding")');
  });

  test('a node reading an undefined value', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      j.graph_module.graph.nodes.find((n: any) => n.name === 'relu').inputs[0].arg.as_tensor.name = 'nowhere';
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toMatch(/pt2 node "relu" \(aten\.relu\.default\) reads "nowhere"/);
  });

  test('arguments that do not fit the schema', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      j.graph_module.graph.nodes.find((n: any) => n.name === 'softmax').inputs[1].arg = { as_string: 'last' };
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toContain('pt2 node "softmax" (aten.softmax.int)');
    expect(message).toMatch(/argument dim/);
  });

  test('a shape inference failure names the node', () => {
    const files = editJson(entries('rotary_only'), MODEL_JSON, (j) => {
      j.graph_module.graph.nodes.find((n: any) => n.name === 'view').inputs[1].arg = { as_ints: [3, 5] };
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL')).toContain('pt2 node "view" (aten.view.default)');
  });

  test('a recorded shape that disagrees with inference', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      j.graph_module.graph.tensor_values.relu.sizes[1] = { as_int: 7 };
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_BAD_MODEL');
    expect(message).toMatch(/pt2 node "relu" \(aten\.relu\.default\): PyTorch recorded "relu" as float32\[s77, 7\]/);
  });

  test('an unsupported dtype', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      j.graph_module.graph.tensor_values.x.dtype = 9; // COMPLEXHALF
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP')).toMatch(/tensor "x": torch dtype COMPLEXHALF \(complex32\) is not supported/);
  });

  test('torch.int16 (SHORT) and torch.uint16 map to int16 and uint16; an unknown code is refused', () => {
    expect(dtypeFromScalarType(3, 'tensor "x"')).toBe('int16');
    expect(dtypeFromScalarType(28, 'tensor "x"')).toBe('uint16');
    expect(errorOf(() => dtypeFromScalarType(99, 'tensor "x"'), 'E_UNSUPPORTED_OP')).toMatch(/tensor "x": unknown torch dtype code 99/);
  });

  test('a buffer-mutation output', () => {
    const files = editJson(entries('llama_tokens_complex_buffer'), MODEL_JSON, (j) => {
      const specs = j.graph_module.signature.output_specs;
      specs.unshift({ buffer_mutation: { arg: { name: 'slice_1' }, buffer_name: 'freqs_cis' } });
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP');
    expect(message).toContain('updates buffer "freqs_cis"');
  });

  test('a subgraph argument (control flow)', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      const node = j.graph_module.graph.nodes.find((n: any) => n.name === 'relu');
      node.target = 'torch.ops.higher_order.cond';
      node.inputs.push({ name: 'true_fn', arg: { as_graph: { name: 'true_graph_0', graph: {} } }, kind: 1 });
    });
    const message = errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP');
    expect(message).toContain('higher_order.cond');
    expect(message).toMatch(/control flow/);
  });

  test('an unreadable size expression', () => {
    const files = editJson(entries('mlp'), MODEL_JSON, (j) => {
      j.graph_module.graph.tensor_values.x.sizes[0] = { as_expr: { expr_str: 'sqrt(s77)', hint: null } };
    });
    expect(errorOf(() => loadPt2(zip(files)), 'E_UNSUPPORTED_OP')).toMatch(/tensor "x" size 0 has the size expression "sqrt\(s77\)"/);
  });
});
