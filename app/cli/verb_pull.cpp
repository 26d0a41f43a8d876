// hearth-cli pull: downloads a catalog variant or a URL into the models
// folder with a progress bar, resuming a .part file and verifying SHA-256.
#include <fmt/format.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QNetworkAccessManager>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "args.h"
#include <hearth/models/catalog.h>
#include "downloads/download.h"
#include "downloads/download_queue.h"
#include "downloads/hf_resolver.h"
#include <hearth/models/machine_info.h>
#include <hearth/models/memory_fit.h>
#include <hearth/models/model_registry.h>
#include "verbs.h"

namespace hearth::cli {
namespace {

const VerbSpec& spec() {
  static const VerbSpec s{
      "pull",
      "(NAME:QUANT | URL) [--sha256 HEX] [--dir D]",
      "Downloads a model into the model folder with a progress bar. NAME:QUANT picks a catalog\n"
      "variant (see `hearth-cli catalog`); a URL must be HTTPS. A .part file left by an earlier run\n"
      "is resumed. The SHA-256 comes from --sha256, the catalog, or the Hugging Face API, and is\n"
      "checked at the end. Refuses to start without enough free disk.",
      {
          {"sha256", FlagKind::Value, "expected SHA-256 of the file (64 hex digits)", "", "HEX"},
          {"dir", FlagKind::Value, "model folder (default ~/.local/share/hearth/models)", "", "D"},
          {"catalog", FlagKind::Value, "read this catalog file instead of the built-in one", "", "FILE"},
          {"allow-http-loopback", FlagKind::Switch, "also accept plain http to 127.0.0.1 (test servers)", "", ""},
          {"no-resolve", FlagKind::Switch, "do not ask the Hugging Face API for the file's SHA-256", "", ""},
          {"hf-endpoint", FlagKind::Value, "base URL of a Hugging Face mirror for resolve URLs and the API "
                                           "(default https://huggingface.co)", "", "URL"},
      },
      1,
      1};
  return s;
}

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void draw_bar(const models::Download& d, bool tty) {
  if (!tty) return;
  const uint64_t have = d.received_bytes();
  const uint64_t total = d.total_bytes().value_or(0);
  const int width = 30;
  std::string bar;
  std::string pct = "  ?%";
  if (total > 0) {
    const double f = std::min(1.0, static_cast<double>(have) / static_cast<double>(total));
    const int filled = static_cast<int>(f * width);
    bar = std::string(filled, '#') + std::string(width - filled, '.');
    pct = fmt::format("{:3.0f}%", f * 100);
  } else {
    bar = std::string(width, '.');
  }
  const auto eta = d.eta_seconds();
  std::fprintf(stderr, "\r[%s] %s %s / %s  %s/s  ETA %s   ", bar.c_str(), pct.c_str(),
               models::format_bytes(have).c_str(), total ? models::format_bytes(total).c_str() : "?",
               models::format_bytes(static_cast<uint64_t>(d.bytes_per_second())).c_str(),
               eta ? duration_text(*eta).c_str() : "?");
  std::fflush(stderr);
}

}  // namespace

int run_pull(const std::vector<std::string>& argv) {
  int exit_code = kExitOk;
  auto parsed = parse_verb_args(spec(), argv, exit_code);
  if (!parsed) return exit_code;
  const ParsedArgs& args = *parsed;
  const std::string target = args.positionals()[0];
  std::string expected_sha = lower(args.get_or("sha256", ""));
  if (!expected_sha.empty() && !is_hex64(expected_sha)) {
    std::fprintf(stderr, "pull: --sha256 '%s' is not 64 hex digits\n", expected_sha.c_str());
    return kExitUsage;
  }
  const auto policy = args.has("allow-http-loopback") ? models::SchemePolicy::AllowLoopbackHttp
                                                      : models::SchemePolicy::HttpsOnly;
  const std::string hf_endpoint = args.get_or("hf-endpoint", std::string(models::kHfEndpoint));
  if (!models::url_allowed(QUrl(QString::fromStdString(hf_endpoint)), policy)) {
    std::fprintf(stderr, "pull: --hf-endpoint '%s' is not an HTTPS URL\n", hf_endpoint.c_str());
    return kExitUsage;
  }

  int app_argc = 1;
  char app_name[] = "hearth-cli";
  char* app_argv[] = {app_name, nullptr};
  QCoreApplication app(app_argc, app_argv);

  std::string url;
  std::string catalog_id, quant;
  std::optional<uint64_t> size_hint;  // for the free-space check
  if (auto ref = models::parse_model_ref(target)) {
    models::Catalog catalog;
    if (auto file = args.get("catalog")) {
      auto parsed_catalog = models::load_catalog_file(*file);
      if (!parsed_catalog.ok()) {
        std::fprintf(stderr, "pull: %s\n", parsed_catalog.error().message.c_str());
        return kExitBadInput;
      }
      catalog = std::move(parsed_catalog).value();
    } else {
      auto builtin = models::load_builtin_catalog();
      if (!builtin.ok()) {
        std::fprintf(stderr, "pull: %s\n", builtin.error().message.c_str());
        return kExitBadInput;
      }
      catalog = std::move(builtin).value();
    }
    const auto* model = catalog.find_model(ref->id);
    if (!model) {
      std::fprintf(stderr, "pull: no model '%s' in the catalog (see hearth-cli catalog)\n", ref->id.c_str());
      return kExitBadInput;
    }
    const auto* variant = model->find_variant(ref->quant);
    if (!variant) {
      std::string have;
      for (const auto& v : model->variants) have += (have.empty() ? "" : ", ") + v.quant;
      std::fprintf(stderr, "pull: model '%s' has no variant %s (available: %s)\n", ref->id.c_str(),
                   ref->quant.c_str(), have.c_str());
      return kExitBadInput;
    }
    url = variant->url;
    catalog_id = model->id;
    quant = variant->quant;
    size_hint = variant->size_bytes;
    if (variant->sha256) {
      if (!expected_sha.empty() && expected_sha != *variant->sha256) {
        std::fprintf(stderr, "pull: --sha256 differs from the catalog's %s for %s\n", variant->sha256->c_str(),
                     target.c_str());
        return kExitBadInput;
      }
      expected_sha = *variant->sha256;
    }
  } else {
    url = target;
  }
  const QUrl qurl(QString::fromStdString(url));
  if (!models::url_allowed(qurl, policy)) {
    std::fprintf(stderr, "pull: '%s' is not an HTTPS URL or a NAME:QUANT from the catalog\n", target.c_str());
    return kExitBadInput;
  }

  const std::filesystem::path dir = args.has("dir") ? std::filesystem::path(*args.get("dir"))
                                                    : models::default_models_dir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "pull: cannot create '%s': %s\n", dir.string().c_str(), ec.message().c_str());
    return kExitBadInput;
  }
  const std::string file_name = models::ModelRegistry::file_name_for_url(url);
  if (file_name.empty()) {
    std::fprintf(stderr, "pull: '%s' names no file\n", url.c_str());
    return kExitBadInput;
  }
  const std::filesystem::path dest = dir / file_name;
  models::ModelRegistry registry(dir);

  models::DownloadQueue queue(1);
  // Hugging Face publishes each file's SHA-256 (its LFS object id) and exact size.
  if (expected_sha.empty() && !args.has("no-resolve") && models::parse_hf_url(url, hf_endpoint)) {
    models::HfResolver resolver(queue.network());
    resolver.set_endpoint(QString::fromStdString(hf_endpoint));
    QEventLoop loop;
    QObject::connect(&resolver, &models::HfResolver::resolved, &loop, [&](const QString& sha, quint64 size) {
      expected_sha = sha.toStdString();
      size_hint = size;
      loop.quit();
    });
    QObject::connect(&resolver, &models::HfResolver::failed, &loop, [&](const QString& message) {
      std::fprintf(stderr, "pull: warning: no published SHA-256 (%s); the file will not be verified\n",
                   message.toUtf8().constData());
      loop.quit();
    });
    resolver.resolve(qurl);
    loop.exec();
  }

  if (std::filesystem::exists(dest)) {
    if (expected_sha.empty()) {
      std::fprintf(stderr, "pull: '%s' is already there (no SHA-256 known to re-verify it)\n", dest.string().c_str());
      std::printf("%s\n", dest.string().c_str());
      return kExitOk;
    }
    auto actual = models::sha256_of_file(dest);
    if (actual.ok() && *actual == expected_sha) {
      std::fprintf(stderr, "pull: '%s' is already there and verified\n", dest.string().c_str());
      std::printf("%s\n", dest.string().c_str());
      return kExitOk;
    }
    std::fprintf(stderr, "pull: '%s' exists but its SHA-256 is not %s; delete it to download again\n",
                 dest.string().c_str(), expected_sha.c_str());
    return kExitBadInput;
  }

  if (size_hint) {
    const std::filesystem::path part = dest.string() + ".part";
    const uint64_t have = std::filesystem::exists(part) ? std::filesystem::file_size(part, ec) : 0;
    const uint64_t need = *size_hint > have ? *size_hint - have : 0;
    auto free = models::free_disk_bytes(dir);
    if (free.ok() && *free < need) {
      std::fprintf(stderr, "pull: not enough disk space in '%s': %s needed, %s free\n", dir.string().c_str(),
                   models::format_bytes(need).c_str(), models::format_bytes(*free).c_str());
      return kExitBadInput;
    }
  }

  models::DownloadRequest request;
  request.url = qurl;
  request.destination = QString::fromStdString(dest.string());
  request.expected_sha256 = QString::fromStdString(expected_sha);
  request.scheme_policy = policy;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  std::fprintf(stderr, "pull: %s -> %s\n", url.c_str(), dest.string().c_str());
  models::Download* download = queue.enqueue(request);
  QEventLoop loop;
  QObject::connect(download, &models::Download::progress, &loop, [&] { draw_bar(*download, tty); });
  QObject::connect(download, &models::Download::finished, &loop, [&] { loop.quit(); });
  QObject::connect(download, &models::Download::failed, &loop, [&] { loop.quit(); });
  if (download->state() == models::DownloadState::Downloading || download->state() == models::DownloadState::Hashing)
    loop.exec();
  if (tty) std::fputs("\n", stderr);
  if (download->state() != models::DownloadState::Finished) {
    std::fprintf(stderr, "pull: %s\n", download->error_message().toUtf8().constData());
    return kExitBadInput;
  }
  models::InstalledModel installed;
  installed.path = dest;
  installed.catalog_id = catalog_id;
  installed.quant = quant;
  installed.source_url = url;
  installed.sha256 = download->sha256_hex().toStdString();
  (void)registry.record(installed);
  std::fprintf(stderr, "pull: done, SHA-256 %s%s\n", installed.sha256.c_str(),
               expected_sha.empty() ? " (not checked: none published)" : " (verified)");
  std::printf("%s\n", dest.string().c_str());
  return kExitOk;
}

}  // namespace hearth::cli
