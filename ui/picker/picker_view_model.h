// The model picker as QML sees it: one row per catalog (or imported) model,
// each with its quant variants, the memory fit of every variant on this
// machine, the recommended variant, installed files and running downloads.
// Filtering (search text, size, fits-my-machine) happens here so QML stays
// declarative. Lives on the GUI thread.
#pragma once

#include <QAbstractListModel>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include <hearth/models/catalog.h>
#include <hearth/models/memory_fit.h>
#include <hearth/models/model_registry.h>

#include "picker/model_downloads.h"

namespace hearth::ui {

// What the picker tells about checking a variant's download: whether its
// size is an estimate, and where the SHA-256 it is verified against comes from.
QString verify_note(const models::CatalogVariant& v);

class PickerViewModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT

  Q_PROPERTY(QString filterText READ filterText WRITE setFilterText NOTIFY filtersChanged)
  Q_PROPERTY(bool fitsOnly READ fitsOnly WRITE setFitsOnly NOTIFY filtersChanged)
  // Largest download size shown, in bytes; 0 shows every size.
  Q_PROPERTY(double maxSizeBytes READ maxSizeBytes WRITE setMaxSizeBytes NOTIFY filtersChanged)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY machineChanged)
  Q_PROPERTY(QString kvType READ kvType WRITE setKvType NOTIFY machineChanged)
  // The local API's request slots and each one's context (0 slots: the API
  // is off); their KV joins every fit, in RAM.
  Q_PROPERTY(int apiSlots READ apiSlots WRITE setApiSlots NOTIFY machineChanged)
  Q_PROPERTY(int apiContextLength READ apiContextLength WRITE setApiContextLength NOTIFY machineChanged)
  // Free VRAM in bytes as the GPU backend reports it; 0 without a usable GPU.
  Q_PROPERTY(double vramFreeBytes READ vramFreeBytes WRITE setVramFreeBytes NOTIFY machineChanged)
  Q_PROPERTY(double ramAvailableBytes READ ramAvailableBytes NOTIFY machineChanged)
  Q_PROPERTY(QString modelsDir READ modelsDir WRITE setModelsDir NOTIFY modelsDirChanged)
  Q_PROPERTY(int totalCount READ totalCount NOTIFY countsChanged)
  Q_PROPERTY(int visibleCount READ visibleCount NOTIFY countsChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  // The variant being re-hashed ("id:quant", empty when none) and how far it got (0..1).
  Q_PROPERTY(QString verifying READ verifying NOTIFY verifyProgressChanged)
  Q_PROPERTY(double verifyProgress READ verifyProgress NOTIFY verifyProgressChanged)
  // Where downloads go (the app's; null: downloading is not offered, e.g. in tests).
  Q_PROPERTY(hearth::ui::ModelDownloads* downloads READ downloads WRITE setDownloads NOTIFY downloadsChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1,
    NameRole,
    FamilyRole,
    DescriptionRole,
    LicenseRole,
    ParametersRole,       // double, count
    ContextLengthRole,
    VariantsRole,         // QVariantList of maps, see variant_map()
    RecommendedQuantRole, // "" when nothing fits
    BestFitRole,          // "gpu" | "partial" | "cpu" | "no" of the recommended variant
    InstalledQuantsRole,  // QStringList
    ImportedRole,         // bool: added from a local file or URL
    ActiveParametersRole, // double: a mixture of experts' parameters per token; 0 for a dense model
    DraftModelRole,       // name of the catalog's suggested draft model (speculative decoding), or ""
    KindRole,             // "chat" or "embedding" (for document libraries)
  };
  Q_ENUM(Role)

  explicit PickerViewModel(QObject* parent = nullptr);
  ~PickerViewModel() override;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString filterText() const { return filter_text_; }
  void setFilterText(const QString& text);
  bool fitsOnly() const { return fits_only_; }
  void setFitsOnly(bool on);
  double maxSizeBytes() const { return static_cast<double>(max_size_); }
  void setMaxSizeBytes(double bytes);
  int contextLength() const { return static_cast<int>(kv_.n_ctx); }
  void setContextLength(int n_ctx);
  QString kvType() const { return QString::fromLatin1(models::to_string(kv_.kv_type)); }
  void setKvType(const QString& type);
  int apiSlots() const { return static_cast<int>(kv_.api_slots); }
  void setApiSlots(int count);
  int apiContextLength() const { return static_cast<int>(kv_.api_n_ctx); }
  void setApiContextLength(int n_ctx);
  double vramFreeBytes() const { return static_cast<double>(machine_.vram_free_bytes); }
  void setVramFreeBytes(double bytes);
  double ramAvailableBytes() const { return static_cast<double>(machine_.ram_available_bytes); }
  QString modelsDir() const { return models_dir_; }
  void setModelsDir(const QString& dir);
  int totalCount() const { return static_cast<int>(entries_.size()); }
  int visibleCount() const { return static_cast<int>(visible_.size()); }
  QString lastError() const { return last_error_; }
  QString verifying() const { return verifying_; }
  double verifyProgress() const { return verify_progress_; }
  ModelDownloads* downloads() const { return downloads_; }
  void setDownloads(ModelDownloads* downloads);

  // Replaces the catalog (tests, or a catalog file chosen by the user).
  bool loadCatalogJson(const QString& json_text);
  // Overrides the machine's RAM figure (tests); normally read from /proc/meminfo.
  void setRamAvailableBytes(double bytes);

  Q_INVOKABLE void download(const QString& id, const QString& quant);
  Q_INVOKABLE void pause(const QString& id, const QString& quant);
  Q_INVOKABLE void resume(const QString& id, const QString& quant);
  Q_INVOKABLE void cancel(const QString& id, const QString& quant);
  Q_INVOKABLE void remove(const QString& id, const QString& quant);
  // Re-hashes an installed file against the SHA-256 recorded at download, on a
  // worker thread (a multi-gigabyte file takes seconds); `verified` reports the
  // outcome. One file at a time: a second request while one runs is ignored.
  Q_INVOKABLE void verify(const QString& id, const QString& quant);
  // Asks the app to load an installed variant.
  Q_INVOKABLE void load(const QString& id, const QString& quant);
  // Downloads the variant if needed, then asks the app to reload the engine
  // with it, keeping the conversation.
  Q_INVOKABLE void switchQuant(const QString& id, const QString& quant);
  // Adds a local .gguf (its header gives the numbers) or an HTTPS URL.
  Q_INVOKABLE bool importLocalFile(const QString& path);
  Q_INVOKABLE bool addFromUrl(const QString& url);
  Q_INVOKABLE QString formatBytes(double bytes) const;
  // The file of an installed variant ("" when not installed): Compare levels
  // reads the levels it can compare from here.
  Q_INVOKABLE QString installedPath(const QString& id, const QString& quant) const { return installed_path(id, quant); }
  // Scans the models folder again (a level made by Compare levels appears).
  Q_INVOKABLE void rescanInstalled();
  Q_INVOKABLE void clearError();

 signals:
  void filtersChanged();
  void machineChanged();
  void modelsDirChanged();
  void countsChanged();
  void lastErrorChanged();
  // The app connects this to its model controller.
  void loadRequested(const QString& path, bool keepConversation);
  // An installed embedding model was chosen: it is for the Documents page.
  void embeddingModelChosen(const QString& path);
  void verified(const QString& id, const QString& quant, bool ok, const QString& message);
  void verifyProgressChanged();
  void downloadsChanged();

 private:
  void on_download_finished(const QString& key, const QString& path, const QString& sha256);
  // The catalog id of a download key ("id:quant"; ids may hold ':').
  static QString id_of(const QString& key);
  struct Entry {
    models::CatalogModel model;
    bool imported = false;
  };

  void rebuild_visible();
  void refresh_installed();
  void refresh_row(const QString& id);
  QVariantList variant_list(const Entry& entry) const;
  const Entry* find(const QString& id) const;
  QString destination_for(const models::CatalogVariant& variant) const;
  QString installed_path(const QString& id, const QString& quant) const;
  void set_error(const QString& message);
  void report_verified(const QString& id, const QString& quant, const Result<models::VerifyResult>& result);

  std::vector<Entry> entries_;
  std::vector<size_t> visible_;  // indexes into entries_
  models::Catalog catalog_;
  models::KvSettings kv_;
  models::MachineBudget machine_;
  QString filter_text_;
  bool fits_only_ = false;
  uint64_t max_size_ = 0;
  QString models_dir_;
  QString last_error_;
  QHash<QString, QString> installed_;  // "id:quant" -> path
  QPointer<ModelDownloads> downloads_;  // the app's; may go first
  QHash<QString, bool> load_after_download_;  // "id:quant"

  QString verifying_;
  double verify_progress_ = 0;
  std::atomic<bool> stop_verify_{false};
  std::thread verify_thread_;  // joined (after asking it to stop) before `this` goes
};

}  // namespace hearth::ui
