/** Registers every built-in converter. */
import './pointwise';
import './nn';
import './shape';
