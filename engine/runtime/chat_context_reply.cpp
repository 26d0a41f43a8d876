// ChatContext: generating the reply, and the background summary it pre-empts.
#include <hearth/engine/runtime/chat_context.h>
#include <hearth/engine/tokenizer/stream_decoder.h>

#include <algorithm>

namespace hearth::runtime {
namespace {

// A token that structures the reply rather than being part of its text:
// control tokens, and harmony's <|...|> markers whatever attribute the
// converter gave them.
bool is_marker(chat::ReasoningSyntax syntax, const tokenizer::TokenData& token) {
  using tokenizer::TokenAttr;
  if (tokenizer::has_any(token.attr, TokenAttr::Control)) return true;
  return syntax == chat::ReasoningSyntax::Harmony && tokenizer::has_any(token.attr, TokenAttr::UserDefined) &&
         token.text.starts_with("<|") && token.text.ends_with("|>");
}

}  // namespace

void ChatContext::begin_reply() { conv_->begin_turn(); }

void ChatContext::end_reply(const std::string& shown, const std::string& reasoning, size_t reply_tokens_in_context) {
  const size_t before = conv_->turns().size();
  conv_->end_turn();
  if (conv_->turns().size() > before) turns_[conv_->turns().back().id] = reply_turn_;
  // The transcript holds the reply's tokens as they are in the context: the
  // last sampled token was never decoded (it ended the reply, or the limit
  // came), so the next request's rendering appends it with the template's
  // end of turn, and a tail rendered differently is rolled back.
  const auto& ctx = parts_.session->context();
  const size_t n = std::min(reply_tokens_in_context, ctx.size());
  messages_.push_back({"assistant", shown, {}, reasoning});
  produced_.insert(produced_.end(), ctx.end() - static_cast<std::ptrdiff_t>(n), ctx.end());
  if (policy_ == OverflowPolicy::Summarize && parts_.can_shift && !conv_->turns().empty()) {
    // The next turn is expected to be about as long as this one.
    const auto& t = conv_->turns().back();
    if (conv_->summary_due(t.end - t.begin)) {
      // Starting only sets the job up (no compute); a job that cannot start
      // (no room, turns too short) leaves the limit to evict.
      auto job = conv_->start_summary();
      if (job.ok() && *job) {
        summary_ = std::move(job).value();
        summary_wanted_ = true;
      }
    }
  }
}

Result<ChatReply> ChatContext::reply(const ChatRequest& request, const ReplyStreams& streams,
                                     const Cancellation& cancel) {
  const TextFn& on_text = streams.on_text;
  const ChatEventFn& on_event = streams.on_event;
  Session& session = *parts_.session;
  const int64_t room = reply_room(request.options.max_tokens);
  // A reply pre-empts background work (a summary in progress).
  if (auto st = preempt(room, on_event, cancel); !st.ok()) {
    forget();
    return st.error();
  }
  auto prepared = prepare(request, room, on_event, cancel);
  ChatReply out;
  if (!prepared.ok()) {
    // The context is in an unknown state; the next request starts over.
    forget();
    return prepared.error();
  }
  out.prefix_restored_tokens = restored_from_disk_;
  if (!prepared->stopped.empty()) {
    forget();
    out.stopped = std::move(prepared->stopped);
    out.result.reason = StopReason::ContextFull;
    return out;
  }

  GenerateOptions options = request.options;
  options.max_tokens = static_cast<int32_t>(room);
  if (options.end_of_generation.empty()) options.end_of_generation = parts_.format->end_of_generation();
  // Pieces go out only as whole UTF-8 characters (a character split across
  // tokens is held back until complete), and a reply starts at its first
  // visible character.
  const tokenizer::Tokenizer& tok = parts_.format->tokenizer();
  tokenizer::StreamDecoder stream(tok);
  // Reasoning goes its own way; the answer's text is what stop strings and
  // the caller see.
  const chat::ReasoningStyle& style = parts_.format->reasoning();
  chat::ReasoningSplitter splitter(style.syntax, style.prompt_opens_reasoning);
  std::vector<chat::ReasoningSplitter::Piece> pieces;
  auto answer_of = [&]() {
    std::string answer;
    for (auto& p : pieces) {
      if (!p.reasoning) {
        answer.append(p.text);
        continue;
      }
      out.reasoning.append(p.text);
      if (streams.on_reasoning) streams.on_reasoning(p.text);
    }
    pieces.clear();
    return answer;
  };
  auto decode = [&](int32_t t) {
    const auto& vocab = tok.vocab();
    if (vocab.valid(t) && is_marker(style.syntax, vocab.tokens[static_cast<size_t>(t)])) {
      splitter.push_control(vocab.tokens[static_cast<size_t>(t)].text, pieces);
    } else {
      splitter.push_text(stream.push(t), pieces);
    }
    return answer_of();
  };
  bool first_piece = true;
  auto show = [&](std::string_view text) {
    if (first_piece) {
      while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
      if (text.empty()) return;
      first_piece = false;
    }
    out.shown.append(text);
    if (on_text) on_text(text);
  };
  const size_t context_before = session.context().size() + prepared->prompt.size();
  begin_reply();
  auto result = session.generate(
      prepared->prompt, options, decode,
      [&](const TokenEvent& e) { show(e.text); }, cancel);
  if (!result.ok()) {
    forget();
    return result.error();
  }
  splitter.push_text(stream.flush(), pieces);
  splitter.finish(pieces);
  if (const std::string tail = answer_of(); !tail.empty()) show(tail);
  while (!out.reasoning.empty() && std::string_view(" \n\t\r").find(out.reasoning.back()) != std::string_view::npos) {
    out.reasoning.pop_back();
  }
  const size_t context_after = session.context().size();
  end_reply(out.shown, out.reasoning, context_after > context_before ? context_after - context_before : 0);
  out.result = std::move(result).value();
  return out;
}

Status ChatContext::background_step(const ChatEventFn& on_event, const Cancellation& cancel) {
  if (!summary_wanted_ || !conv_) return {};
  if (!summary_) {
    // Pre-empted by a reply that did not make a summary due again.
    summary_wanted_ = false;
    return {};
  }
  if (cancel.requested()) return {};
  auto done = summary_->step();
  if (!done.ok()) {
    summary_.reset();
    summary_wanted_ = false;
    return done.error();
  }
  if (!*done) return {};
  auto finished = summary_->finish();
  summary_.reset();
  summary_wanted_ = false;
  if (!finished.ok()) return finished;
  forward_events(on_event, nullptr);
  return {};
}

Status ChatContext::preempt(int64_t reply_room, const ChatEventFn& on_event, const Cancellation& cancel) {
  if (!summary_) return {};
  auto drop = [&] {
    summary_.reset();
    summary_wanted_ = false;
  };
  if (!summary_->done() && !conv_->turns().empty()) {
    // When the next exchange (about as long as the last, plus the reply) will
    // not fit without the summary, make_room would have to summarise from
    // scratch: finishing the steps left is the shorter wait.
    const auto& t = conv_->turns().back();
    if (t.end + (t.end - t.begin) + reply_room > parts_.session->n_ctx()) {
      while (true) {
        if (cancel.requested()) {
          drop();  // gives the cache tail back
          return make_error(ErrorCode::Cancelled, "the summary was cancelled");
        }
        auto done = summary_->step();
        if (!done.ok()) {
          drop();
          return done.error();
        }
        if (*done) break;
      }
    }
  }
  if (summary_->done()) {
    auto finished = summary_->finish();
    drop();
    HEARTH_CHECK(finished);
    forward_events(on_event, nullptr);
    return {};
  }
  // Dropping the job gives the cache tail back; it starts over after the
  // reply when that reply leaves a summary due.
  drop();
  return {};
}

}  // namespace hearth::runtime
