// Tool calls out of generated text, for the OpenAI `tool_calls` of a chat completion.
//
// A call is a block `<tool_call>...</tool_call>` in one of the two formats the Qwen templates teach:
//   Qwen3 (JSON, Hermes style):   <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>
//   Qwen3.5 (XML, Qwen3-Coder):   <tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>
// The format is chosen per block by its first non-whitespace character ('{' or "<function=").
//
// JSON: an object with a string "name" and "arguments" (an object, a string holding a JSON object,
// or absent/null for {}); other keys are ignored.
// XML: one or more `<function=NAME>` elements of `<parameter=NAME>VALUE</parameter>` elements, only
// whitespace between them. A VALUE is raw text (it may hold '<', newlines, even "</parameter>" when
// that is not followed by the next parameter or "</function>"); exactly one leading and one trailing
// "\n" are stripped. The value is then typed by the request's schema,
// tools[i].function.parameters.properties[NAME].type (a string or a list of strings):
// "integer", "number", "boolean", "object", "array", "null" take the text parsed as JSON when it
// parses to that type (also Python's True/False/None, as the template's `| string` writes them);
// anything else ("string", unknown, absent, a value of another type) keeps
// the text as a JSON string. A repeated parameter keeps its first position and its last value.
//
// Blocks that do not parse — malformed JSON, an unknown function name (when `tools` is an array,
// the name must be one of its tools[i].function.name), a parameter without "</parameter>" — stay in
// the content unchanged. A block without "</tool_call>" (generation cut by max_tokens) is a call
// only when everything after "<tool_call>" is one complete call (the model finished the call and
// only the close tag is missing); a call cut in the middle stays content. Model output is
// untrusted: nothing here throws, whatever the input (invalid UTF-8 is replaced in arguments).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::chat {

struct ToolCall {
  std::string id;         // "call_" + 24 random alphanumeric characters
  std::string name;
  std::string arguments;  // a JSON object as compact text, keys in the order generated (OpenAI wire form)
};

struct ParsedToolCalls {
  std::string content;          // the text outside the parsed blocks, trailing whitespace trimmed
  std::vector<ToolCall> calls;  // in order of appearance
};

// `tools`: the request's OpenAI tools array; null (or anything not an array) accepts any name.
ParsedToolCalls parse_tool_calls(std::string_view text, const nlohmann::ordered_json& tools);

// For streaming: the byte offset where a tool-call block starts in `text` — the first "<tool_call>",
// or else a suffix that could still grow into "<tool_call>" — or npos. The text before it can be
// streamed as content; the caller holds back the rest and parses it when generation ends.
std::size_t tool_call_start(std::string_view text);

}  // namespace verdict::chat
