// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: LMR names and the checks of LMR attributes in netlink commands,
 * each with its own message (LITE_CMD_LMR_*, MAP answers).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <net/genetlink.h>

#include "lite_mem.h"

bool lite_name_valid(const char *name)
{
	size_t len = strnlen(name, LITE_NAME_BUF);
	size_t i;

	if (!len || len > LITE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = name[i];

		/* ASCII only: the kernel's isalnum() takes Latin-1 letters too. */
		if (isascii(c) && isalnum(c))
			continue;
		if (i && (c == '.' || c == '_' || c == ':' || c == '/' ||
			  c == '-'))
			continue;
		return false;
	}
	return true;
}

int lite_nl_get_lmr_id(struct genl_info *info, int type, u64 *id)
{
	struct nlattr *attr = info->attrs[type];

	*id = nla_get_u64(attr);
	if (*id)
		return 0;
	if (type == LITE_ATTR_NEW_LMR_ID)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_NEW_LMR_ID: lmr id 0 is reserved");
	else
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_LMR_ID: lmr id 0 is reserved");
	return -EINVAL;
}

int lite_nl_get_name(struct genl_info *info, char *buf)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_NAME];

	/* The policy made it NUL-terminated and at most LITE_NAME_MAX long. */
	strscpy(buf, nla_data(attr), LITE_NAME_BUF);
	if (!lite_name_valid(buf)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_NAME: 1..128 characters of [A-Za-z0-9._:/-], the first a letter or digit");
		return -EINVAL;
	}
	return 0;
}

int lite_nl_get_size(struct genl_info *info, u64 *size)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_SIZE];

	*size = nla_get_u64(attr);
	if (!*size || *size > LITE_LMR_SIZE_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_SIZE: out of range (1..64 GiB)");
		return -EINVAL;
	}
	return 0;
}

/* LITE_ATTR_UID or LITE_ATTR_GID: not (u32)-1. */
static int lite_nl_get_id32(struct genl_info *info, int type, u32 *out)
{
	struct nlattr *attr = info->attrs[type];

	*out = nla_get_u32(attr);
	if (*out != (u32)-1)
		return 0;
	if (type == LITE_ATTR_UID)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_UID: uid 4294967295 is not a user");
	else
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_GID: gid 4294967295 is not a group");
	return -EINVAL;
}

int lite_nl_lmr_alloc_args(struct genl_info *info, struct lite_lmr_args *a)
{
	struct nlattr *attr;
	int ret;

	if (!lite_nl_require(info, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID") ||
	    !lite_nl_require(info, LITE_ATTR_NAME, "LITE_ATTR_NAME") ||
	    !lite_nl_require(info, LITE_ATTR_SIZE, "LITE_ATTR_SIZE") ||
	    !lite_nl_require(info, LITE_ATTR_UID, "LITE_ATTR_UID") ||
	    !lite_nl_require(info, LITE_ATTR_GID, "LITE_ATTR_GID") ||
	    !lite_nl_require(info, LITE_ATTR_MODE, "LITE_ATTR_MODE"))
		return -EINVAL;
	ret = lite_nl_get_lmr_id(info, LITE_ATTR_LMR_ID, &a->lmr_id);
	if (!ret)
		ret = lite_nl_get_name(info, a->name);
	if (!ret)
		ret = lite_nl_get_size(info, &a->size);
	if (!ret)
		ret = lite_nl_get_id32(info, LITE_ATTR_UID, &a->uid);
	if (!ret)
		ret = lite_nl_get_id32(info, LITE_ATTR_GID, &a->gid);
	if (ret)
		return ret;
	attr = info->attrs[LITE_ATTR_MODE];
	a->mode = nla_get_u32(attr);
	if (a->mode & ~0666U) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_MODE: not a subset of 0666");
		return -EINVAL;
	}
	return 0;
}
