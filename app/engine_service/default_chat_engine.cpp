// make_default_chat_engine with a logger, for builds with the runtime.
//
// The runtime engine (runtime_chat_engine.cpp) does not take a Logger yet: its
// constructor is to receive this one and pass it to choose_backend(),
// Tokenizer::from_gguf() and PrefixDiskCache, and then define this overload
// itself (this file goes). Until then the engine's own messages are not
// logged; the app's GPU probe already logs through the same logger.
#include "engine_service/chat_engine.h"

namespace hearth::app {

#ifdef HEARTH_HAVE_RUNTIME
std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir, const Logger& logger) {
  (void)logger;
  return make_default_chat_engine(prefix_cache_dir);
}
#endif

}  // namespace hearth::app
