#include "picker_view_model.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

#include <hearth/models/gguf_import.h>
#include <hearth/models/hf_files.h>
#include <hearth/models/machine_info.h>
#include <hearth/models/model_registry.h>

#include <algorithm>

namespace hearth::ui {
namespace {

QString key(const QString& id, const QString& quant) { return id + QLatin1Char(':') + quant; }

}  // namespace

QString verify_note(const models::CatalogVariant& v) {
  QString note;
  if (v.size_is_estimate) {
    note = PickerViewModel::tr("Size estimated from the parameter count; the exact size is verified at download. ");
  }
  if (v.sha256) return note + PickerViewModel::tr("Checked against the catalog's SHA-256 after download.");
  if (models::parse_hf_url(v.url)) {
    return note + PickerViewModel::tr("Checked after download against the SHA-256 Hugging Face publishes for the file.");
  }
  return note + PickerViewModel::tr("No SHA-256 is published for this file; it cannot be verified.");
}

PickerViewModel::PickerViewModel(QObject* parent)
    : QAbstractListModel(parent) {
  machine_.ram_available_bytes = models::available_ram_bytes().value_or(0);
  models_dir_ = QString::fromStdString(models::default_models_dir().string());
  auto catalog = models::load_builtin_catalog();
  if (catalog.ok()) {
    catalog_ = std::move(catalog).value();
    for (const auto& m : catalog_.models) entries_.push_back({m, false});
  } else {
    last_error_ = QString::fromStdString(catalog.error().message);
  }
  refresh_installed();
  rebuild_visible();
}

PickerViewModel::~PickerViewModel() {
  stop_verify_ = true;
  if (verify_thread_.joinable()) verify_thread_.join();
}

int PickerViewModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(visible_.size());
}

QHash<int, QByteArray> PickerViewModel::roleNames() const {
  return {{IdRole, "modelId"},
          {NameRole, "name"},
          {FamilyRole, "family"},
          {DescriptionRole, "description"},
          {LicenseRole, "license"},
          {ParametersRole, "parameters"},
          {ContextLengthRole, "contextLength"},
          {VariantsRole, "variants"},
          {RecommendedQuantRole, "recommendedQuant"},
          {BestFitRole, "bestFit"},
          {InstalledQuantsRole, "installedQuants"},
          {ImportedRole, "imported"},
          {ActiveParametersRole, "activeParameters"},
          {DraftModelRole, "draftModel"},
          {KindRole, "kind"}};
}

QVariant PickerViewModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || static_cast<size_t>(index.row()) >= visible_.size()) return {};
  const Entry& e = entries_[visible_[static_cast<size_t>(index.row())]];
  const auto& m = e.model;
  switch (role) {
    case IdRole: return QString::fromStdString(m.id);
    case NameRole: return QString::fromStdString(m.name);
    case FamilyRole: return QString::fromStdString(m.family);
    case DescriptionRole: return QString::fromStdString(m.description);
    case LicenseRole: return QString::fromStdString(m.license_name.empty() ? m.license : m.license_name);
    case ParametersRole: return static_cast<double>(m.parameters);
    case ContextLengthRole: return static_cast<int>(m.context_length);
    case VariantsRole: return variant_list(e);
    case RecommendedQuantRole:
    case BestFitRole: {
      const auto fits = models::fit_variants(catalog_, m, kv_, machine_);
      const auto best = models::recommend_variant(fits);
      if (!best) return role == BestFitRole ? QStringLiteral("no") : QString();
      return role == BestFitRole ? QString::fromLatin1(models::to_string(fits[*best].fit.kind))
                                 : QString::fromStdString(fits[*best].quant);
    }
    case InstalledQuantsRole: {
      QStringList quants;
      for (const auto& v : m.variants) {
        if (installed_.contains(key(QString::fromStdString(m.id), QString::fromStdString(v.quant))))
          quants << QString::fromStdString(v.quant);
      }
      return quants;
    }
    case ImportedRole: return e.imported;
    case ActiveParametersRole: return static_cast<double>(m.active_parameters);
    case KindRole: return m.embedding ? QStringLiteral("embedding") : QStringLiteral("chat");
    case DraftModelRole: {
      const models::CatalogModel* draft = m.draft_model.empty() ? nullptr : catalog_.find_model(m.draft_model);
      return draft ? QString::fromStdString(draft->name) : QString();
    }
    default: return {};
  }
}

QVariantList PickerViewModel::variant_list(const Entry& e) const {
  const auto& m = e.model;
  const QString id = QString::fromStdString(m.id);
  const auto fits = models::fit_variants(catalog_, m, kv_, machine_);
  const auto best = models::recommend_variant(fits);
  QVariantList out;
  for (size_t i = 0; i < m.variants.size(); ++i) {
    const auto& v = m.variants[i];
    const auto& fit = fits[i].fit;
    const QString quant = QString::fromStdString(v.quant);
    QVariantMap map;
    map[QStringLiteral("quant")] = quant;
    map[QStringLiteral("sizeBytes")] = static_cast<double>(v.size_bytes);
    map[QStringLiteral("sizeIsEstimate")] = v.size_is_estimate;
    map[QStringLiteral("verifyNote")] = verify_note(v);
    map[QStringLiteral("qualityNote")] = QString::fromStdString(v.quality_note);
    map[QStringLiteral("fits")] = QString::fromLatin1(models::to_string(fit.kind));
    map[QStringLiteral("gpuLayers")] = static_cast<int>(fit.gpu_layers);
    map[QStringLiteral("nLayer")] = static_cast<int>(fit.n_layer);
    map[QStringLiteral("weightsBytes")] = static_cast<double>(fit.estimate.weights_bytes);
    map[QStringLiteral("kvBytes")] = static_cast<double>(fit.estimate.kv_bytes);
    map[QStringLiteral("scratchBytes")] = static_cast<double>(fit.estimate.scratch_bytes);
    map[QStringLiteral("apiKvBytes")] = static_cast<double>(fit.estimate.api_kv_bytes);
    map[QStringLiteral("totalBytes")] = static_cast<double>(fit.estimate.total_bytes);
    // What each generated token reads (decode speed follows it): the whole
    // file for a dense model, the active experts' share for a mixture.
    map[QStringLiteral("bytesPerToken")] = static_cast<double>(fits[i].bytes_per_token);
    map[QStringLiteral("fitText")] = QString::fromStdString(models::describe_fit(fit));
    map[QStringLiteral("recommended")] = best && *best == i;
    map[QStringLiteral("installed")] = installed_.contains(key(id, quant));
    const auto d = downloads_ ? downloads_->status(key(id, quant)) : std::nullopt;
    map[QStringLiteral("state")] = d ? d->state : QString();
    if (d) {
      const double total = static_cast<double>(d->total_bytes.value_or(v.size_bytes));
      map[QStringLiteral("received")] = static_cast<double>(d->received_bytes);
      map[QStringLiteral("progress")] = total > 0 ? static_cast<double>(d->received_bytes) / total : 0.0;
      map[QStringLiteral("speed")] = d->bytes_per_second;
      map[QStringLiteral("eta")] = d->eta_seconds ? *d->eta_seconds : -1.0;
      map[QStringLiteral("error")] = d->error;
    }
    out.append(map);
  }
  return out;
}

void PickerViewModel::rebuild_visible() {
  beginResetModel();
  visible_.clear();
  const QString needle = filter_text_.trimmed();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& m = entries_[i].model;
    if (!needle.isEmpty()) {
      const QString hay = QString::fromStdString(m.name + " " + m.id + " " + m.family + " " + m.description);
      if (!hay.contains(needle, Qt::CaseInsensitive)) continue;
    }
    if (max_size_ > 0) {
      bool any_small = false;
      for (const auto& v : m.variants) any_small = any_small || v.size_bytes <= max_size_;
      if (!any_small) continue;
    }
    if (fits_only_) {
      const auto fits = models::fit_variants(catalog_, m, kv_, machine_);
      if (!models::recommend_variant(fits)) continue;
    }
    visible_.push_back(i);
  }
  endResetModel();
  emit countsChanged();
}

void PickerViewModel::refresh_installed() {
  installed_.clear();
  const models::ModelRegistry registry(models_dir_.toStdString());
  for (const auto& m : registry.scan()) {
    if (!m.catalog_id.empty()) {
      installed_.insert(key(QString::fromStdString(m.catalog_id), QString::fromStdString(m.quant)),
                        QString::fromStdString(m.path.string()));
    }
  }
  // Files that match a catalog URL's name count as installed too.
  for (const auto& e : entries_) {
    for (const auto& v : e.model.variants) {
      const QString path = destination_for(v);
      if (!e.imported && QFileInfo::exists(path))
        installed_.insert(key(QString::fromStdString(e.model.id), QString::fromStdString(v.quant)), path);
      if (e.imported && v.url.rfind("file://", 0) == 0)
        installed_.insert(key(QString::fromStdString(e.model.id), QString::fromStdString(v.quant)),
                          QString::fromStdString(v.url.substr(7)));
    }
  }
}

void PickerViewModel::rescanInstalled() {
  refresh_installed();
  if (!visible_.empty()) emit dataChanged(index(0), index(static_cast<int>(visible_.size()) - 1), {VariantsRole, InstalledQuantsRole});
}

void PickerViewModel::refresh_row(const QString& id) {
  for (size_t row = 0; row < visible_.size(); ++row) {
    if (QString::fromStdString(entries_[visible_[row]].model.id) == id) {
      const QModelIndex idx = index(static_cast<int>(row));
      emit dataChanged(idx, idx, {VariantsRole, InstalledQuantsRole});
    }
  }
}

const PickerViewModel::Entry* PickerViewModel::find(const QString& id) const {
  for (const auto& e : entries_) {
    if (QString::fromStdString(e.model.id) == id) return &e;
  }
  return nullptr;
}

QString PickerViewModel::destination_for(const models::CatalogVariant& v) const {
  return QDir(models_dir_).filePath(QString::fromStdString(models::ModelRegistry::file_name_for_url(v.url)));
}

QString PickerViewModel::installed_path(const QString& id, const QString& quant) const {
  return installed_.value(key(id, quant));
}

void PickerViewModel::set_error(const QString& message) {
  last_error_ = message;
  emit lastErrorChanged();
}

void PickerViewModel::clearError() { set_error({}); }

void PickerViewModel::setDownloads(ModelDownloads* downloads) {
  if (downloads == downloads_) return;
  if (downloads_) disconnect(downloads_, nullptr, this, nullptr);
  downloads_ = downloads;
  if (downloads_) {
    connect(downloads_, &ModelDownloads::changed, this, [this](const QString& k) { refresh_row(id_of(k)); });
    connect(downloads_, &ModelDownloads::failed, this, [this](const QString&, const QString& message) {
      set_error(message);
    });
    connect(downloads_, &ModelDownloads::notice, this, [this](const QString&, const QString& message) {
      set_error(message);
    });
    connect(downloads_, &ModelDownloads::finished, this, &PickerViewModel::on_download_finished);
  }
  emit downloadsChanged();
}

QString PickerViewModel::id_of(const QString& k) { return k.section(QLatin1Char(':'), 0, -2); }

void PickerViewModel::download(const QString& id, const QString& quant) {
  const Entry* e = find(id);
  const auto* v = e ? e->model.find_variant(quant.toStdString()) : nullptr;
  if (!v) {
    set_error(tr("No variant %1 of %2 in the catalog").arg(quant, id));
    return;
  }
  if (!downloads_) {
    set_error(tr("Downloads are not available here"));
    return;
  }
  if (downloads_->contains(key(id, quant))) {
    resume(id, quant);
    return;
  }
  DownloadOrder order;
  order.url = QUrl(QString::fromStdString(v->url));
  order.destination = destination_for(*v);
  if (v->sha256) order.expected_sha256 = QString::fromStdString(*v->sha256);
  if (!v->size_is_estimate) order.expected_size = v->size_bytes;
  downloads_->start(key(id, quant), order);
  refresh_row(id);
}

void PickerViewModel::on_download_finished(const QString& k, const QString& path, const QString& sha256) {
  const QString id = id_of(k);
  const QString quant = k.mid(id.size() + 1);
  const Entry* e = find(id);
  const auto* v = e ? e->model.find_variant(quant.toStdString()) : nullptr;
  models::InstalledModel installed;
  installed.path = path.toStdString();
  installed.catalog_id = id.toStdString();
  installed.quant = quant.toStdString();
  installed.source_url = v ? v->url : std::string();
  installed.sha256 = sha256.toStdString();
  (void)models::ModelRegistry(models_dir_.toStdString()).record(installed);
  refresh_installed();
  refresh_row(id);
  if (load_after_download_.take(k)) emit loadRequested(installed_path(id, quant), true);
}

void PickerViewModel::pause(const QString& id, const QString& quant) {
  if (downloads_) downloads_->pause(key(id, quant));
}

void PickerViewModel::resume(const QString& id, const QString& quant) {
  if (downloads_) downloads_->resume(key(id, quant));
}

void PickerViewModel::cancel(const QString& id, const QString& quant) {
  if (!downloads_ || !downloads_->contains(key(id, quant))) return;
  downloads_->cancel(key(id, quant));
  load_after_download_.remove(key(id, quant));
  refresh_row(id);
}

void PickerViewModel::remove(const QString& id, const QString& quant) {
  const QString path = installed_path(id, quant);
  if (path.isEmpty()) return;
  auto removed = models::ModelRegistry(models_dir_.toStdString()).remove(path.toStdString());
  if (!removed.ok()) set_error(QString::fromStdString(removed.error().message));
  refresh_installed();
  refresh_row(id);
}

void PickerViewModel::verify(const QString& id, const QString& quant) {
  const QString path = installed_path(id, quant);
  if (path.isEmpty() || !verifying_.isEmpty()) return;
  if (verify_thread_.joinable()) verify_thread_.join();  // the last one has reported already
  verifying_ = id + QLatin1Char(':') + quant;
  verify_progress_ = 0;
  emit verifyProgressChanged();
  // Results and progress come back as queued calls; the destructor joins this
  // thread first, and Qt drops calls queued for an object that is gone.
  verify_thread_ = std::thread([this, id, quant, path, dir = models_dir_.toStdString()] {
    int reported = 0;  // percent (0 is shown already), so at most 100 updates however large the file
    auto progress = [this, &reported](std::uint64_t done, std::uint64_t total) {
      const int percent = total == 0 ? 100 : static_cast<int>(done * 100 / total);
      if (percent != reported) {
        reported = percent;
        QMetaObject::invokeMethod(this, [this, percent] {
          verify_progress_ = percent / 100.0;
          emit verifyProgressChanged();
        }, Qt::QueuedConnection);
      }
      return !stop_verify_.load();
    };
    auto result = models::ModelRegistry(dir).verify(path.toStdString(), progress);
    QMetaObject::invokeMethod(this, [this, id, quant, result = std::move(result)] {
      verifying_.clear();
      emit verifyProgressChanged();
      report_verified(id, quant, result);
    }, Qt::QueuedConnection);
  });
}

void PickerViewModel::report_verified(const QString& id, const QString& quant,
                                      const Result<models::VerifyResult>& result) {
  if (!result.ok()) {
    emit verified(id, quant, false, QString::fromStdString(result.error().message));
    return;
  }
  switch (result->outcome) {
    case models::VerifyOutcome::Match:
      emit verified(id, quant, true, tr("SHA-256 matches the download"));
      break;
    case models::VerifyOutcome::Mismatch:
      emit verified(id, quant, false, tr("SHA-256 differs from the download: the file is damaged (%1)")
                                          .arg(QString::fromStdString(result->actual_sha256)));
      break;
    case models::VerifyOutcome::NoRecordedHash:
      emit verified(id, quant, true, tr("No recorded SHA-256; current hash %1")
                                         .arg(QString::fromStdString(result->actual_sha256)));
      break;
  }
}

void PickerViewModel::load(const QString& id, const QString& quant) {
  const QString path = installed_path(id, quant);
  if (path.isEmpty()) {
    set_error(tr("%1 %2 is not installed").arg(id, quant));
    return;
  }
  const models::CatalogModel* m = catalog_.find_model(id.toStdString());
  if (m && m->embedding) {
    emit embeddingModelChosen(path);
    return;
  }
  emit loadRequested(path, false);
}

void PickerViewModel::switchQuant(const QString& id, const QString& quant) {
  const QString path = installed_path(id, quant);
  if (!path.isEmpty()) {
    emit loadRequested(path, true);
    return;
  }
  load_after_download_.insert(key(id, quant), true);
  download(id, quant);
}

bool PickerViewModel::importLocalFile(const QString& path) {
  const QString local = path.startsWith(QLatin1String("file:")) ? QUrl(path).toLocalFile() : path;
  auto described = models::describe_gguf(local.toStdString());
  if (!described.ok()) {
    set_error(QString::fromStdString(described.error().message));
    return false;
  }
  entries_.push_back({std::move(described).value(), true});
  refresh_installed();
  rebuild_visible();
  return true;
}

bool PickerViewModel::addFromUrl(const QString& url) {
  const QUrl parsed(url);
  const bool https = parsed.isValid() && parsed.scheme().toLower() == QLatin1String("https") && !parsed.host().isEmpty();
  if (!https || !url.endsWith(QLatin1String(".gguf"))) {
    set_error(tr("Only HTTPS links to a .gguf file can be added: %1").arg(url));
    return false;
  }
  models::CatalogModel m;
  const QString file = parsed.fileName();
  m.id = QFileInfo(file).completeBaseName().toStdString();
  m.name = m.id;
  m.description = tr("Added from %1; its numbers are read once downloaded.").arg(parsed.host()).toStdString();
  m.license = "unknown";
  models::CatalogVariant v;
  static const QRegularExpression quant_re(QStringLiteral("(Q[0-9]_[0-9A-Z_]+|F16|BF16|F32)"),
                                           QRegularExpression::CaseInsensitiveOption);
  const auto match = quant_re.match(file);
  v.quant = match.hasMatch() ? match.captured(1).toUpper().toStdString() : "GGUF";
  v.url = url.toStdString();
  v.size_is_estimate = true;
  m.variants.push_back(v);
  entries_.push_back({std::move(m), true});
  rebuild_visible();
  return true;
}

QString PickerViewModel::formatBytes(double bytes) const {
  return QString::fromStdString(models::format_bytes(bytes > 0 ? static_cast<uint64_t>(bytes) : 0));
}

void PickerViewModel::setFilterText(const QString& text) {
  if (text == filter_text_) return;
  filter_text_ = text;
  emit filtersChanged();
  rebuild_visible();
}

void PickerViewModel::setFitsOnly(bool on) {
  if (on == fits_only_) return;
  fits_only_ = on;
  emit filtersChanged();
  rebuild_visible();
}

void PickerViewModel::setMaxSizeBytes(double bytes) {
  const uint64_t value = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  if (value == max_size_) return;
  max_size_ = value;
  emit filtersChanged();
  rebuild_visible();
}

void PickerViewModel::setContextLength(int n_ctx) {
  if (n_ctx <= 0 || static_cast<uint32_t>(n_ctx) == kv_.n_ctx) return;
  kv_.n_ctx = static_cast<uint32_t>(n_ctx);
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setKvType(const QString& type) {
  const auto parsed = models::kv_type_from_string(type.toStdString());
  if (!parsed || *parsed == kv_.kv_type) return;
  kv_.kv_type = *parsed;
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setApiSlots(int count) {
  const auto value = static_cast<uint32_t>(std::max(0, count));
  if (value == kv_.api_slots) return;
  kv_.api_slots = value;
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setApiContextLength(int n_ctx) {
  const auto value = static_cast<uint32_t>(std::max(0, n_ctx));
  if (value == kv_.api_n_ctx) return;
  kv_.api_n_ctx = value;
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setVramFreeBytes(double bytes) {
  const uint64_t value = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  if (value == machine_.vram_free_bytes) return;
  machine_.vram_free_bytes = value;
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setRamAvailableBytes(double bytes) {
  machine_.ram_available_bytes = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  emit machineChanged();
  rebuild_visible();
}

void PickerViewModel::setModelsDir(const QString& dir) {
  if (dir == models_dir_) return;
  models_dir_ = dir;
  emit modelsDirChanged();
  refresh_installed();
  rebuild_visible();
}

bool PickerViewModel::loadCatalogJson(const QString& json_text) {
  auto parsed = models::parse_catalog(json_text.toStdString(), "catalog");
  if (!parsed.ok()) {
    set_error(QString::fromStdString(parsed.error().message));
    return false;
  }
  catalog_ = std::move(parsed).value();
  entries_.clear();
  for (const auto& m : catalog_.models) entries_.push_back({m, false});
  refresh_installed();
  rebuild_visible();
  return true;
}

}  // namespace hearth::ui
