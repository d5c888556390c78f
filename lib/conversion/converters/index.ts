/**
 * Registers every built-in converter. Each module registers its own converters only
 * (lib/conversion/define.ts), so the order below does not change which converter any node
 * gets (test/conversion/import-order.test.ts).
 */
import './pointwise';
import './nn';
import './shape';
import './dynamic';
import './complex';
import './data-dependent';
import './quantize';
