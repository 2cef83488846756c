// GET /v1/models, GET /v1/models/{id} (systemone-api.md §10), GET /health (§11) and the admin
// routes POST /v1/models/{id}/load|unload|pin|unpin.
#pragma once
#include <string>

#include "registry/registry.h"
#include "server/http_types.h"
#include "server/router.h"

namespace verdict::server {

// {"object":"list","data":[…],"models":[…]}: OpenAI's list (every model, with kind and state) and
// TypeSafe's (decision models only) in one body.
HttpResponse list_models(const registry::Registry& registry);
// One `data` entry, or 404 model_not_found with the M1 message.
HttpResponse get_model(const registry::Registry& registry, const std::string& name);
// 200 "ok" when ready; 503 "loading" during start-up or while the default model loads, "draining"
// during shutdown (both with Retry-After).
HttpResponse health(const registry::Registry& registry, bool draining);
// load / unload / pin / unpin. 200 with the model's `data` entry; an unload of a leased model is
// deferred (202, the entry still resident).
HttpResponse model_action(registry::Registry& registry, const std::string& name, ModelAction action,
                          const std::string& request_id);

}  // namespace verdict::server
