/*
 * The naming rules of LITE, implemented once in C so that every component
 * applies the same ones: libLITE (api/lite.c, C), the agent and the cluster
 * manager (through the C++ wrapper in names.h). The limits come from
 * lite.ko's ABI header (kmod/include/uapi/lite.h).
 *
 * LMR names:  1..LITE_NAME_MAX (128) characters from [A-Za-z0-9._:/-].
 * Node names: 1..LITE_NODE_NAME_MAX (64) characters from [a-z0-9._-] (lower
 * case only), not ending with '.'.
 * Both start with a letter or digit.
 */
#ifndef LITE_COMMON_NAMES_NAME_RULES_H_
#define LITE_COMMON_NAMES_NAME_RULES_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lite_name_kind {
  LITE_NAME_KIND_LMR,
  LITE_NAME_KIND_NODE,
};

/* The longest name of @kind, in characters. */
size_t lite_name_max(enum lite_name_kind kind);

/* The characters a name of @kind may have: "[A-Za-z0-9._:/-]" for LMRs. */
const char *lite_name_chars(enum lite_name_kind kind);

/*
 * 0 if the @len bytes at @name (no NUL needed; a NUL inside is a bad
 * character) are a valid name of @kind. Otherwise -EINVAL, and when
 * @msg_size > 0 the reason in @msg, NUL-terminated and cut to fit, naming
 * @field, the value (quoted, at most 80 characters, unprintable ones as
 * '?') and what would be accepted, e.g.
 *   node_name "a/b" has character 0x2f at offset 1; only [a-z0-9._-] are
 *   allowed
 */
int lite_name_check(enum lite_name_kind kind, const char *field,
                    const char *name, size_t len, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* LITE_COMMON_NAMES_NAME_RULES_H_ */
