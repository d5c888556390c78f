/** Loads the ONNX folders and every op family's ONNX mappers. */
import './shape-folding';
import './pointwise';
import './nn';
import './shape';
import './loss';
import './composed';
import './quantize';
import './sampling';
import './bitwise';
import './einsum';
import './spectral';
import './nn-composed';
import './recurrent';
import './attention';
