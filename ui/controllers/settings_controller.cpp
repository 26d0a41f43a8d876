#include "controllers/settings_controller.h"

#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <thread>

namespace hearth::ui {
namespace {

struct Preset {
  const char* name;
  const char* prompt;
};

// Built-in system prompt presets; names are translated, prompts stay as
// written because the model reads them.
constexpr Preset kPresets[] = {
    {QT_TRANSLATE_NOOP("SettingsController", "Helpful assistant"),
     "You are a helpful assistant."},
    {QT_TRANSLATE_NOOP("SettingsController", "Concise"),
     "You are a helpful assistant. Answer briefly and precisely."},
    {QT_TRANSLATE_NOOP("SettingsController", "Programmer"),
     "You are an expert programmer. Answer with working code in fenced Markdown blocks "
     "and explain briefly."},
    {QT_TRANSLATE_NOOP("SettingsController", "Storyteller"),
     "You are a warm storyteller who writes short stories for children."},
};

settings::KvCacheType parse_kv(const QString& v, settings::KvCacheType fallback) {
  if (v == QLatin1String("f16")) return settings::KvCacheType::F16;
  if (v == QLatin1String("q8_0")) return settings::KvCacheType::Q8_0;
  return fallback;
}

settings::OverflowPolicy parse_overflow(const QString& v, settings::OverflowPolicy fallback) {
  if (v == QLatin1String("stop")) return settings::OverflowPolicy::Stop;
  if (v == QLatin1String("evict")) return settings::OverflowPolicy::Evict;
  if (v == QLatin1String("summarize")) return settings::OverflowPolicy::Summarize;
  return fallback;
}

settings::Theme parse_theme(const QString& v, settings::Theme fallback) {
  if (v == QLatin1String("system")) return settings::Theme::System;
  if (v == QLatin1String("light")) return settings::Theme::Light;
  if (v == QLatin1String("dark")) return settings::Theme::Dark;
  return fallback;
}

}  // namespace

SettingsController::SettingsController(settings::Settings initial, PersistFn persist,
                                       const MemorySizer* sizer, QObject* parent)
    : QObject(parent),
      settings_(settings::clamp_settings(std::move(initial))),
      persist_(std::move(persist)),
      sizer_(sizer),
      available_bytes_(available_ram_bytes()) {
  recompute_memory();
}

void SettingsController::commit(settings::Settings next) {
  next = settings::clamp_settings(std::move(next));
  if (next == settings_) return;
  const bool reload_before = needsReload();
  const bool load_changed = !(next.load == settings_.load) || !(next.local_api == settings_.local_api);
  settings_ = std::move(next);
  if (persist_) persist_(settings_);
  emit changed();
  if (load_changed) recompute_memory();
  if (reload_before != needsReload()) emit needsReloadChanged();
}

void SettingsController::recompute_memory() {
  if (!available_pinned_) available_bytes_ = available_ram_bytes();
  breakdown_ = (shape_ && sizer_) ? sizer_->estimate(*shape_, settings_.load.context_length,
                                                     settings_.load.kv_cache_type)
                                  : MemoryBreakdown{};
  // Each request slot of the local API holds its own KV for its context.
  const auto& api = settings_.local_api;
  api_kv_bytes_ = (api.enabled && shape_ && sizer_)
                      ? sizer_->estimate(*shape_, api.context_length, settings_.load.kv_cache_type).kv_bytes *
                            static_cast<uint64_t>(api.parallel)
                      : 0;
  // A draft model's weights come on top, and once it has been loaded (its
  // shape known) its KV cache: F16 at the chat's context, as the engine's
  // draft session keeps it. Before that, its file's size alone.
  const auto& spec = settings_.load.speculation;
  draft_bytes_ = 0;
  if (shape_ && spec.mode == settings::SpeculationMode::DraftModel && !spec.draft_model_path.empty()) {
    const QString path = QString::fromStdString(spec.draft_model_path);
    const QFileInfo draft(path);
    if (draft_shape_ && sizer_ && path == draft_path_) {
      draft_bytes_ = draft_shape_->weights_bytes +
                     sizer_->estimate(*draft_shape_, settings_.load.context_length, settings::KvCacheType::F16).kv_bytes;
    } else if (draft.isFile()) {
      draft_bytes_ = static_cast<uint64_t>(draft.size());
    }
  }
  emit memoryChanged();
}

void SettingsController::setLocalApi(const settings::LocalApiSettings& api) {
  settings::Settings next = settings_;
  next.local_api = api;
  commit(std::move(next));
}

void SettingsController::setSpeculation(const settings::SpeculationSettings& speculation) {
  settings::Settings next = settings_;
  next.load.speculation = speculation;
  commit(std::move(next));
}

void SettingsController::set_last_model_path(const QString& path) {
  settings::Settings next = settings_;
  next.last_model_path = path.toStdString();
  commit(std::move(next));
}

void SettingsController::set_remote_endpoints(std::vector<settings::RemoteEndpointSettings> endpoints) {
  settings::Settings next = settings_;
  next.remote_endpoints = std::move(endpoints);
  commit(std::move(next));
}

void SettingsController::set_auto_model(const settings::AutoModelSettings& auto_model) {
  settings::Settings next = settings_;
  next.auto_model = auto_model;
  commit(std::move(next));
}

void SettingsController::set_quality_floor(settings::QualityFloorSettings floor) {
  settings::Settings next = settings_;
  next.quality_floor = floor;
  commit(std::move(next));
}

void SettingsController::set_loaded_model(std::optional<ModelShape> shape, int trained_context,
                                          std::optional<settings::LoadSettings> loaded_with) {
  const bool reload_before = needsReload();
  shape_ = shape;
  trained_context_ = trained_context;
  loaded_with_ = std::move(loaded_with);
  recompute_memory();
  if (reload_before != needsReload()) emit needsReloadChanged();
}

void SettingsController::set_loaded_draft(std::optional<ModelShape> shape, const QString& path) {
  draft_shape_ = std::move(shape);
  draft_path_ = draft_shape_ ? path : QString();
  recompute_memory();
}

void SettingsController::set_available_bytes_for_testing(uint64_t bytes) {
  available_pinned_ = true;
  available_bytes_ = bytes;
  recompute_memory();
}

QString SettingsController::systemPrompt() const {
  return QString::fromStdString(settings_.system_prompt);
}
void SettingsController::setSystemPrompt(const QString& v) {
  settings::Settings n = settings_;
  n.system_prompt = v.toStdString();
  commit(std::move(n));
}
void SettingsController::setTemperature(double v) {
  settings::Settings n = settings_;
  n.sampling.temperature = v;
  commit(std::move(n));
}
void SettingsController::setTopK(int v) {
  settings::Settings n = settings_;
  n.sampling.top_k = v;
  commit(std::move(n));
}
void SettingsController::setTopP(double v) {
  settings::Settings n = settings_;
  n.sampling.top_p = v;
  commit(std::move(n));
}
void SettingsController::setMinP(double v) {
  settings::Settings n = settings_;
  n.sampling.min_p = v;
  commit(std::move(n));
}
void SettingsController::setRepeatPenalty(double v) {
  settings::Settings n = settings_;
  n.sampling.repeat_penalty = v;
  commit(std::move(n));
}
void SettingsController::setSeed(qint64 v) {
  settings::Settings n = settings_;
  n.sampling.seed = v;
  commit(std::move(n));
}
void SettingsController::setContextLength(int v) {
  settings::Settings n = settings_;
  n.load.context_length = v;
  commit(std::move(n));
}
void SettingsController::setMemoryBudgetMib(int v) {
  settings::Settings n = settings_;
  n.load.memory_budget_mib = v;
  commit(std::move(n));
}
QString SettingsController::kvCacheType() const {
  return QString::fromLatin1(settings::to_string(settings_.load.kv_cache_type));
}
void SettingsController::setKvCacheType(const QString& v) {
  settings::Settings n = settings_;
  n.load.kv_cache_type = parse_kv(v, n.load.kv_cache_type);
  commit(std::move(n));
}
QString SettingsController::overflowPolicy() const {
  return QString::fromLatin1(settings::to_string(settings_.overflow_policy));
}
void SettingsController::setOverflowPolicy(const QString& v) {
  settings::Settings n = settings_;
  n.overflow_policy = parse_overflow(v, n.overflow_policy);
  commit(std::move(n));
}
void SettingsController::setThreads(int v) {
  settings::Settings n = settings_;
  n.load.threads = v;
  commit(std::move(n));
}
QString SettingsController::gpuDevice() const {
  return QString::fromStdString(settings_.load.gpu_device);
}
void SettingsController::setGpuDevice(const QString& v) {
  settings::Settings n = settings_;
  n.load.gpu_device = v.toStdString();
  commit(std::move(n));
}
void SettingsController::setGpuLayers(int v) {
  settings::Settings n = settings_;
  n.load.gpu_layers = v;
  commit(std::move(n));
}
QString SettingsController::theme() const {
  return QString::fromLatin1(settings::to_string(settings_.theme));
}
void SettingsController::setTheme(const QString& v) {
  settings::Settings n = settings_;
  n.theme = parse_theme(v, n.theme);
  commit(std::move(n));
}
void SettingsController::setFontPointSize(int v) {
  settings::Settings n = settings_;
  n.font_point_size = v;
  commit(std::move(n));
}
void SettingsController::setDocumentsEmbeddingModel(const QString& path) {
  settings::Settings n = settings_;
  n.documents.embedding_model_path = path.toStdString();
  commit(std::move(n));
}
void SettingsController::setResponseCache(bool v) {
  settings::Settings n = settings_;
  n.response_cache = v;
  commit(std::move(n));
}

int SettingsController::maxContext() const {
  // Beyond the trained context a model's quality collapses, so the slider
  // stops there when the model says what it was trained for.
  if (trained_context_ > 0) {
    return std::clamp(trained_context_, settings::SettingsLimits::kMinContext,
                      settings::SettingsLimits::kMaxContext);
  }
  return settings::SettingsLimits::kMaxContext;
}

int SettingsController::maxBudgetMib() const {
  const uint64_t ram_mib = available_bytes_ / (1024 * 1024);
  // Leave room to raise the budget past free memory (other apps may close),
  // but not so far that the slider is mostly unusable.
  const uint64_t cap = std::max<uint64_t>(ram_mib * 2, 8192);
  return static_cast<int>(std::min<uint64_t>(cap, settings::SettingsLimits::kMaxBudgetMib));
}

int SettingsController::hardwareThreads() const {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

QStringList SettingsController::presetNames() const {
  QStringList names;
  for (const Preset& p : kPresets) names << tr(p.name);
  return names;
}

void SettingsController::applyPreset(int index) {
  if (index < 0 || index >= static_cast<int>(std::size(kPresets))) return;
  setSystemPrompt(QString::fromUtf8(kPresets[index].prompt));
}

QString SettingsController::overflowExplanation(const QString& policy) const {
  if (policy == QLatin1String("stop")) {
    return tr("Stop replying when the context is full; you start a new conversation.");
  }
  if (policy == QLatin1String("evict")) {
    return tr("Drop the oldest turns to make room; the system prompt is always kept.");
  }
  if (policy == QLatin1String("summarize")) {
    return tr("Replace the oldest turns with a short summary written by the model.");
  }
  return {};
}

QString SettingsController::formatBytes(double bytes) const {
  return QLocale().formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeTraditionalFormat);
}

double SettingsController::budgetBytes() const {
  return static_cast<double>(settings_.load.memory_budget_mib) * 1024.0 * 1024.0;
}

bool SettingsController::overLimit() const {
  if (!shape_) return false;
  const double total = totalBytes();
  return total > budgetBytes() || (available_bytes_ > 0 && total > availableBytes());
}

QString SettingsController::memoryExplanation() const {
  if (!shape_) return tr("Load a model to see how much memory it needs.");
  const QString total = formatBytes(totalBytes());
  if (available_bytes_ > 0 && totalBytes() > availableBytes()) {
    return tr("Needs %1 but only %2 of memory is free. Lower the context length, use the "
              "Q8_0 cache type or close other applications.")
        .arg(total, formatBytes(availableBytes()));
  }
  if (totalBytes() > budgetBytes()) {
    return tr("Needs %1, more than your memory budget of %2. Lower the context length or "
              "raise the budget.")
        .arg(total, formatBytes(budgetBytes()));
  }
  return tr("Needs %1 of your %2 budget.").arg(total, formatBytes(budgetBytes()));
}

bool SettingsController::needsReload() const {
  return loaded_with_.has_value() && !(*loaded_with_ == settings_.load);
}

void SettingsController::resetToDefaults() {
  settings::Settings defaults;
  defaults.last_model_path = settings_.last_model_path;
  commit(std::move(defaults));
}

}  // namespace hearth::ui
