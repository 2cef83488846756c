#include "modelgen/generator.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "modelgen/config_files.h"
#include "modelgen/tokenizer_files.h"

namespace verdict::modelgen {
namespace {

namespace fs = std::filesystem;

// Source values generated per block (all threads together): bounds memory at a few tens of MB.
constexpr int64_t kBlockValues = int64_t{1} << 23;
// Below this many values a block is generated on the calling thread.
constexpr int64_t kParallelValues = int64_t{1} << 16;

TensorFile make_file(std::string name, std::vector<WeightSpec> weights, const StorageOptions& storage,
                     formats::SafetensorsMetadata metadata) {
  std::vector<StoredTensor> stored = stored_tensors(weights, storage);
  std::sort(stored.begin(), stored.end(),
            [](const StoredTensor& a, const StoredTensor& b) { return a.entry.name < b.entry.name; });
  std::vector<formats::TensorEntry> entries;
  for (const StoredTensor& t : stored) entries.push_back(t.entry);
  formats::SafetensorsLayout layout(std::move(entries), std::move(metadata));
  return TensorFile{std::move(name), std::move(weights), std::move(stored), std::move(layout)};
}

int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// std::filesystem calls that report failures as verdict::Error.
void rename_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw Error(to.string() + ": cannot write: " + ec.message());
}

void remove_file(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) throw Error(path.string() + ": cannot remove: " + ec.message());
}

void write_text_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw Error(tmp.string() + ": cannot write");
  }
  rename_file(tmp, path);
}

// Runs fill(b, e) over row ranges that cover [begin, end), on up to `threads` threads.
template <typename Fill>
void parallel_rows(int64_t begin, int64_t end, int64_t cols, int threads, const Fill& fill) {
  const int64_t rows = end - begin;
  const int parts = (rows * cols < kParallelValues) ? 1 : static_cast<int>(std::min<int64_t>(threads, rows));
  if (parts <= 1) {
    fill(begin, end);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  std::vector<std::thread> pool;
  for (int p = 0; p < parts; ++p) {
    const int64_t b = begin + rows * p / parts, e = begin + rows * (p + 1) / parts;
    pool.emplace_back([&fill, &errors, p, b, e] {
      try {
        fill(b, e);
      } catch (...) {
        errors[static_cast<std::size_t>(p)] = std::current_exception();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void write_tensor_file(const TensorFile& file, const fs::path& path, uint64_t seed, int threads,
                       int64_t block_values) {
  const fs::path tmp = path.string() + ".tmp";
  {
    formats::SafetensorsStreamWriter writer(tmp.string(), file.layout);
    std::vector<uint8_t> buffer;
    // X.biases, X.scales and X.weight follow each other (sorted names): the scales are kept from the
    // pass that writes the biases, so a quantized module is quantized twice rather than three times.
    std::vector<uint8_t> kept_scales;
    std::size_t kept_for = file.weights.size();
    for (const StoredTensor& t : file.stored) {
      const WeightSpec& w = file.weights[t.weight];
      if (t.part == StoredPart::QuantScales && kept_for == t.weight) {
        writer.write(kept_scales.data(), kept_scales.size());
        kept_scales = {};
        kept_for = file.weights.size();
        continue;
      }
      const bool keep = t.part == StoredPart::QuantBiases;
      if (keep) {
        kept_scales.clear();
        kept_for = t.weight;
      }
      const std::size_t row_bytes = stored_row_bytes(t, w);
      const int64_t rows = w.rows();
      const int64_t block = std::max<int64_t>(1, block_values / std::max<int64_t>(1, w.cols()));
      for (int64_t begin = 0; begin < rows; begin += block) {
        const int64_t end = std::min(rows, begin + block);
        buffer.resize(static_cast<std::size_t>(end - begin) * row_bytes);
        const std::size_t kept = kept_scales.size();
        if (keep) kept_scales.resize(kept + buffer.size());
        parallel_rows(begin, end, w.cols(), threads, [&](int64_t b, int64_t e) {
          uint8_t* out = buffer.data() + static_cast<std::size_t>(b - begin) * row_bytes;
          if (keep)
            fill_scales_and_biases(w, t.bits, seed, b, e,
                                   kept_scales.data() + kept + static_cast<std::size_t>(b - begin) * row_bytes, out);
          else
            fill_rows(t, w, seed, b, e, out);
        });
        writer.write(buffer.data(), buffer.size());
      }
    }
    writer.finish();
  }
  rename_file(tmp, path);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* storage_name(const GenerateOptions& o) {
  switch (o.quantization) {
    case Quantization::Mlx4:
      return "MLX affine 4-bit, group 64 (BF16 scales)";
    case Quantization::Mlx6:
      return "MLX affine 6-bit, group 64 (BF16 scales)";
    case Quantization::Mlx8:
      return "MLX affine 8-bit, group 64 (BF16 scales)";
    case Quantization::None:
      break;
  }
  return o.f32 ? "F32" : "BF16 (A_log, linear_attn.norm.weight F32)";
}

}  // namespace

uint64_t ModelPlan::tensor_bytes() const {
  return model.layout.file_bytes() + (head ? head->layout.file_bytes() : 0);
}

ModelPlan plan_model(const GenerateOptions& options) {
  ModelPlan plan;
  plan.preset = &find_preset(options.preset);
  plan.options = options;
  if (options.f32 && options.quantization != Quantization::None)
    throw UsageError("--quantize writes BF16 scales from BF16 weights; it cannot be combined with --dtype f32");
  plan.tokens = token_layout(plan.preset->tokenizer);
  const BackboneShape& shape = plan.preset->backbone;
  if (plan.tokens.specials.back().id >= shape.vocab)
    throw Error("preset " + plan.preset->name + ": token ids exceed the embedding rows");
  const StorageOptions storage{options.f32, options.quantization};
  std::vector<WeightSpec> backbone = backbone_weights(shape);
  plan.backbone_params = count_params(backbone);
  const char* format = options.quantization == Quantization::None ? "pt" : "mlx";
  // The metadata marks the weights as random, so that every command that prints answers can say so.
  plan.model = make_file("model.safetensors", std::move(backbone), storage,
                         {{"format", format},
                          {"generator", "verdict make-model"},
                          {"preset", plan.preset->name},
                          {"seed", std::to_string(options.seed)}});
  if (plan.preset->head) {
    std::vector<WeightSpec> head = head_weights(*plan.preset->head);
    plan.head_params = count_params(head);
    plan.head = make_file("joint_head.safetensors", std::move(head), StorageOptions{options.f32, Quantization::None},
                          {{"generator", "verdict make-model"},
                           {"seed", std::to_string(options.seed)},
                           {"format", "pt"}});
  }
  return plan;
}

void write_model(const ModelPlan& plan, const std::string& dir) {
  const fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error(dir + ": cannot create the folder: " + ec.message());
  // model.safetensors goes first (a folder holding it counts as complete until the new one lands), and
  // files this checkpoint does not have but a loader would read go too (a previous Clef head, a shard
  // index, a separate chat template).
  for (const char* stale : {"model.safetensors", "model.safetensors.index.json", "chat_template.jinja"})
    remove_file(root / stale);
  if (!plan.head)
    for (const char* stale : {"joint_head.safetensors", "joint_head_config.json"}) remove_file(root / stale);
  const int threads = thread_count(plan.options.threads);
  const int64_t block_values = plan.options.block_values > 0 ? plan.options.block_values : kBlockValues;
  const BackboneShape& shape = plan.preset->backbone;
  write_text_file(root / "config.json",
                  model_config_json(shape, plan.tokens, plan.options.f32, plan.options.quantization));
  write_text_file(root / "generation_config.json", generation_config_json(plan.tokens));
  const TokenizerFiles tok = make_tokenizer_files(plan.tokens);
  write_text_file(root / "tokenizer.json", tok.tokenizer_json);
  write_text_file(root / "tokenizer_config.json", tok.tokenizer_config_json);
  if (plan.head) {
    write_text_file(root / "joint_head_config.json", head_config_json(*plan.preset->head));
    write_tensor_file(*plan.head, root / plan.head->name, plan.options.seed, threads, block_values);
  }
  write_tensor_file(plan.model, root / plan.model.name, plan.options.seed, threads, block_values);
}

std::string describe_plan(const ModelPlan& plan) {
  std::string out = "preset " + plan.preset->name + ": " + plan.preset->summary + "\n";
  out += "seed " + std::to_string(plan.options.seed) + ", storage " + storage_name(plan.options) + "\n";
  for (const TensorFile* f : {&plan.model, plan.head ? &*plan.head : nullptr}) {
    if (f == nullptr) continue;
    out += f->name + ": " + std::to_string(f->layout.tensors().size()) + " tensors, " +
           std::to_string(f->layout.file_bytes()) + " bytes\n";
    for (const formats::TensorEntry& e : f->layout.tensors()) {
      char line[512];
      std::snprintf(line, sizeof line, "  %-5s %-18s %12zu  %s\n", std::string(dtype_name(e.dtype)).c_str(),
                    shape_text(e.shape).c_str(), e.nbytes(), e.name.c_str());
      out += line;
    }
  }
  out += "backbone parameters: " + std::to_string(plan.backbone_params) + "\n";
  if (plan.head) out += "head parameters: " + std::to_string(plan.head_params) + "\n";
  out += "total parameters: " + std::to_string(plan.backbone_params + plan.head_params) + "\n";
  out += "total bytes: " + std::to_string(plan.tensor_bytes()) + " (safetensors files)\n";
  return out;
}

void ensure_model(const GenerateOptions& options, const std::string& dir) {
  const fs::path root(dir);
  if (fs::exists(root / "model.safetensors") && fs::exists(root / "config.json")) return;
  write_model(plan_model(options), dir);
}

}  // namespace verdict::modelgen
