// generate and chat on a remote OpenAI-compatible endpoint (--endpoint URL
// --remote-model NAME [--api-key-env VAR] [--allow-lan]): the same output as
// the local verbs, the reply coming from the server's stream. The API key is
// read from the named environment variable, never from a flag's value.
#pragma once

#include <vector>

#include "args.h"

namespace hearth::cli {

std::vector<FlagSpec> remote_flags();
// Runs the verb remotely; the flags were parsed with remote_flags() added.
int run_generate_remote(const ParsedArgs& args);
int run_chat_remote(const ParsedArgs& args);

}  // namespace hearth::cli
