// verdict tokenize: the tokenizer on stdin/stdout (how external conformance checks drive it).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "core/error.h"
#include "core/json.h"
#include "tokenizer/tokenizer.h"

namespace verdict::cli {
namespace {

using tokenizer::TokenId;
using tokenizer::Tokenizer;

std::vector<TokenId> ids_from_json(const Json& j, const std::string& what) {
  if (!j.is_array()) throw Error(what + ": expected a JSON array of token ids");
  std::vector<TokenId> ids;
  ids.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number_integer()) throw Error(what + ": token ids must be integers");
    const auto id = v.get<int64_t>();
    if (id < 0 || id > INT32_MAX) throw Error(what + ": token id " + std::to_string(id) + " out of range");
    ids.push_back(static_cast<TokenId>(id));
  }
  return ids;
}

std::string ids_to_json(const std::vector<TokenId>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

}  // namespace

int run_tokenize(Args& args) {
  const std::string model = args.required("model");
  const bool jsonl = args.flag("jsonl");
  const bool decode = args.flag("decode");
  const bool parse_special = !args.flag("no-special");
  const bool skip_special = args.flag("skip-special");
  args.finish();

  const Tokenizer tok = load_tokenizer(model);
  if (!jsonl) {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (decode) {
      auto ids = ids_from_json(parse_json(input, "stdin"), "stdin");
      std::cout << tok.decode(ids, skip_special);
    } else {
      std::cout << ids_to_json(tok.encode(input, parse_special)) << "\n";
    }
    return 0;
  }
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::string what = "stdin line " + std::to_string(line_no);
    const Json obj = parse_json(line, what);
    if (!obj.is_object()) throw Error(what + ": expected a JSON object");
    if (decode) {
      if (!obj.contains("ids")) throw Error(what + ": missing \"ids\"");
      const auto ids = ids_from_json(obj["ids"], what);
      std::cout << Json{{"text", tok.decode(ids, skip_special)}}.dump(-1, ' ', false,
                                                                       Json::error_handler_t::replace)
                << "\n";
    } else {
      if (!obj.contains("text") || !obj["text"].is_string())
        throw Error(what + ": missing string \"text\"");
      std::cout << "{\"ids\":" << ids_to_json(tok.encode(obj["text"].get<std::string>(), parse_special))
                << "}\n";
    }
    std::cout.flush();
  }
  return 0;
}

}  // namespace verdict::cli
