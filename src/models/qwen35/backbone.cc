#include "models/qwen35/backbone.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/error.h"
#include "formats/gguf_qwen35.h"
#include "formats/hf_config.h"
#include "kernels/float_mode.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "models/qwen35/activations.h"
#include "models/qwen35/batch.h"
#include "models/qwen35/gated_attention.h"
#include "models/qwen35/gated_deltanet.h"
#include "models/qwen35/mlp.h"
#include "models/qwen35/norms.h"

namespace verdict::models::qwen35 {
namespace {

void add_rows(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace

std::span<const float> ForwardOutput::hidden_row(std::size_t seq, int64_t i) const {
  return {hidden.data() + (hidden_offset.at(seq) + i) * hidden_size, static_cast<std::size_t>(hidden_size)};
}

std::span<const float> ForwardOutput::logits_row(std::size_t seq, int64_t i) const {
  return {logits.data() + (logits_offset.at(seq) + i) * vocab_size, static_cast<std::size_t>(vocab_size)};
}

std::unique_ptr<Backbone> Backbone::load(const std::string& dir, const LoadOptions& options) {
  if (formats::is_gguf_path(dir)) {
    auto file = std::make_unique<formats::GgufFile>(dir);
    Config config = make_config(formats::gguf_qwen35_model_config(*file), dir);
    auto weights = Weights::load_gguf(std::move(file), config);
    weights->pack_matrices(options.pack_output);
    return std::make_unique<Backbone>(std::move(config), std::move(weights), options);
  }
  const formats::ModelConfig model = formats::load_model_config(dir + "/config.json");
  Config config = make_config(model, dir + "/config.json");
  auto weights = Weights::load(dir, config, model);
  weights->pack_matrices(options.pack_output);
  return std::make_unique<Backbone>(std::move(config), std::move(weights), options);
}

Backbone::Backbone(Config config, std::unique_ptr<Weights> weights, LoadOptions options)
    : config_(std::move(config)), weights_(std::move(weights)), options_(options) {}

ForwardOutput Backbone::forward(SeqStatePool& pool, std::span<const SequenceInput> batch) const {
  // Subnormal numbers flushed to zero for the whole step, on every thread it uses (float_mode.h): the
  // chunked DeltaNet rule's decays underflow fp32's normal range, and each subnormal costs an assist.
  const kernels::FlushSubnormals flush;
  const Config& c = config_;
  const int64_t H = c.hidden;

  // Validate everything first: a refused step leaves every state untouched.
  std::vector<Segment> segments;
  std::set<int64_t> slots;
  int64_t rows = 0, logit_count = 0, saves = 0;
  for (const SequenceInput& in : batch) {
    if (!pool.in_use(in.slot)) throw Error("sequence slot " + std::to_string(in.slot) + " is not acquired");
    if (!slots.insert(in.slot).second)
      throw Error("sequence slot " + std::to_string(in.slot) + " appears twice in one batch");
    const auto n = static_cast<int64_t>(in.tokens.size());
    const int64_t start = pool.length(in.slot);
    if (start + n > pool.max_tokens())
      throw Error("sequence of " + std::to_string(start) + " + " + std::to_string(n) + " tokens exceeds the " +
                  std::to_string(pool.max_tokens()) + "-token state");
    for (int32_t id : in.tokens)
      if (id < 0 || id >= c.vocab)
        throw Error("token id " + std::to_string(id) + " out of range [0, " + std::to_string(c.vocab) + ")");
    for (int64_t r : in.logit_rows)
      if (r < 0 || r >= n)
        throw Error("logit row " + std::to_string(r) + " out of range [0, " + std::to_string(n) + ")");
    Segment seg{rows, n, in.slot, start};
    for (std::size_t i = 0; i < in.seams.size(); ++i) {
      if (in.seams[i] <= 0 || (i > 0 && in.seams[i] <= in.seams[i - 1]))
        throw Error("sequence seams must be positive and ascending");
      if (in.seams[i] > start && in.seams[i] < start + n) seg.restarts.push_back(in.seams[i] - start);
    }
    seg.chunked = n > 1 || in.prompt_piece;
    for (std::size_t i = 0; i < in.save_at.size(); ++i) {
      const int64_t rel = in.save_at[i] - start;
      const bool at_restart = std::find(seg.restarts.begin(), seg.restarts.end(), rel) != seg.restarts.end();
      if ((rel != n && !at_restart) || (i > 0 && in.save_at[i] <= in.save_at[i - 1]))
        throw Error("a sequence's state can be saved only at one of its seams inside the step or at the step's end");
      seg.saves.push_back(rel);
    }
    saves += static_cast<int64_t>(seg.saves.size());
    segments.push_back(std::move(seg));
    rows += n;
    logit_count += static_cast<int64_t>(in.logit_rows.size());
  }

  ForwardOutput result;
  result.hidden_size = H;
  result.vocab_size = c.vocab;
  result.saved.reserve(static_cast<std::size_t>(saves));
  for (Segment& seg : segments) {
    if (seg.saves.empty()) continue;
    seg.snapshots = result.saved.data() + result.saved.size();
    for (std::size_t k = 0; k < seg.saves.size(); ++k) result.saved.push_back(pool.blank_snapshot());
  }
  // Embeddings (no scaling).
  Activations x(rows * H);  // every row an embedding
  for (std::size_t s = 0; s < batch.size(); ++s) {
    result.hidden_offset.push_back(segments[s].row0);
    kernels::parallel_for(segments[s].n, static_cast<double>(H), [&](int64_t t) {
      kernels::dequantize_row(weights_->embed.view, batch[s].tokens[static_cast<std::size_t>(t)],
                              x.data() + (segments[s].row0 + t) * H);
    });
  }

  // Decoder layers: x ← x + Mixer(norm(x)); x ← x + MLP(norm(x)).
  const StepContext step{c, pool, segments, rows, options_.head_mapping.value_or(weights_->head_mapping)};
  Activations xn(rows * H), mix(rows * H);
  for (int64_t l = 0; l < c.layers; ++l) {
    const LayerWeights& lw = weights_->layers[static_cast<std::size_t>(l)];
    const int64_t index = c.kind_index[static_cast<std::size_t>(l)];
    rms_norm_rows(x.data(), rows, H, lw.input_norm.data(), c.eps, xn.data());
    if (c.attention[static_cast<std::size_t>(l)]) {
      attention_forward(step, lw.attention, index, xn.data(), mix.data());
    } else {
      deltanet_forward(step, lw.deltanet, index, xn.data(), mix.data());
    }
    add_rows(x.data(), mix.data(), rows * H);
    rms_norm_rows(x.data(), rows, H, lw.post_norm.data(), c.eps, xn.data());
    mlp_forward(lw.mlp, xn.data(), rows, mix.data());
    add_rows(x.data(), mix.data(), rows * H);
  }
  for (const Segment& seg : segments) {
    pool.set_length(seg.slot, seg.start + seg.n);
    for (std::size_t k = 0; k < seg.saves.size(); ++k) pool.save_kv(seg.slot, seg.start + seg.saves[k], seg.snapshots[k]);
  }

  // Final norm on every row; logits only for the requested rows.
  result.hidden.resize(static_cast<std::size_t>(rows * H));
  rms_norm_rows(x.data(), rows, H, weights_->final_norm.data(), c.eps, result.hidden.data());
  std::vector<float> picked(static_cast<std::size_t>(logit_count * H));
  int64_t m = 0;
  for (std::size_t s = 0; s < batch.size(); ++s) {
    result.logits_offset.push_back(m);
    for (int64_t r : batch[s].logit_rows) {
      std::copy_n(result.hidden.data() + (segments[s].row0 + r) * H, H, picked.data() + m * H);
      ++m;
    }
  }
  result.logits.resize(static_cast<std::size_t>(logit_count * c.vocab));
  kernels::matmul(weights_->output(), picked.data(), logit_count, result.logits.data());
  return result;
}

ForwardOutput Backbone::prefill(SeqStatePool& pool, int64_t slot, std::span<const int32_t> tokens,
                                std::span<const int64_t> logit_rows, int64_t chunk_size,
                                std::span<const int64_t> seams) const {
  if (chunk_size < 1) throw Error("prefill chunk size must be positive");
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t r : logit_rows)
    if (r < 0 || r >= n) throw Error("logit row " + std::to_string(r) + " out of range [0, " + std::to_string(n) + ")");
  ForwardOutput result;
  result.hidden_size = config_.hidden;
  result.vocab_size = config_.vocab;
  result.hidden_offset = {0};
  result.logits_offset = {0};
  result.hidden.reserve(static_cast<std::size_t>(n * config_.hidden));
  result.logits.resize(logit_rows.size() * static_cast<std::size_t>(config_.vocab));
  // Pieces of chunk_size tokens, restarted at every seam: each starts on the seams' grid when chunk_size
  // is a multiple of kPrefillAlignment.
  const int64_t start = pool.length(slot);
  for (int64_t t0 = 0; t0 < n;) {
    int64_t t1 = std::min(n, t0 + chunk_size);
    for (int64_t seam : seams)
      if (seam > start + t0 && seam < start + t1) t1 = seam - start;
    std::vector<int64_t> local, where;  // rows of this piece, and their places in `logit_rows`
    for (std::size_t i = 0; i < logit_rows.size(); ++i) {
      if (logit_rows[i] >= t0 && logit_rows[i] < t1) {
        local.push_back(logit_rows[i] - t0);
        where.push_back(static_cast<int64_t>(i));
      }
    }
    SequenceInput in{slot, tokens.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(t1 - t0)), local};
    in.seams = seams;
    in.prompt_piece = true;
    ForwardOutput part = forward(pool, std::span<const SequenceInput>(&in, 1));
    result.hidden.insert(result.hidden.end(), part.hidden.begin(), part.hidden.end());
    for (std::size_t i = 0; i < where.size(); ++i)
      std::copy_n(part.logits.data() + static_cast<int64_t>(i) * config_.vocab, config_.vocab,
                  result.logits.data() + where[i] * config_.vocab);
    t0 = t1;
  }
  return result;
}

}  // namespace verdict::models::qwen35
