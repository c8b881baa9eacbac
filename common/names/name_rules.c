#include "common/names/name_rules.h"

#include <errno.h>
#include <stdio.h>

#include "kmod/include/uapi/lite.h"

/* How much of a bad value an error message shows. */
#define SHOWN_MAX 80

size_t lite_name_max(enum lite_name_kind kind) {
  return kind == LITE_NAME_KIND_NODE ? LITE_NODE_NAME_MAX : LITE_NAME_MAX;
}

const char *lite_name_chars(enum lite_name_kind kind) {
  return kind == LITE_NAME_KIND_NODE ? "[a-z0-9._-]" : "[A-Za-z0-9._:/-]";
}

/*
 * Not isalnum(): names must not depend on the caller's locale. Node names
 * are lower case only: a node's name is its certificate's name, and
 * "Node1" beside "node1" (or "node1.") would be two identities that read
 * as one (review cp-2026-11-28 L1).
 */
static int is_alnum(enum lite_name_kind kind, unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (kind == LITE_NAME_KIND_LMR && c >= 'A' && c <= 'Z');
}

static int is_name_char(enum lite_name_kind kind, unsigned char c) {
  if (is_alnum(kind, c) || c == '.' || c == '_' || c == '-') return 1;
  return kind == LITE_NAME_KIND_LMR && (c == ':' || c == '/');
}

/* The value as a person wants to see it in an error: quoted, cut short. */
static void quote(char out[SHOWN_MAX + 6], const char *name, size_t len) {
  size_t shown = len < SHOWN_MAX ? len : SHOWN_MAX;
  size_t i, n = 0;

  out[n++] = '"';
  for (i = 0; i < shown; i++) {
    unsigned char c = (unsigned char)name[i];

    out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (len > SHOWN_MAX) {
    out[n++] = '.';
    out[n++] = '.';
    out[n++] = '.';
  }
  out[n++] = '"';
  out[n] = '\0';
}

int lite_name_check(enum lite_name_kind kind, const char *field,
                    const char *name, size_t len, char *msg, size_t msg_size) {
  const size_t max = lite_name_max(kind);
  const char *chars = lite_name_chars(kind);
  char quoted[SHOWN_MAX + 6];
  size_t i;

  if (len == 0) {
    if (msg_size > 0)
      snprintf(msg, msg_size, "%s is empty; give 1 to %zu characters from %s",
               field, max, chars);
    return -EINVAL;
  }
  quote(quoted, name, len);
  if (len > max) {
    if (msg_size > 0)
      snprintf(msg, msg_size, "%s %s is %zu characters long; the limit is %zu",
               field, quoted, len, max);
    return -EINVAL;
  }
  if (!is_alnum(kind, (unsigned char)name[0])) {
    if (msg_size > 0)
      snprintf(msg, msg_size, "%s %s must start with a %sletter or digit",
               field, quoted, kind == LITE_NAME_KIND_NODE ? "lower-case " : "");
    return -EINVAL;
  }
  for (i = 1; i < len; i++) {
    unsigned char c = (unsigned char)name[i];

    if (is_name_char(kind, c)) continue;
    if (msg_size > 0)
      snprintf(msg, msg_size,
               "%s %s has character 0x%02x at offset %zu; only %s are allowed",
               field, quoted, c, i, chars);
    return -EINVAL;
  }
  /* "node1." is "node1" to DNS and to gRPC's host name check. */
  if (kind == LITE_NAME_KIND_NODE && name[len - 1] == '.') {
    if (msg_size > 0)
      snprintf(msg, msg_size, "%s %s must not end with '.'", field, quoted);
    return -EINVAL;
  }
  return 0;
}
