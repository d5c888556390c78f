/** Registers every built-in converter. */
import './pointwise';
import './nn';
import './shape';
import './dynamic'; // after the static families: it derives dynamic variants of their converters
import './complex';
