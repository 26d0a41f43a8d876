#include "compare/compare_controller.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>
#include <QThread>
#include <hearth/engine/tools/quant_mix.h>
#include <hearth/models/machine_info.h>
#include <hearth/models/model_registry.h>

#include <algorithm>

#include "compare/chart_image.h"
#include "compare/conversation_prompts.h"
#include "compare/recommend.h"
#include "controllers/settings_controller.h"
#include "store/storage_executor.h"

namespace hearth::app {

// The job as the engine thread runs it. The controller reads the result only
// after jobFinished, when the engine thread no longer touches the job.
class CompareController::Adapter final : public BackgroundJob {
 public:
  explicit Adapter(std::unique_ptr<compare::CompareJob> job) : job_(std::move(job)) {}
  Result<bool> step() override { return job_->step(); }
  double progress() const override {
    const auto planned = job_->steps_planned();
    return planned > 0 ? std::min(1.0, static_cast<double>(job_->steps_done()) / static_cast<double>(planned)) : 0.0;
  }
  std::string activity() const override { return job_->activity(); }
  const compare::JobResult& result() const { return job_->result(); }

 private:
  std::unique_ptr<compare::CompareJob> job_;
};

namespace {

QString text(const std::string& s) { return QString::fromStdString(s); }

// A comparison on conversations answers at most this many questions with
// every level, each at most this many characters (compare::prompts_from_conversations).
constexpr size_t kMaxConversationPrompts = 16;
constexpr size_t kMaxConversationChars = 2000;

bool is_float_source(const QString& quant) {
  const QString q = quant.toUpper();
  return q == QLatin1String("F32") || q == QLatin1String("F16") || q == QLatin1String("BF16");
}

}  // namespace

CompareController::CompareController(EngineServiceClient* engine, ui::SettingsController* settings,
                                     ui::StorageExecutor* storage, QString output_dir, QString work_dir,
                                     QString builtin_prompts, QObject* parent)
    : QObject(parent),
      engine_(engine),
      settings_(settings),
      storage_(storage),
      output_dir_(std::move(output_dir)),
      work_dir_(std::move(work_dir)),
      builtin_prompts_(std::move(builtin_prompts)) {
  connect(engine_, &EngineServiceClient::jobProgress, this, [this](qint64 id, double fraction, const QString& what) {
    if (id != job_id_) return;
    // The plan grows once the base has cut the text into windows; the bar
    // never moves back.
    progress_ = std::max(progress_, fraction);
    activity_ = what;
    emit progressChanged();
  });
  connect(engine_, &EngineServiceClient::jobFinished, this, &CompareController::on_finished);
  connect(engine_, &EngineServiceClient::jobFailed, this, &CompareController::on_ended);
  connect(engine_, &EngineServiceClient::jobCancelled, this, [this](qint64 id) { on_ended(id, {}); });
  connect(settings_, &ui::SettingsController::changed, this, [this] {
    update_recommendation();
    emit floorChanged();
  });
}

CompareController::~CompareController() {
  if (job_id_ != 0) engine_->cancelJob(job_id_);
}

QVariantList CompareController::levelChoices(const QVariantList& installed, const QStringList& quants) const {
  QVariantList out;
  QStringList have;
  QString source, source_quant;
  for (const auto& v : installed) {
    const auto m = v.toMap();
    const QString quant = m.value(QStringLiteral("quant")).toString();
    const QString path = m.value(QStringLiteral("path")).toString();
    if (quant.isEmpty() || path.isEmpty()) continue;
    have << quant.toUpper();
    out.append(QVariantMap{{QStringLiteral("quant"), quant}, {QStringLiteral("path"), path},
                           {QStringLiteral("make"), false}, {QStringLiteral("makeFrom"), QString()}});
    if (is_float_source(quant) &&
        (source.isEmpty() || compare::level_rank(quant.toStdString()) > compare::level_rank(source_quant.toStdString()))) {
      source = path;
      source_quant = quant;
    }
  }
  if (source.isEmpty()) return out;
  const QFileInfo src(source);
  for (const auto& quant : quants) {
    if (have.contains(quant.toUpper())) continue;
    if (!tools::quant_target_from_name(quant.toStdString()).ok()) continue;
    if (compare::level_rank(quant.toStdString()) >= compare::level_rank(source_quant.toStdString())) continue;
    const QString made = src.dir().filePath(src.completeBaseName() + QLatin1Char('-') + quant.toUpper() +
                                            QStringLiteral(".gguf"));
    const bool exists = QFileInfo::exists(made);  // made by an earlier comparison
    out.append(QVariantMap{{QStringLiteral("quant"), quant}, {QStringLiteral("path"), made},
                           {QStringLiteral("make"), !exists}, {QStringLiteral("makeFrom"), exists ? QString() : source}});
  }
  return out;
}

std::optional<compare::JobOptions> CompareController::plan(const QVariantList& levels) {
  const auto fail = [this](const QString& message) -> std::optional<compare::JobOptions> {
    refuse(message);
    return std::nullopt;
  };
  if (running()) return fail(tr("A comparison is already running."));
  std::vector<compare::LevelSpec> specs;
  for (const auto& v : levels) {
    const auto m = v.toMap();
    compare::LevelSpec spec;
    spec.label = m.value(QStringLiteral("quant")).toString().toStdString();
    spec.path = m.value(QStringLiteral("path")).toString().toStdString();
    if (m.value(QStringLiteral("make")).toBool()) {
      auto target = tools::quant_target_from_name(spec.label);
      if (!target.ok()) return fail(QString::fromStdString(target.error().message));
      spec.make = *target;
      spec.make_from = m.value(QStringLiteral("makeFrom")).toString().toStdString();
    }
    specs.push_back(std::move(spec));
  }
  if (specs.size() < 2 || specs.size() > 4) return fail(tr("Choose 2 to 4 levels."));
  // The base: the highest level Hearth has (a made level cannot be the base).
  std::vector<compare::LevelSpec> have;
  for (const auto& s : specs) {
    if (!s.make) have.push_back(s);
  }
  const auto base = compare::highest_level(have);
  if (!base) return fail(tr("Choose at least one level Hearth already has: the best one is the reference."));
  for (const auto& s : specs) {
    if (s.make && compare::level_rank(s.label) > compare::level_rank(have[*base].label)) {
      return fail(tr("%1 would be made, but it is better than every level chosen; choose the level it is made from too.")
                      .arg(text(s.label)));
    }
  }
  compare::JobOptions o;
  o.base = have[*base];
  for (const auto& s : specs) {
    if (s.path != o.base.path) o.levels.push_back(s);
  }
  const auto& st = settings_->settings();
  o.fit_kv.n_ctx = static_cast<uint32_t>(st.load.context_length);
  o.fit_kv.kv_type = st.load.kv_cache_type == settings::KvCacheType::Q8_0 ? models::KvType::Q8_0 : models::KvType::F16;
  o.machine.ram_available_bytes = models::available_ram_bytes().value_or(0);
  o.machine.vram_free_bytes = vram_free_;
  o.threads = std::clamp(QThread::idealThreadCount(), 1, 8);
  o.work_dir = work_dir_.toStdString();
  const bool makes = std::any_of(o.levels.begin(), o.levels.end(), [](const auto& l) { return l.make.has_value(); });
  if (protect_important_ && makes) {
    QFile calibration(QStringLiteral(":/Hearth/Ui/resources/calibration/default.txt"));
    if (!calibration.open(QIODevice::ReadOnly)) return fail(tr("the calibration text is missing from this build"));
    o.calibration_text = calibration.readAll().toStdString();
  }
  return o;
}

bool CompareController::launch(compare::JobOptions options, const QString& model_id, const QString& model_name) {
  launched_categories_ = options.inputs.categories;
  auto job = compare::CompareJob::create(std::move(options));
  if (!job.ok()) return refuse(QString::fromStdString(job.error().message));
  model_id_ = model_id;
  model_name_ = model_name;
  error_.clear();
  progress_ = 0;
  activity_ = tr("waiting for the engine");
  adapter_ = std::make_shared<Adapter>(std::move(*job));
  job_id_ = ++next_id_;
  engine_->startJob(job_id_, adapter_);
  emit stateChanged();
  emit progressChanged();
  return true;
}

bool CompareController::start(const QString& model_id, const QString& model_name, const QVariantList& levels,
                              const QString& prompts) {
  auto o = plan(levels);
  if (!o) return false;
  const QString prompt_file = prompts == QLatin1String("builtin") ? builtin_prompts_ : prompts;
  QFile f(prompt_file);
  if (!f.open(QIODevice::ReadOnly)) return refuse(tr("%1: cannot read the prompts").arg(prompt_file));
  const QByteArray content = f.read(64 << 20);
  auto set = compare::parse_prompt_file(prompt_file.toStdString(), std::string_view(content.constData(), content.size()));
  if (!set.ok()) return refuse(QString::fromStdString(set.error().message));
  o->inputs = std::move(*set);
  return launch(std::move(*o), model_id, model_name);
}

bool CompareController::startOnConversations(const QString& model_id, const QString& model_name,
                                             const QVariantList& levels, const QVariantList& conversation_ids) {
  if (!storage_) return refuse(tr("Your conversations cannot be read here."));
  if (conversation_ids.isEmpty()) return refuse(tr("Choose at least one conversation."));
  auto o = plan(levels);
  if (!o) return false;
  std::vector<ui::ConversationKey> keys;
  for (const auto& v : conversation_ids) keys.push_back(ui::ConversationKey{v.toLongLong()});
  reading_conversations_ = true;
  const int generation = ++reading_generation_;
  error_.clear();
  progress_ = 0;
  activity_ = tr("reading your conversations");
  emit stateChanged();
  emit progressChanged();
  storage_->run(
      [keys](ui::ConversationStore& store) -> Result<std::vector<compare::ConversationSource>> {
        std::vector<compare::ConversationSource> out;
        for (const auto key : keys) {
          HEARTH_TRY(auto conversation, store.get_conversation(key));
          HEARTH_TRY(auto tree, store.load_messages(key));
          out.push_back({std::move(conversation.title), std::move(tree)});
        }
        return out;
      },
      this,
      [this, generation, options = std::move(*o), model_id,
       model_name](Result<std::vector<compare::ConversationSource>> read) mutable {
        if (generation != reading_generation_) return;  // cancelled meanwhile
        reading_conversations_ = false;
        if (!read.ok()) {
          refuse(tr("Reading your conversations failed: %1").arg(text(read.error().message)));
          return;
        }
        auto got = compare::prompts_from_conversations(*read, kMaxConversationPrompts, kMaxConversationChars);
        if (got.prompts.prompts.empty()) {
          refuse(got.skipped_long > 0
                   ? tr("Every question in the chosen conversations is longer than %1 characters.").arg(kMaxConversationChars)
                   : tr("The chosen conversations have no questions in them."));
          return;
        }
        options.inputs = std::move(got.prompts);
        launch(std::move(options), model_id, model_name);
      });
  return true;
}

void CompareController::refreshConversations() {
  if (!storage_) return;
  storage_->run([](ui::ConversationStore& store) { return store.list_conversations(ui::ArchiveFilter::ActiveOnly); },
                this, [this](Result<std::vector<ui::ConversationRecord>> list) {
                  conversations_.clear();
                  if (!list.ok()) {
                    refuse(tr("Listing your conversations failed: %1").arg(text(list.error().message)));
                  } else {
                    for (const auto& c : *list) {
                      conversations_.append(QVariantMap{{QStringLiteral("id"), static_cast<qlonglong>(c.id.value)},
                                                        {QStringLiteral("title"), text(c.title)}});
                    }
                  }
                  emit conversationsChanged();
                });
}

bool CompareController::refuse(const QString& message) {
  error_ = message;
  emit stateChanged();
  return false;
}

void CompareController::cancel() {
  if (reading_conversations_) {
    reading_conversations_ = false;
    ++reading_generation_;
    activity_ = tr("cancelled");
    emit stateChanged();
    emit progressChanged();
    return;
  }
  if (job_id_ == 0) return;
  engine_->cancelJob(job_id_);
  // The engine thread holds the last reference: the job and its files go there.
  adapter_.reset();
}

void CompareController::on_finished(qint64 id) {
  if (id != job_id_) return;
  if (!adapter_) {  // cancelled while its last step ran: nothing to show
    on_ended(id, {});
    return;
  }
  const compare::JobResult result = adapter_->result();
  adapter_.reset();
  job_id_ = 0;
  // Made levels are kept and registered beside the file they came from, under
  // the card's model so the picker lists them as installed.
  for (const auto& l : result.levels) {
    if (!l.made) continue;
    const std::filesystem::path path(l.path);
    models::InstalledModel m;
    m.path = path;
    m.size_bytes = l.file_bytes;
    m.quant = l.label;
    m.catalog_id = model_id_.toStdString();
    const auto st = models::ModelRegistry(path.parent_path()).record(m);
    if (!st.ok()) qWarning("compare levels: %s", st.error().message.c_str());
    emit levelMade(text(l.path));
  }
  publish(result);
  emit stateChanged();
  emit finished();
}

void CompareController::on_ended(qint64 id, const QString& message) {
  if (id != job_id_) return;
  adapter_.reset();
  job_id_ = 0;
  error_ = message;
  activity_ = message.isEmpty() ? tr("cancelled") : QString();
  emit stateChanged();
  emit progressChanged();
}

void CompareController::publish(const compare::JobResult& result) {
  last_ = result;
  results_.clear();
  for (const auto& l : result.levels) {
    QStringList answers;
    for (const auto& a : l.answers) answers << text(a);
    results_.append(QVariantMap{
        {QStringLiteral("quant"), text(l.label)},
        {QStringLiteral("path"), text(l.path)},
        {QStringLiteral("isBase"), l.is_base},
        {QStringLiteral("made"), l.made},
        {QStringLiteral("fileBytes"), static_cast<double>(l.file_bytes)},
        {QStringLiteral("memoryBytes"), static_cast<double>(l.memory_bytes)},
        {QStringLiteral("fits"), QString::fromLatin1(models::to_string(l.fit))},
        {QStringLiteral("ppTps"), l.pp_tps},
        {QStringLiteral("tgTps"), l.tg_tps},
        {QStringLiteral("kldMean"), l.kld_mean},
        {QStringLiteral("kldP99"), l.kld_p99},
        {QStringLiteral("top1"), l.top1},
        {QStringLiteral("greedySame"), l.greedy_same},
        {QStringLiteral("answers"), answers},
    });
  }
  prompts_.clear();
  prompt_categories_.clear();
  for (size_t i = 0; i < result.prompts.size(); ++i) {
    prompts_ << text(result.prompts[i]);
    // Prompts keep the inputs' order; a text's windows have no categories.
    prompt_categories_ << (i < launched_categories_.size() ? text(launched_categories_[i]) : QString());
  }
  // The chart goes to a known place on every run (Save chart copies the view).
  QString safe = model_name_;
  safe.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
  if (safe.isEmpty()) safe = QStringLiteral("model");
  chart_path_ = QDir(output_dir_).filePath(safe + QStringLiteral("-levels.png"));
  QString chart_error;
  if (!compare::write_chart_png(result, tr("%1: memory, drift and speed per level").arg(model_name_), chart_path_,
                                chart_error)) {
    error_ = chart_error;
    chart_path_.clear();
  }
  update_recommendation();
}

void CompareController::update_recommendation() {
  const auto& floor = settings_->settings().quality_floor;
  recommended_.clear();
  if (last_.levels.empty()) {
    recommendation_.clear();
  } else if (const auto pick = compare::recommend_level(last_.levels, floor)) {
    const auto& l = last_.levels[*pick];
    recommended_ = text(l.label);
    recommendation_ = tr("%1: the smallest level that fits this machine (%2) and meets your quality floor (%3).")
                          .arg(recommended_, formatBytes(static_cast<double>(l.memory_bytes)),
                               text(compare::describe_floor(floor)));
  } else {
    recommendation_ = tr("No level both fits this machine and meets your quality floor (%1).")
                          .arg(text(compare::describe_floor(floor)));
  }
  emit resultsChanged();
}

QString CompareController::floorKind() const {
  return QString::fromLatin1(settings::to_string(settings_->settings().quality_floor.kind));
}

void CompareController::setFloorKind(const QString& kind) {
  auto f = settings_->settings().quality_floor;
  f.kind = kind == QLatin1String("kld") ? settings::QualityFloorKind::Kld : settings::QualityFloorKind::Top1;
  settings_->set_quality_floor(f);
}

double CompareController::floorValue() const {
  const auto& f = settings_->settings().quality_floor;
  return f.kind == settings::QualityFloorKind::Kld ? f.kld_max : f.top1_percent;
}

void CompareController::setFloorValue(double value) {
  auto f = settings_->settings().quality_floor;
  (f.kind == settings::QualityFloorKind::Kld ? f.kld_max : f.top1_percent) = value;
  settings_->set_quality_floor(f);
}

QString CompareController::floorText() const {
  return tr("A level qualifies when %1.").arg(text(compare::describe_floor(settings_->settings().quality_floor)));
}

QString CompareController::formatBytes(double bytes) const {
  return text(models::format_bytes(static_cast<uint64_t>(std::max(0.0, bytes))));
}

}  // namespace hearth::app
