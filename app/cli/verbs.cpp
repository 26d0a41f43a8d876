#include "verbs.h"

namespace hearth::cli {

// One line per verb, in the order `hearth-cli --help` lists them.
const std::vector<VerbEntry>& all_verbs() {
  static const std::vector<VerbEntry> verbs = {
      {"info", "model summary and the memory it needs", run_info},
      {"quantize", "quantize an F32/F16/BF16 model to a smaller type", run_quantize},
      {"catalog", "list downloadable models and whether they fit this machine", run_catalog},
      {"pull", "download a model (NAME:QUANT or URL), resumable, verified", run_pull},
      {"template", "render a conversation with a chat template", run_template},
      {"logits", "evaluate token ids and write every position's logits", run_logits},
      {"generate", "complete a prompt, streaming", run_generate},
      {"chat", "interactive chat with the model's template, streaming", run_chat},
      {"serve", "the local OpenAI-compatible API server", run_serve},
      {"bench", "prompt and generation speed against measured read bandwidth", run_bench},
      {"bench-prefix", "time to first token with a system prompt: cold, warm in memory, warm from disk", run_bench_prefix},
      {"bench-serve", "the local API server under concurrent streams: tok/s, TTFT, inter-token latency", run_bench_serve},
      {"perplexity", "perplexity over a text in the reference engine's sliding windows", run_perplexity},
      {"embed", "pooled, normalized sentence embeddings of texts", run_embed},
      {"imatrix", "collect an importance matrix over a text, for quantize --imatrix", run_imatrix},
      {"compare", "KL divergence, top-1 agreement, perplexity, memory and speed against a base model", run_compare},
      {"tokenize", "text to token ids with a model's tokenizer", run_tokenize},
      {"detokenize", "token ids back to text", run_detokenize},
      {"gen-model", "write a random-weight model with a real model's shapes", run_gen_model},
  };
  return verbs;
}

}  // namespace hearth::cli
