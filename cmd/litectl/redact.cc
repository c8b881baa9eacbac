#include "cmd/litectl/redact.h"

namespace lite::litectl {

void Redact(lite::v1::Lmr* lmr) {
  lmr->clear_memory_key();
  lmr->clear_read_key();
  lmr->clear_chunks();
}

void Redact(lite::v1::Grant* grant) {
  grant->clear_memory_key();
  grant->clear_chunks();
}

void Redact(lite::v1::Event* event) {
  // Of the event kinds, only LmrAdded carries an Lmr; the others carry
  // ids, names and causes.
  if (event->has_lmr_added()) {
    Redact(event->mutable_lmr_added()->mutable_lmr());
  }
}

}  // namespace lite::litectl
