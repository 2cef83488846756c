// verdict info DIR [--json]: what a checkpoint folder holds.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/model_summary.h"
#include "core/error.h"

namespace verdict::cli {

int run_info(Args& args) {
  const bool json = args.flag("json");
  const auto pos = args.positionals();
  args.finish();
  if (pos.size() != 1) throw UsageError("expected exactly one checkpoint folder");
  const ModelSummary s = summarize_model(pos[0]);
  if (json)
    std::cout << summary_to_json(s).dump(2) << "\n";
  else
    std::cout << summary_to_text(s);
  return 0;
}

}  // namespace verdict::cli
