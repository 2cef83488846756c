// The tests compare backbones against float64 goldens at the fixtures README's 1e-4, so they run the exact
// fp32-activation kernels (VERDICT_PACK=0) unless VERDICT_PACK is set explicitly. The tests of the packed
// default (bf16/int8 activations) set it themselves (support/scoped_env.h) and use the tolerances of
// docs/performance.md; `VERDICT_PACK=1 ctest` would fail the 1e-4 comparisons by design. Set at static
// initialization, so that servers and CLI processes the tests start inherit it.
#include <cstdlib>

namespace {

const bool kExactByDefault = (::setenv("VERDICT_PACK", "0", /*overwrite=*/0), true);

}  // namespace
