// POST /v1/chat/completions and POST /v1/completions: the OpenAI-compatible generation routes.
//
//   body → chat::parse_completion_request (400 on anything malformed)
//        → registry.resolve_chat (404 unknown, 400 for a decision model)
//        → chat template → tokens (400 when the template refuses, or the prompt fills the context)
//        → wait for the weights → the model's scheduler (429 when its queue is full; 503 when it
//          waited past --queue-timeout-s before starting)
//        → the whole answer, or a Server-Sent Events stream whose chunks concatenate to it.
// A client that disconnects stops its generation at the next engine step.
#pragma once
#include <string>

#include "chat/openai_request.h"
#include "server/http_types.h"
#include "server/systemone_route.h"

namespace verdict::server {

HttpResponse answer_completion(const SystemOneContext& context, const HttpRequest& request, const std::string& body,
                               RequestInfo& info, chat::Endpoint endpoint);

}  // namespace verdict::server
