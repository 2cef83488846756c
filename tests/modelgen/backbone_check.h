// Running the backbone on a generated checkpoint and summarising what comes out.
#pragma once
#include <string>
#include <vector>

namespace verdict::modelgen::testing {

struct ForwardStats {
  std::vector<std::vector<float>> hidden;  // final-norm rows
  std::vector<float> last_logits;
  bool finite = true;
  double min_row_rms = 0, max_row_rms = 0;
  double logits_std = 0;
};

// Prefills `text` (tokenized by the checkpoint's own tokenizer) and returns every final-norm row and
// the last row's logits.
ForwardStats run_backbone(const std::string& dir, const std::string& text);

}  // namespace verdict::modelgen::testing
