#include "controllers/speculation_controller.h"

#include <hearth/engine/tokenizer/vocab_match.h>
#include <hearth/models/model_registry.h>

#include <QFileInfo>
#include <QPointer>
#include <QThreadPool>
#include <QVariantMap>

#include <atomic>

namespace hearth::ui {

struct SpeculationController::Scan {
  std::atomic<uint64_t> generation{0};
};

namespace {

settings::SpeculationMode mode_of(const QString& text) {
  if (text == QLatin1String("off")) return settings::SpeculationMode::Off;
  if (text == QLatin1String("draft")) return settings::SpeculationMode::DraftModel;
  return settings::SpeculationMode::Ngram;
}

struct Found {
  QVariantList models;
  QString note;
};

// The models in `folder` that can draft for `target`: another file, smaller
// (a draft only pays when it is much cheaper), same vocabulary.
Found find_drafts(const QString& folder, const QString& target) {
  Found out;
  const std::filesystem::path target_path = target.toStdString();
  std::error_code ec;
  const auto target_size = std::filesystem::file_size(target_path, ec);
  int other_vocab = 0, larger = 0;
  for (const auto& m : models::ModelRegistry(folder.toStdString()).scan()) {
    if (std::filesystem::equivalent(m.path, target_path, ec)) continue;
    if (!ec && m.size_bytes >= target_size) {
      ++larger;
      continue;
    }
    if (!tokenizer::check_draft_token_files(target_path, m.path).ok()) {
      ++other_vocab;
      continue;
    }
    QVariantMap entry;
    entry.insert(QStringLiteral("name"), QFileInfo(QString::fromStdString(m.path.string())).completeBaseName());
    entry.insert(QStringLiteral("path"), QString::fromStdString(m.path.string()));
    entry.insert(QStringLiteral("sizeBytes"), static_cast<double>(m.size_bytes));
    out.models.append(entry);
  }
  QStringList left_out;
  if (other_vocab > 0) {
    left_out << SpeculationController::tr("%n with another vocabulary", nullptr, other_vocab);
  }
  if (larger > 0) left_out << SpeculationController::tr("%n not smaller than the model", nullptr, larger);
  if (out.models.isEmpty()) {
    out.note = SpeculationController::tr("No downloaded model can draft for this one.");
  }
  if (!left_out.isEmpty()) {
    out.note += (out.note.isEmpty() ? QString() : QStringLiteral(" ")) +
                SpeculationController::tr("Left out: %1.").arg(left_out.join(QStringLiteral(", ")));
  }
  return out;
}

}  // namespace

SpeculationController::SpeculationController(SettingsController* settings, ModelController* model, QString models_dir,
                                             QObject* parent)
    : QObject(parent),
      settings_(settings),
      model_(model),
      models_dir_(std::move(models_dir)),
      scan_(std::make_shared<Scan>()) {
  connect(settings_, &SettingsController::changed, this, &SpeculationController::settingsChanged);
  connect(model_, &ModelController::stateChanged, this, [this] {
    emit statusChanged();
    emit gpuChanged();  // the loaded model's backend may name a GPU
    refreshDraftModels();
  });
  refreshDraftModels();
}

SpeculationController::~SpeculationController() { ++scan_->generation; }

QString SpeculationController::mode() const {
  return QString::fromLatin1(settings::to_string(settings_->settings().load.speculation.mode));
}
QString SpeculationController::draftModelPath() const {
  return QString::fromStdString(settings_->settings().load.speculation.draft_model_path);
}
int SpeculationController::draftMax() const { return settings_->settings().load.speculation.draft_max; }

void SpeculationController::update(const settings::SpeculationSettings& next) { settings_->setSpeculation(next); }

void SpeculationController::setMode(const QString& m) {
  auto next = settings_->settings().load.speculation;
  next.mode = mode_of(m);
  update(next);
}
void SpeculationController::setDraftModelPath(const QString& path) {
  auto next = settings_->settings().load.speculation;
  next.draft_model_path = path.toStdString();
  update(next);
}
void SpeculationController::setDraftMax(int n) {
  auto next = settings_->settings().load.speculation;
  next.draft_max = n;
  update(next);
}

QString SpeculationController::draftBackend() const {
  return QString::fromLatin1(settings::to_string(settings_->settings().load.speculation.draft_backend));
}

void SpeculationController::setDraftBackend(const QString& backend) {
  auto next = settings_->settings().load.speculation;
  if (backend == QLatin1String("vulkan")) {
    if (!gpuAvailable()) {
      // Refused: the view shows the setting as it stays.
      emit settingsChanged();
      return;
    }
    next.draft_backend = settings::DraftBackend::Vulkan;
  } else {
    next.draft_backend = settings::DraftBackend::Cpu;
  }
  update(next);
}

QString SpeculationController::gpuName() const {
  if (!gpu_device_.isEmpty()) return gpu_device_;
  // A model loaded on Vulkan shows a device is there even before (or
  // without) the probe's answer.
  if (model_->ready() && model_->info().backend.startsWith(QLatin1String("Vulkan: "))) {
    const QString backend = model_->info().backend;
    const qsizetype layers = backend.indexOf(QLatin1String(": "), 8);  // ": 1 of 2 layers on GPU, ..."
    return layers < 0 ? backend : backend.left(layers);
  }
  return {};
}

void SpeculationController::set_gpu_device(const QString& description) {
  if (description == gpu_device_) return;
  gpu_device_ = description;
  emit gpuChanged();
}

QString SpeculationController::status() const {
  return model_->ready() ? model_->info().speculation : QString();
}

void SpeculationController::refreshDraftModels() {
  const uint64_t generation = ++scan_->generation;
  if (!model_->ready()) {
    draft_models_.clear();
    note_ = tr("Load a model to see which downloaded models can draft for it.");
    scanning_ = false;
    emit draftModelsChanged();
    return;
  }
  scanning_ = true;
  emit draftModelsChanged();
  QPointer<SpeculationController> self(this);
  QThreadPool::globalInstance()->start(
      [self, scan = scan_, generation, folder = models_dir_, target = model_->info().path] {
        Found found = find_drafts(folder, target);
        if (scan->generation != generation) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, scan, generation, found = std::move(found)] {
              if (!self || scan->generation != generation) return;
              self->draft_models_ = found.models;
              self->note_ = found.note;
              self->scanning_ = false;
              emit self->draftModelsChanged();
            },
            Qt::QueuedConnection);
      });
}

}  // namespace hearth::ui
