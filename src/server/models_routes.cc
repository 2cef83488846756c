#include "server/models_routes.h"

#include <ctime>

#include "decision/json_value.h"
#include "decision/render.h"
#include "registry/errors.h"
#include "server/admission.h"
#include "server/errors.h"

namespace verdict::server {
namespace {

using decision::Value;

Value strings(const std::vector<std::string>& items) {
  Value v = Value::array();
  for (const std::string& s : items) v.push_back(Value::string(s));
  return v;
}

std::string utc_date(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

Value data_entry(const registry::Registry& registry, const registry::ModelStatus& m) {
  const bool decision = m.kind == registry::ModelKind::kDecision;
  Value e = Value::object();
  e.set("id", Value::string(m.name));
  e.set("object", Value::string("model"));
  e.set("created", Value::integer(m.created));
  e.set("owned_by", Value::string("verdict"));
  e.set("kind", Value::string(registry::kind_name(m.kind)));
  e.set("loaded", Value::boolean(m.resident()));
  e.set("state", Value::string(m.state_name()));
  if (decision) {
    e.set("max_length", Value::integer(static_cast<int64_t>(m.max_length)));
    const bool is_default = registry.default_decision_model() == m.name;
    e.set("aliases", is_default ? strings(registry.aliases()) : Value::array());
  }
  Value architecture = Value::object();
  architecture.set("input_modalities", strings({"text"}));
  architecture.set("output_modalities", strings({decision ? "decisions" : "text"}));
  e.set("architecture", std::move(architecture));
  return e;
}

HttpResponse json(int status, const Value& value) {
  HttpResponse res;
  res.status = status;
  res.body = decision::write_json(value, /*sort_keys=*/false);
  return res;
}

}  // namespace

HttpResponse list_models(const registry::Registry& registry) {
  Value data = Value::array();
  Value models = Value::array();
  for (const registry::ModelStatus& m : registry.status()) {
    data.push_back(data_entry(registry, m));
    if (m.kind != registry::ModelKind::kDecision) continue;
    Value t = Value::object();
    t.set("name", Value::string(m.name));
    t.set("description", Value::string("decision model"));
    t.set("release_date", Value::string(utc_date(m.created)));
    models.push_back(std::move(t));
  }
  Value body = Value::object();
  body.set("object", Value::string("list"));
  body.set("data", std::move(data));
  body.set("models", std::move(models));
  return json(200, body);
}

HttpResponse get_model(const registry::Registry& registry, const std::string& name) {
  const std::optional<registry::ModelStatus> m = registry.status(name);
  if (!m) return error_response(404, "model_not_found", registry.not_found_message(name));
  return json(200, data_entry(registry, *m));
}

HttpResponse health(const registry::Registry& registry, bool draining) {
  const bool ready = registry.ready();
  const char* status = draining ? "draining" : !ready || registry.default_model_loading() ? "loading" : "ok";
  Value body = Value::object();
  body.set("status", Value::string(status));
  const std::optional<std::string> default_model = registry.default_decision_model();
  body.set("model", default_model ? Value::string(*default_model) : Value::null());
  Value models = Value::array();
  if (ready) {
    for (const registry::ModelStatus& m : registry.status()) {
      Value e = Value::object();
      e.set("id", Value::string(m.name));
      e.set("kind", Value::string(registry::kind_name(m.kind)));
      e.set("loaded", Value::boolean(m.resident()));
      models.push_back(std::move(e));
    }
  }
  body.set("models", std::move(models));
  HttpResponse res = json(std::string_view(status) == "ok" ? 200 : 503, body);
  if (res.status == 503) res.set_header("Retry-After", "1");
  return res;
}

HttpResponse model_action(registry::Registry& registry, const std::string& name, ModelAction action,
                          const std::string& request_id) {
  try {
    int status = 200;
    switch (action) {
      case ModelAction::kLoad: registry.load(name); break;
      case ModelAction::kPin: registry.pin(name); break;
      case ModelAction::kUnpin: registry.unpin(name); break;
      case ModelAction::kUnload:
        if (registry.unload(name) == registry::UnloadOutcome::kDeferred) status = 202;
        break;
    }
    return json(status, data_entry(registry, *registry.status(name)));
  } catch (const registry::NotLoadableError& e) {
    return error_response(400, "model_not_loadable", e.what());
  } catch (const registry::ModelPinnedError& e) {
    return error_response(400, "model_pinned", e.what());
  } catch (...) {
    return model_route_error(request_id);  // unknown model, memory, load failures: as on the model routes
  }
}

}  // namespace verdict::server
