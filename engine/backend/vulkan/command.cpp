#include "hearth/engine/backend/vulkan/command.h"

#include "vk_struct.h"

#include <fmt/format.h>

#include <algorithm>

namespace hearth::vulkan {

Result<std::unique_ptr<CommandSequence>> CommandSequence::create(const VulkanContext& ctx, uint32_t max_dispatches,
                                                                 ProfilingMode profiling) {
  std::unique_ptr<CommandSequence> s(new CommandSequence(ctx));
  s->max_dispatches_ = max_dispatches;
  s->profiling_ = ctx.limits().timestamp_period_ns > 0 ? profiling : ProfilingMode::Off;
  const VkDevice dev = ctx.device();
  auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = ctx.queue_family();
  VkResult r = vkCreateCommandPool(dev, &pool, nullptr, &s->pool_);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateCommandPool");
  auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = s->pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  r = vkAllocateCommandBuffers(dev, &alloc, &s->cmd_);
  if (r != VK_SUCCESS) return vk_error(r, "vkAllocateCommandBuffers");
  auto fence = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  r = vkCreateFence(dev, &fence, nullptr, &s->fence_);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateFence");
  // Shaders bind at most 8 storage buffers.
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8 * max_dispatches};
  auto dp = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dp.maxSets = max_dispatches;
  dp.poolSizeCount = 1;
  dp.pPoolSizes = &size;
  r = vkCreateDescriptorPool(dev, &dp, nullptr, &s->descriptors_);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateDescriptorPool");
  if (s->profiling_ == ProfilingMode::Timestamps) {
    auto q = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    q.queryType = VK_QUERY_TYPE_TIMESTAMP;
    q.queryCount = 2 * max_dispatches;
    r = vkCreateQueryPool(dev, &q, nullptr, &s->queries_);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreateQueryPool");
  }
  return s;
}

CommandSequence::~CommandSequence() {
  const VkDevice dev = ctx_.device();
  if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
  if (descriptors_) vkDestroyDescriptorPool(dev, descriptors_, nullptr);
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (pool_) vkDestroyCommandPool(dev, pool_, nullptr);
}

Status CommandSequence::begin(SpanMode spans) {
  vkResetCommandBuffer(cmd_, 0);
  vkResetDescriptorPool(ctx_.device(), descriptors_, 0);
  auto info = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  const VkResult r = vkBeginCommandBuffer(cmd_, &info);  // no ONE_TIME flag: it is resubmitted
  if (r != VK_SUCCESS) return vk_error(r, "vkBeginCommandBuffer");
  spans_ = spans;
  if (queries_) {
    vkCmdResetQueryPool(cmd_, queries_, 0, 2 * max_dispatches_);
    // Query 0 starts the first span; span i ends at query i + 1.
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
  }
  recording_ = true;
  recorded_ = false;
  pending_writes_.clear();
  pending_reads_.clear();
  labels_.clear();
  stats_ = {};
  return {};
}

void CommandSequence::track(std::span<const Binding> bindings) {
  bool hazard = false;
  for (const auto& b : bindings) {
    for (const auto& w : pending_writes_) hazard = hazard || b.view.overlaps(w);  // RAW, WAW
    if (b.access != Access::Read) {
      for (const auto& rd : pending_reads_) hazard = hazard || b.view.overlaps(rd);  // WAR
    }
  }
  if (hazard) {
    auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    pending_writes_.clear();
    pending_reads_.clear();
    stats_.barriers += 1;
  }
  for (const auto& b : bindings) {
    if (b.access != Access::Write) pending_reads_.push_back(b.view);
    if (b.access != Access::Read) pending_writes_.push_back(b.view);
  }
}

Status CommandSequence::dispatch(const Pipeline& pipeline, std::span<const Binding> bindings, const void* push,
                                 uint32_t push_bytes, DispatchSize groups, std::string_view label) {
  if (!recording_) return make_error(ErrorCode::Internal, "Vulkan: dispatch outside begin()/end()");
  if (stats_.dispatches >= max_dispatches_) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("Vulkan: more than {} dispatches in one sequence ({})", max_dispatches_, label));
  }
  if (bindings.size() != pipeline.desc.storage_buffers || push_bytes != pipeline.desc.push_constant_bytes) {
    return make_error(ErrorCode::Internal, fmt::format("Vulkan: {} expects {} bindings and {} push bytes", label,
                                                       pipeline.desc.storage_buffers, pipeline.desc.push_constant_bytes));
  }
  const auto& lim = ctx_.limits();
  for (const auto& b : bindings) {
    if (b.view.size > lim.max_storage_buffer_range || b.view.offset % lim.storage_offset_alignment != 0 ||
        b.view.offset + b.view.size > b.view.buffer->size()) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("Vulkan: {} binds {} bytes at offset {} of a {}-byte buffer (range limit {}, "
                                    "alignment {})",
                                    label, b.view.size, b.view.offset, b.view.buffer->size(),
                                    lim.max_storage_buffer_range, lim.storage_offset_alignment));
    }
  }
  if (groups.x > lim.max_workgroup_count[0] || groups.y > lim.max_workgroup_count[1] ||
      groups.z > lim.max_workgroup_count[2]) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("Vulkan: {} dispatches {}x{}x{} workgroups", label,
                                                            groups.x, groups.y, groups.z));
  }

  auto ai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  ai.descriptorPool = descriptors_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &pipeline.set_layout;
  VkDescriptorSet set;
  const VkResult r = vkAllocateDescriptorSets(ctx_.device(), &ai, &set);
  if (r != VK_SUCCESS) return vk_error(r, "vkAllocateDescriptorSets");
  std::array<VkDescriptorBufferInfo, 8> infos{};
  std::array<VkWriteDescriptorSet, 8> writes{};
  for (size_t i = 0; i < bindings.size(); ++i) {
    infos[i] = {bindings[i].view.buffer->handle(), bindings[i].view.offset, bindings[i].view.size};
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(ctx_.device(), static_cast<uint32_t>(bindings.size()), writes.data(), 0, nullptr);

  track(bindings);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes > 0) vkCmdPushConstants(cmd_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cmd_, groups.x, groups.y, groups.z);
  stats_.dispatches += 1;
  if (spans_ == SpanMode::PerDispatch) return write_span_end(label);
  return {};
}

// A BOTTOM_OF_PIPE timestamp is taken once every earlier command has
// finished, so consecutive timestamps bound each span without overlap even
// where the device runs independent dispatches concurrently.
Status CommandSequence::write_span_end(std::string_view label) {
  if (!queries_) return {};
  const auto q = static_cast<uint32_t>(labels_.size()) + 1;
  if (q >= 2 * max_dispatches_) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("Vulkan: more than {} profiled spans", 2 * max_dispatches_ - 1));
  }
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, q);
  labels_.emplace_back(label);
  return {};
}

Status CommandSequence::close_span(std::string_view label) {
  if (!recording_) return make_error(ErrorCode::Internal, "Vulkan: close_span outside begin()/end()");
  if (spans_ != SpanMode::Explicit) return {};
  return write_span_end(label);
}

Status CommandSequence::copy(const BufferView& src, const BufferView& dst) {
  if (!recording_) return make_error(ErrorCode::Internal, "Vulkan: copy outside begin()/end()");
  if (src.size > dst.size) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan: copy of {} bytes into {}", src.size, dst.size));
  }
  const Binding b[2] = {{src, Access::Read}, {dst, Access::Write}};
  track(b);
  VkBufferCopy region{src.offset, dst.offset, src.size};
  vkCmdCopyBuffer(cmd_, src.buffer->handle(), dst.buffer->handle(), 1, &region);
  return {};
}

Status CommandSequence::end() {
  if (!recording_) return make_error(ErrorCode::Internal, "Vulkan: end() without begin()");
  // Results become visible to the host (readback after the fence).
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  const VkResult r = vkEndCommandBuffer(cmd_);
  recording_ = false;
  if (r != VK_SUCCESS) return vk_error(r, "vkEndCommandBuffer");
  recorded_ = true;
  return {};
}

Status CommandSequence::submit_and_wait() {
  if (!recorded_) return make_error(ErrorCode::Internal, "Vulkan: submit of a sequence that was not recorded");
  auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  VkResult r = vkQueueSubmit(ctx_.queue(), 1, &submit, fence_);
  if (r != VK_SUCCESS) return vk_error(r, "vkQueueSubmit");
  r = vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX);
  vkResetFences(ctx_.device(), 1, &fence_);
  if (r != VK_SUCCESS) return vk_error(r, "vkWaitForFences");
  stats_.submits += 1;
  return {};
}

std::vector<OpTiming> CommandSequence::timings() const {
  std::vector<OpTiming> out;
  if (!queries_ || stats_.submits == 0 || labels_.empty()) return out;
  std::vector<uint64_t> ts(labels_.size() + 1);
  const VkResult r = vkGetQueryPoolResults(ctx_.device(), queries_, 0, static_cast<uint32_t>(ts.size()),
                                           ts.size() * sizeof(uint64_t), ts.data(), sizeof(uint64_t),
                                           VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return out;
  const double period_ms = ctx_.limits().timestamp_period_ns * 1e-6;
  for (size_t i = 0; i < labels_.size(); ++i) {
    out.push_back({labels_[i], static_cast<double>(ts[i + 1] - ts[i]) * period_ms});
  }
  return out;
}

}  // namespace hearth::vulkan
