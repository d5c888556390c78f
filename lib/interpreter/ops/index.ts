/** Loads every op family's interpreter implementations. */
import '../../ir/ops';
import './sym';
import './pointwise';
import './nn';
import './shape';
import './complex';
import './dynamic';
import './collective';
import './control-flow';
import './numeric';
import './sequence-state';
import './data-dependent';
import './quantize';
import './deferred';
import './strings';
import './sequences';
import './ml';
