#include "downloads/hf_resolver.h"

#include <fmt/format.h>

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace hearth::models {

HfResolver::HfResolver(QNetworkAccessManager* network, QObject* parent) : QObject(parent), network_(network) {}

void HfResolver::resolve(const QUrl& file_url) {
  const std::string endpoint = endpoint_.toStdString();
  const auto ref = parse_hf_url(file_url.toString().toStdString(), endpoint);
  if (!ref) {
    emit failed(QStringLiteral("'%1' is not a Hugging Face file URL").arg(file_url.toString()));
    return;
  }
  QNetworkRequest req(QUrl(QString::fromStdString(hf_tree_api_url(*ref, endpoint))));
  req.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::NoLessSafeRedirectPolicy);
  req.setTransferTimeout(30'000);
  QNetworkReply* reply = network_->get(req);
  connect(reply, &QNetworkReply::finished, this, [this, reply, path = ref->path] {
    reply->deleteLater();
    if (reply->error() != QNetworkReply::NoError) {
      emit failed(QStringLiteral("Hugging Face API: %1").arg(reply->errorString()));
      return;
    }
    const QByteArray body = reply->readAll();
    auto info = parse_hf_tree(std::string_view(body.constData(), static_cast<size_t>(body.size())), path);
    if (!info.ok()) {
      emit failed(QString::fromStdString(info.error().message));
      return;
    }
    emit resolved(QString::fromStdString(info->sha256), info->size);
  });
}

}  // namespace hearth::models
