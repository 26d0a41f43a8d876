// A recorded sequence of dispatches: record once per graph shape, submit once
// per token (one submit, one wait), re-record only when the shape changes.
// A barrier is inserted only when a dispatch touches a range that an earlier
// dispatch since the last barrier wrote (or writes what one read).
#pragma once

#include <hearth/engine/backend/vulkan/buffer.h>
#include <hearth/engine/backend/vulkan/pipeline.h>

#include <array>
#include <span>
#include <string>
#include <vector>

namespace hearth::vulkan {

enum class Access { Read, Write, ReadWrite };

struct Binding {
  BufferView view;
  Access access = Access::Read;
};

struct DispatchSize {
  uint32_t x = 1, y = 1, z = 1;
};

struct OpTiming {
  std::string label;
  double ms = 0;
};

// What a profiled sequence times: each dispatch, or the spans the recorder
// closes with close_span() (one per graph node, whatever it dispatches).
enum class SpanMode { PerDispatch, Explicit };

struct SequenceStats {
  uint32_t dispatches = 0;
  uint32_t barriers = 0;
  uint32_t submits = 0;
};

class CommandSequence {
 public:
  // `max_dispatches` sizes the descriptor pool and the timestamp query pool.
  static Result<std::unique_ptr<CommandSequence>> create(const VulkanContext& ctx, uint32_t max_dispatches,
                                                         ProfilingMode profiling);
  ~CommandSequence();
  CommandSequence(const CommandSequence&) = delete;
  CommandSequence& operator=(const CommandSequence&) = delete;

  // Starts a new recording, dropping the previous one.
  Status begin(SpanMode spans = SpanMode::PerDispatch);
  Status dispatch(const Pipeline& pipeline, std::span<const Binding> bindings, const void* push,
                  uint32_t push_bytes, DispatchSize groups, std::string_view label);
  // Copies between buffers inside the sequence (tracked like a dispatch).
  Status copy(const BufferView& src, const BufferView& dst);
  // SpanMode::Explicit: ends the span that began at the previous
  // close_span() (or at begin()) and labels it. A no-op without profiling.
  Status close_span(std::string_view label);
  Status end();
  // Runs the recorded sequence and waits. May be called any number of times
  // without recording again; inputs in host-visible buffers may change between runs.
  Status submit_and_wait();

  bool recorded() const { return recorded_; }
  const SequenceStats& stats() const { return stats_; }
  // GPU time of each span of the last submit (empty when profiling is off).
  // Spans are delimited by timestamps taken when all earlier work is done,
  // so they never overlap and their sum is at most the submit's duration.
  std::vector<OpTiming> timings() const;

 private:
  explicit CommandSequence(const VulkanContext& ctx) : ctx_(ctx) {}
  void track(std::span<const Binding> bindings);
  Status write_span_end(std::string_view label);

  const VulkanContext& ctx_;
  ProfilingMode profiling_ = ProfilingMode::Off;
  uint32_t max_dispatches_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool recorded_ = false;
  std::vector<BufferView> pending_writes_;  // written since the last barrier
  std::vector<BufferView> pending_reads_;   // read since the last barrier
  SpanMode spans_ = SpanMode::PerDispatch;
  std::vector<std::string> labels_;  // one per closed span
  SequenceStats stats_;
};

}  // namespace hearth::vulkan
