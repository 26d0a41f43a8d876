// The settings page's view model: every setting as a QML property, the live
// memory breakdown for the context and budget sliders, and whether a change
// needs a model reload.
#pragma once

#include <QObject>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <optional>

#include <hearth/settings/settings.h>
#include "engine/memory_sizer.h"

namespace hearth::ui {

class SettingsController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
  Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
  Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
  Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY changed)
  Q_PROPERTY(double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY changed)
  Q_PROPERTY(qint64 seed READ seed WRITE setSeed NOTIFY changed)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)
  Q_PROPERTY(int memoryBudgetMib READ memoryBudgetMib WRITE setMemoryBudgetMib NOTIFY changed)
  Q_PROPERTY(QString kvCacheType READ kvCacheType WRITE setKvCacheType NOTIFY changed)
  Q_PROPERTY(QString overflowPolicy READ overflowPolicy WRITE setOverflowPolicy NOTIFY changed)
  Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
  Q_PROPERTY(QString gpuDevice READ gpuDevice WRITE setGpuDevice NOTIFY changed)
  Q_PROPERTY(int gpuLayers READ gpuLayers WRITE setGpuLayers NOTIFY changed)
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)
  Q_PROPERTY(int fontPointSize READ fontPointSize WRITE setFontPointSize NOTIFY changed)
  // Repeated deterministic requests answered from the response cache.
  Q_PROPERTY(bool responseCache READ responseCache WRITE setResponseCache NOTIFY changed)

  Q_PROPERTY(int minContext READ minContext CONSTANT)
  Q_PROPERTY(int maxContext READ maxContext NOTIFY memoryChanged)
  Q_PROPERTY(int minBudgetMib READ minBudgetMib CONSTANT)
  Q_PROPERTY(int maxBudgetMib READ maxBudgetMib CONSTANT)
  Q_PROPERTY(int hardwareThreads READ hardwareThreads CONSTANT)
  Q_PROPERTY(QStringList presetNames READ presetNames CONSTANT)

  Q_PROPERTY(bool hasModelShape READ hasModelShape NOTIFY memoryChanged)
  Q_PROPERTY(double weightsBytes READ weightsBytes NOTIFY memoryChanged)
  Q_PROPERTY(double kvBytes READ kvBytes NOTIFY memoryChanged)
  Q_PROPERTY(double scratchBytes READ scratchBytes NOTIFY memoryChanged)
  Q_PROPERTY(double totalBytes READ totalBytes NOTIFY memoryChanged)
  // The local API's KV slots (parallel x its context), when it is on.
  Q_PROPERTY(double apiKvBytes READ apiKvBytes NOTIFY memoryChanged)
  // Speculative decoding with a draft model: its weights (the file), loaded beside the model.
  Q_PROPERTY(double draftBytes READ draftBytes NOTIFY memoryChanged)
  Q_PROPERTY(double budgetBytes READ budgetBytes NOTIFY memoryChanged)
  Q_PROPERTY(double availableBytes READ availableBytes NOTIFY memoryChanged)
  Q_PROPERTY(bool overLimit READ overLimit NOTIFY memoryChanged)
  Q_PROPERTY(QString memoryExplanation READ memoryExplanation NOTIFY memoryChanged)
  Q_PROPERTY(bool needsReload READ needsReload NOTIFY needsReloadChanged)

 public:
  using PersistFn = std::function<void(const settings::Settings&)>;

  SettingsController(settings::Settings initial, PersistFn persist, const MemorySizer* sizer,
                     QObject* parent = nullptr);

  const settings::Settings& settings() const { return settings_; }
  void set_last_model_path(const QString& path);
  // The remote endpoints (Settings -> Backends); never their keys.
  void set_remote_endpoints(std::vector<settings::RemoteEndpointSettings> endpoints);
  void set_auto_model(const settings::AutoModelSettings& auto_model);
  // Compare levels' quality floor (clamped like every setting).
  void set_quality_floor(settings::QualityFloorSettings floor);
  // The model's shape and the settings it was loaded with (nullopt: no model).
  void set_loaded_model(std::optional<ModelShape> shape, int trained_context,
                        std::optional<settings::LoadSettings> loaded_with);
  // The draft model loaded beside it (its file and shape), or nullopt: while
  // the settings still name that file, the estimate counts its KV cache too.
  void set_loaded_draft(std::optional<ModelShape> shape, const QString& path);
  // Overrides MemAvailable (tests pin it so the red state is deterministic).
  void set_available_bytes_for_testing(uint64_t bytes);

  QString systemPrompt() const;
  void setSystemPrompt(const QString& v);
  double temperature() const { return settings_.sampling.temperature; }
  void setTemperature(double v);
  int topK() const { return settings_.sampling.top_k; }
  void setTopK(int v);
  double topP() const { return settings_.sampling.top_p; }
  void setTopP(double v);
  double minP() const { return settings_.sampling.min_p; }
  void setMinP(double v);
  double repeatPenalty() const { return settings_.sampling.repeat_penalty; }
  void setRepeatPenalty(double v);
  qint64 seed() const { return settings_.sampling.seed; }
  void setSeed(qint64 v);
  int contextLength() const { return settings_.load.context_length; }
  void setContextLength(int v);
  int memoryBudgetMib() const { return settings_.load.memory_budget_mib; }
  void setMemoryBudgetMib(int v);
  QString kvCacheType() const;
  void setKvCacheType(const QString& v);
  QString overflowPolicy() const;
  void setOverflowPolicy(const QString& v);
  int threads() const { return settings_.load.threads; }
  void setThreads(int v);
  QString gpuDevice() const;
  void setGpuDevice(const QString& v);
  int gpuLayers() const { return settings_.load.gpu_layers; }
  void setGpuLayers(int v);
  QString theme() const;
  void setTheme(const QString& v);
  int fontPointSize() const { return settings_.font_point_size; }
  void setFontPointSize(int v);
  bool responseCache() const { return settings_.response_cache; }
  void setResponseCache(bool v);
  // The Documents page's embedding model file (empty: none).
  void setDocumentsEmbeddingModel(const QString& path);

  int minContext() const { return settings::SettingsLimits::kMinContext; }
  int maxContext() const;
  int minBudgetMib() const { return settings::SettingsLimits::kMinBudgetMib; }
  int maxBudgetMib() const;
  int hardwareThreads() const;
  QStringList presetNames() const;

  bool hasModelShape() const { return shape_.has_value(); }
  double weightsBytes() const { return static_cast<double>(breakdown_.weights_bytes); }
  double kvBytes() const { return static_cast<double>(breakdown_.kv_bytes); }
  double scratchBytes() const { return static_cast<double>(breakdown_.scratch_bytes); }
  double totalBytes() const { return static_cast<double>(breakdown_.total() + api_kv_bytes_ + draft_bytes_); }
  double apiKvBytes() const { return static_cast<double>(api_kv_bytes_); }
  double draftBytes() const { return static_cast<double>(draft_bytes_); }
  // Settings -> Local API (persisted like the rest; its slots join the estimate).
  void setSpeculation(const settings::SpeculationSettings& speculation);
  void setLocalApi(const settings::LocalApiSettings& api);
  double budgetBytes() const;
  double availableBytes() const { return static_cast<double>(available_bytes_); }
  bool overLimit() const;
  QString memoryExplanation() const;
  bool needsReload() const;

  Q_INVOKABLE void applyPreset(int index);
  Q_INVOKABLE QString overflowExplanation(const QString& policy) const;
  Q_INVOKABLE QString formatBytes(double bytes) const;
  // Asks the app to reload the model with the current settings.
  Q_INVOKABLE void applyAndReload() { emit reloadRequested(); }
  Q_INVOKABLE void resetToDefaults();

 signals:
  void changed();
  void memoryChanged();
  void needsReloadChanged();
  void reloadRequested();

 private:
  void commit(settings::Settings next);
  void recompute_memory();

  settings::Settings settings_;
  PersistFn persist_;
  const MemorySizer* sizer_;
  std::optional<ModelShape> shape_;
  std::optional<ModelShape> draft_shape_;
  QString draft_path_;
  int trained_context_ = 0;
  std::optional<settings::LoadSettings> loaded_with_;
  MemoryBreakdown breakdown_;
  uint64_t api_kv_bytes_ = 0;
  uint64_t draft_bytes_ = 0;
  uint64_t available_bytes_ = 0;
  bool available_pinned_ = false;
};

}  // namespace hearth::ui
