#include "chat/jinja/template.h"

#include "chat/jinja/checker.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/parser.h"

namespace verdict::chat::jinja {

Template Template::parse(std::string_view source, const LexOptions& options) {
  std::unique_ptr<Program> program = parse_program(source, options);
  check_program(*program);
  return Template(std::shared_ptr<const Program>(std::move(program)));
}

std::string Template::render(const Value& context, const Limits& limits) const {
  return render_program(*program_, context, limits);
}

std::string Template::render(const nlohmann::ordered_json& context, const Limits& limits) const {
  return render(Value::from_json(context), limits);
}

bool Template::iterates_content() const { return program_->iterates_content; }

}  // namespace verdict::chat::jinja
