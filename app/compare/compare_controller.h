// Compare levels (the picker's model card): which levels of a model can be
// compared, the comparison as a job on the engine thread's queue (a step at a
// time between chat replies, with progress and cancel), and its outcome for
// QML: the table, the answers side by side, the chart written as a PNG, and
// the recommendation "smallest level within your quality floor that fits".
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVariantList>

#include <memory>
#include <optional>

#include "compare/compare_job.h"
#include "engine_service/engine_service_client.h"

namespace hearth::ui {
class SettingsController;
class StorageExecutor;
}

namespace hearth::app {

class CompareController : public QObject {
  Q_OBJECT
  Q_PROPERTY(bool running READ running NOTIFY stateChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString activity READ activity NOTIFY progressChanged)
  Q_PROPERTY(QString error READ error NOTIFY stateChanged)
  Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
  Q_PROPERTY(QStringList prompts READ prompts NOTIFY resultsChanged)
  // Per prompt, what kind it is ("chat", "code", ...) or the conversation it
  // came from; empty strings where unknown (a text's windows, plain lines).
  Q_PROPERTY(QStringList promptCategories READ promptCategories NOTIFY resultsChanged)
  Q_PROPERTY(QString recommended READ recommended NOTIFY resultsChanged)
  Q_PROPERTY(QString recommendation READ recommendation NOTIFY resultsChanged)
  Q_PROPERTY(QString chartPath READ chartPath NOTIFY resultsChanged)
  Q_PROPERTY(QString floorKind READ floorKind WRITE setFloorKind NOTIFY floorChanged)
  Q_PROPERTY(double floorValue READ floorValue WRITE setFloorValue NOTIFY floorChanged)
  Q_PROPERTY(QString floorText READ floorText NOTIFY floorChanged)
  // Levels made here protect their most important weights (an importance
  // matrix from the shipped calibration text); on by default.
  Q_PROPERTY(bool protectImportant READ protectImportant WRITE setProtectImportant NOTIFY protectImportantChanged)
  // Conversations the user can take questions from (refreshConversations()):
  // maps of id and title, most recent first.
  Q_PROPERTY(QVariantList conversations READ conversations NOTIFY conversationsChanged)

 public:
  // `engine` runs the job; `settings` holds the quality floor and the context
  // the memory figures assume; `storage` reads the user's conversations (null:
  // they are not offered); charts go to `output_dir`, partial files to
  // `work_dir`. `builtin_prompts` is the shipped prompt set (JSONL).
  CompareController(EngineServiceClient* engine, ui::SettingsController* settings, ui::StorageExecutor* storage,
                    QString output_dir, QString work_dir, QString builtin_prompts, QObject* parent = nullptr);
  ~CompareController() override;

  // The levels a card offers: each installed variant ({quant, path}), and each
  // catalog quant Hearth can make with the quantizer from an installed
  // F32/F16/BF16 file (a file beside it: <source>-<QUANT>.gguf). Maps of
  // quant, path, make (bool), makeFrom.
  Q_INVOKABLE QVariantList levelChoices(const QVariantList& installed, const QStringList& quants) const;
  // Starts the comparison of 2-4 chosen levels (levelChoices' maps) of the
  // catalog model `model_id` on `prompts`: "builtin" or a file (.jsonl
  // prompts, anything else a text). False with `error` set when the choice
  // cannot run.
  Q_INVOKABLE bool start(const QString& model_id, const QString& model_name, const QVariantList& levels,
                         const QString& prompts);
  // The same on the questions the user asked in the conversations
  // `conversation_ids` (ids from `conversations`): each user message on the
  // branch last looked at is a prompt (compare::prompts_from_conversations).
  // They are read on the storage thread; the job starts when they arrive, and
  // `running` is true from now on.
  Q_INVOKABLE bool startOnConversations(const QString& model_id, const QString& model_name,
                                        const QVariantList& levels, const QVariantList& conversation_ids);
  Q_INVOKABLE void refreshConversations();
  Q_INVOKABLE void cancel();
  bool protectImportant() const { return protect_important_; }
  void setProtectImportant(bool on) {
    if (on == protect_important_) return;
    protect_important_ = on;
    emit protectImportantChanged();
  }
  Q_INVOKABLE QString formatBytes(double bytes) const;

  bool running() const { return job_id_ != 0 || reading_conversations_; }
  double progress() const { return progress_; }
  QString activity() const { return activity_; }
  QString error() const { return error_; }
  QVariantList results() const { return results_; }
  QVariantList conversations() const { return conversations_; }
  QStringList prompts() const { return prompts_; }
  QStringList promptCategories() const { return prompt_categories_; }
  QString recommended() const { return recommended_; }
  QString recommendation() const { return recommendation_; }
  QString chartPath() const { return chart_path_; }
  QString floorKind() const;
  void setFloorKind(const QString& kind);
  double floorValue() const;
  void setFloorValue(double value);
  QString floorText() const;
  // Machine figures the fit assumes (the picker's): free VRAM from the probe.
  void set_vram_free_bytes(uint64_t bytes) { vram_free_ = bytes; }

 signals:
  void protectImportantChanged();
  void stateChanged();
  void progressChanged();
  void resultsChanged();
  void floorChanged();
  void conversationsChanged();
  // A level made by the quantizer was kept and registered (the picker rescans).
  void levelMade(const QString& path);
  void finished();

 private:
  class Adapter;
  // The job's options for the chosen levels and the user's settings, without
  // its inputs; nullopt with `error` set when the choice cannot run.
  std::optional<compare::JobOptions> plan(const QVariantList& levels);
  bool launch(compare::JobOptions options, const QString& model_id, const QString& model_name);
  // Shows `message` as the page's error; false, for `return refuse(...)`.
  bool refuse(const QString& message);
  void on_finished(qint64 id);
  void on_ended(qint64 id, const QString& message);
  void publish(const compare::JobResult& result);
  void update_recommendation();

  EngineServiceClient* engine_;
  ui::SettingsController* settings_;
  ui::StorageExecutor* storage_;
  QString output_dir_, work_dir_, builtin_prompts_;
  bool protect_important_ = true;
  std::shared_ptr<Adapter> adapter_;
  qint64 job_id_ = 0;
  qint64 next_id_ = 0;
  QString model_id_, model_name_;
  double progress_ = 0;
  QString activity_, error_;
  compare::JobResult last_;
  QVariantList results_;
  QStringList prompts_;
  QStringList prompt_categories_;
  std::vector<std::string> launched_categories_;  // the running job's inputs.categories
  QString recommended_, recommendation_, chart_path_;
  uint64_t vram_free_ = 0;
  QVariantList conversations_;
  bool reading_conversations_ = false;
  int reading_generation_ = 0;  // a cancel while reading drops what arrives
};

}  // namespace hearth::app
