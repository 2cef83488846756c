#include "engine/step_model.h"

#include "core/error.h"

namespace verdict::engine {

void StepModel::restore(int64_t /*slot*/, const StateSnapshot& /*snapshot*/) {
  throw Error("this model cannot restore saved sequence states");
}

}  // namespace verdict::engine
