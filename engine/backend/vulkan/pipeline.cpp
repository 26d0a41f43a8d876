#include "hearth/engine/backend/vulkan/pipeline.h"

#include "vk_struct.h"

#include <fmt/format.h>
#include <hearth/core/file_io.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace hearth::vulkan {

std::string PipelineCache::validate_header(std::span<const std::byte> blob,
                                           const VkPhysicalDeviceProperties& props) {
  // VkPipelineCacheHeaderVersionOne: u32 headerSize, u32 version, u32 vendorID,
  // u32 deviceID, u8 pipelineCacheUUID[16] (32 bytes).
  constexpr size_t kHeader = 16 + VK_UUID_SIZE;
  if (blob.size() < kHeader) return fmt::format("{} bytes, shorter than the 32-byte header", blob.size());
  uint32_t fields[4];
  std::memcpy(fields, blob.data(), sizeof(fields));
  if (fields[0] < kHeader || fields[0] > blob.size()) return fmt::format("header size {} is invalid", fields[0]);
  if (fields[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return fmt::format("header version {}", fields[1]);
  if (fields[2] != props.vendorID || fields[3] != props.deviceID) {
    return fmt::format("made for device {:04x}:{:04x}, this is {:04x}:{:04x}", fields[2], fields[3],
                       props.vendorID, props.deviceID);
  }
  if (std::memcmp(blob.data() + 16, props.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
    return "made by another driver version (cache UUID differs)";
  }
  return {};
}

Result<std::unique_ptr<PipelineCache>> PipelineCache::open(const VulkanContext& ctx, std::string path) {
  std::unique_ptr<PipelineCache> c(new PipelineCache(ctx, std::move(path)));
  std::vector<std::byte> blob;
  std::error_code missing;
  if (!c->path_.empty() && std::filesystem::exists(c->path_, missing)) {
    // Bounded, and never a FIFO or a device: the path comes from settings.
    constexpr uint64_t kCacheFileLimit = uint64_t{256} << 20;
    auto bytes = read_regular_file(c->path_, kCacheFileLimit, "pipeline cache files");
    if (bytes.ok()) {
      blob.resize(bytes->size());
      if (!bytes->empty()) std::memcpy(blob.data(), bytes->data(), bytes->size());
    }
    {
      const std::string why = bytes.ok() ? validate_header(blob, ctx.properties()) : bytes.error().message;
      if (why.empty()) {
        c->load_ = CacheLoad::Loaded;
      } else {
        c->load_ = CacheLoad::IgnoredInvalid;
        c->load_message_ = fmt::format("pipeline cache '{}' ignored: {}", c->path_, why);
        ctx.logger().warn("Vulkan: {}", c->load_message_);
        blob.clear();
      }
    }
  }
  auto info = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  info.initialDataSize = blob.size();
  info.pInitialData = blob.empty() ? nullptr : blob.data();
  VkResult r = vkCreatePipelineCache(ctx.device(), &info, nullptr, &c->cache_);
  if (r != VK_SUCCESS && !blob.empty()) {
    // The driver refused data that passed the header check: start empty.
    c->load_ = CacheLoad::IgnoredInvalid;
    c->load_message_ = fmt::format("pipeline cache '{}' ignored: the driver rejected it", c->path_);
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    r = vkCreatePipelineCache(ctx.device(), &info, nullptr, &c->cache_);
  }
  if (r != VK_SUCCESS) return vk_error(r, "vkCreatePipelineCache");
  return c;
}

PipelineCache::~PipelineCache() {
  if (cache_) vkDestroyPipelineCache(ctx_.device(), cache_, nullptr);
}

Status PipelineCache::save() const {
  if (path_.empty()) return {};
  size_t size = 0;
  VkResult r = vkGetPipelineCacheData(ctx_.device(), cache_, &size, nullptr);
  if (r != VK_SUCCESS) return vk_error(r, "vkGetPipelineCacheData");
  std::vector<char> data(size);
  r = vkGetPipelineCacheData(ctx_.device(), cache_, &size, data.data());
  if (r != VK_SUCCESS) return vk_error(r, "vkGetPipelineCacheData");
  return write_file_atomically(path_, std::string_view(data.data(), size));
}

PipelineSet::~PipelineSet() {
  const VkDevice dev = ctx_.device();
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(dev, p->pipeline, nullptr);
  for (auto& [key, l] : layouts_) vkDestroyPipelineLayout(dev, l, nullptr);
  for (auto& [key, l] : set_layouts_) vkDestroyDescriptorSetLayout(dev, l, nullptr);
}

Result<VkDescriptorSetLayout> PipelineSet::set_layout(uint32_t bindings) {
  if (auto it = set_layouts_.find(bindings); it != set_layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  auto info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  info.bindingCount = bindings;
  info.pBindings = b.data();
  VkDescriptorSetLayout layout;
  const VkResult r = vkCreateDescriptorSetLayout(ctx_.device(), &info, nullptr, &layout);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateDescriptorSetLayout");
  set_layouts_[bindings] = layout;
  return layout;
}

Result<const Pipeline*> PipelineSet::get(ShaderId shader, const PipelineLayoutDesc& desc, Specialization specialization) {
  const auto key = std::make_pair(shader, specialization);
  const uint32_t workgroup_size = specialization.workgroup_size;
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  const auto& info = shaders::shader_info(shader);
  if (workgroup_size == 0 || workgroup_size > ctx_.limits().max_workgroup_size ||
      workgroup_size > ctx_.limits().max_workgroup_invocations) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan: workgroup size {} for {} exceeds the device limit {}",
                                                          workgroup_size, info.name, ctx_.limits().max_workgroup_size));
  }
  if (desc.push_constant_bytes > ctx_.limits().max_push_constants) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan: {} needs {} push-constant bytes", info.name,
                                                          desc.push_constant_bytes));
  }

  auto p = std::make_unique<Pipeline>();
  p->desc = desc;
  p->workgroup_size = workgroup_size;
  p->shader = shader;
  HEARTH_TRY(p->set_layout, set_layout(desc.storage_buffers));
  const auto layout_key = std::make_pair(desc.storage_buffers, desc.push_constant_bytes);
  if (auto it = layouts_.find(layout_key); it != layouts_.end()) {
    p->layout = it->second;
  } else {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
    auto li = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    li.setLayoutCount = 1;
    li.pSetLayouts = &p->set_layout;
    li.pushConstantRangeCount = desc.push_constant_bytes > 0 ? 1 : 0;
    li.pPushConstantRanges = &range;
    const VkResult r = vkCreatePipelineLayout(ctx_.device(), &li, nullptr, &p->layout);
    if (r != VK_SUCCESS) return vk_error(r, "vkCreatePipelineLayout");
    layouts_[layout_key] = p->layout;
  }

  auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  mi.codeSize = info.word_count * sizeof(uint32_t);
  mi.pCode = info.words;
  VkShaderModule module;
  VkResult r = vkCreateShaderModule(ctx_.device(), &mi, nullptr, &module);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateShaderModule");

  const uint32_t values[3] = {specialization.workgroup_size, specialization.param, specialization.param2};
  const VkSpecializationMapEntry entries[3] = {
      {0, 0, sizeof(uint32_t)}, {1, sizeof(uint32_t), sizeof(uint32_t)}, {2, 2 * sizeof(uint32_t), sizeof(uint32_t)}};
  VkSpecializationInfo spec{3, entries, sizeof(values), values};
  auto ci = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  ci.stage = vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &spec;
  ci.layout = p->layout;
  r = vkCreateComputePipelines(ctx_.device(), cache_ ? cache_->handle() : VK_NULL_HANDLE, 1, &ci, nullptr,
                               &p->pipeline);
  vkDestroyShaderModule(ctx_.device(), module, nullptr);
  if (r != VK_SUCCESS) {
    return make_error(ErrorCode::Internal, fmt::format("Vulkan: creating the {} pipeline failed: {}", info.name,
                                                       to_string(r)));
  }
  const Pipeline* out = p.get();
  pipelines_[key] = std::move(p);
  return out;
}

}  // namespace hearth::vulkan
