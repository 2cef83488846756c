// The load-time check: walks a parsed Program and refuses (SyntaxError, with line and column) any
// filter, test, function or method this engine does not implement, so a model whose template cannot
// render fails when it is loaded rather than on some later request. Also records what a chat
// template does with message content (Program::iterates_content).
#pragma once

#include "chat/jinja/ast.h"

namespace verdict::chat::jinja {

void check_program(Program& program);

}  // namespace verdict::chat::jinja
