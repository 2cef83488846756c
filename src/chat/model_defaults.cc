#include "chat/model_defaults.h"

#include <sys/stat.h>

#include "formats/hf_config.h"

namespace verdict::chat {

GenerationOptions model_generation_defaults(const std::string& dir, const std::vector<int64_t>& config_eos,
                                            const tokenizer::Tokenizer& tok) {
  GenerationOptions o;
  std::vector<int64_t> eos = config_eos;
  const std::string path = dir + "/generation_config.json";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    const formats::GenerationConfig gen = formats::load_generation_config(path);
    if (!gen.eos_token_ids.empty()) eos = gen.eos_token_ids;
    if (gen.temperature) o.sampling.temperature = *gen.temperature;
    if (gen.top_p) o.sampling.top_p = *gen.top_p;
    if (gen.top_k) o.sampling.top_k = *gen.top_k;
    if (gen.repetition_penalty) o.sampling.repetition_penalty = *gen.repetition_penalty;
    if (gen.do_sample && !*gen.do_sample) o.sampling.temperature = 0;
  }
  for (const int64_t id : eos) o.stop_ids.push_back(static_cast<TokenId>(id));
  o.split_reasoning = tok.token_to_id(o.tags.close).has_value();
  return o;
}

}  // namespace verdict::chat
