// Fallback chat templates for models without one, written from each model
// family's documented prompt format.
#include <algorithm>

#include "hearth/engine/chat/chat_template.h"

namespace hearth::chat {
namespace {

constexpr std::string_view kChatML = R"({%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- endif -%})";

// <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {answer} </s>
constexpr std::string_view kLlama2 = R"({%- if messages and messages[0]['role'] == 'system' -%}
{%- set system_message = '<<SYS>>\n' + messages[0]['content'] | trim + '\n<</SYS>>\n\n' -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set system_message = '' -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{{- bos_token + '[INST] ' + (system_message if loop.first else '') + message['content'] | trim + ' [/INST]' -}}
{%- elif message['role'] == 'assistant' -%}
{{- ' ' + message['content'] | trim + ' ' + eos_token -}}
{%- endif -%}
{%- endfor -%})";

constexpr std::string_view kLlama3 = R"({%- for message in messages -%}
{%- set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' -%}
{%- if loop.first -%}
{%- set content = bos_token + content -%}
{%- endif -%}
{{- content -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%})";

// Mistral's current format: the system prompt joins the last user turn.
constexpr std::string_view kMistral = R"({%- if messages and messages[0]['role'] == 'system' -%}
{%- set system_message = messages[0]['content'] -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{{- bos_token -}}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{%- if loop.last and system_message is defined -%}
{{- '[INST]' + system_message + '\n\n' + message['content'] + '[/INST]' -}}
{%- else -%}
{{- '[INST]' + message['content'] + '[/INST]' -}}
{%- endif -%}
{%- elif message['role'] == 'assistant' -%}
{{- message['content'] + eos_token -}}
{%- endif -%}
{%- endfor -%})";

// Gemma has no system role; a system prompt is prefixed to the first user turn.
constexpr std::string_view kGemma = R"({{- bos_token -}}
{%- if messages and messages[0]['role'] == 'system' -%}
{%- set first_user_prefix = messages[0]['content'] | trim + '\n\n' -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set first_user_prefix = '' -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
{{- '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') + message['content'] | trim + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<start_of_turn>model\n' -}}
{%- endif -%})";

constexpr std::string_view kCompletion = R"({%- set ns = namespace(started=false) -%}
{%- for message in messages -%}
{%- if message['role'] == 'assistant' -%}
{%- if message['content'] -%}{{- ' ' + message['content'] -}}{%- set ns.started = true -%}{%- endif -%}
{%- elif message['role'] != 'system' -%}
{%- if ns.started -%}{{- '\n' -}}{%- endif -%}{{- message['content'] -}}{%- set ns.started = true -%}
{%- endif -%}
{%- endfor -%})";
constexpr std::string_view kPhi3 = R"({%- for message in messages -%}
{%- if message['role'] == 'system' and message['content'] -%}
{{- '<|system|>\n' + message['content'] + '<|end|>\n' -}}
{%- elif message['role'] == 'user' -%}
{{- '<|user|>\n' + message['content'] + '<|end|>\n' -}}
{%- elif message['role'] == 'assistant' -%}
{{- '<|assistant|>\n' + message['content'] + '<|end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|assistant|>\n' -}}
{%- else -%}
{{- eos_token -}}
{%- endif -%})";

}  // namespace

const char* to_string(BuiltinTemplate kind) {
  switch (kind) {
    case BuiltinTemplate::ChatML: return "chatml";
    case BuiltinTemplate::Llama2: return "llama2";
    case BuiltinTemplate::Llama3: return "llama3";
    case BuiltinTemplate::Mistral: return "mistral";
    case BuiltinTemplate::Gemma: return "gemma";
    case BuiltinTemplate::Phi3: return "phi3";
    case BuiltinTemplate::Completion: return "completion (plain text)";
  }
  return "chatml";
}

std::string_view builtin_template_source(BuiltinTemplate kind) {
  switch (kind) {
    case BuiltinTemplate::ChatML: return kChatML;
    case BuiltinTemplate::Llama2: return kLlama2;
    case BuiltinTemplate::Llama3: return kLlama3;
    case BuiltinTemplate::Mistral: return kMistral;
    case BuiltinTemplate::Gemma: return kGemma;
    case BuiltinTemplate::Phi3: return kPhi3;
    case BuiltinTemplate::Completion: return kCompletion;
  }
  return kChatML;
}

BuiltinTemplate choose_builtin_template(const std::vector<std::string>& vocab_tokens) {
  auto has = [&](std::string_view token) {
    return std::find(vocab_tokens.begin(), vocab_tokens.end(), token) != vocab_tokens.end();
  };
  // Order matters: some vocabularies carry several families' tokens (Hermes 2
  // Pro on Llama 3 adds <|im_start|> and is tuned on ChatML).
  if (has("<|im_start|>")) return BuiltinTemplate::ChatML;
  if (has("<|start_header_id|>")) return BuiltinTemplate::Llama3;
  if (has("<start_of_turn>")) return BuiltinTemplate::Gemma;
  if (has("<|user|>") && has("<|assistant|>")) return BuiltinTemplate::Phi3;
  if (has("[INST]")) return BuiltinTemplate::Mistral;
  return BuiltinTemplate::Completion;
}

}  // namespace hearth::chat
