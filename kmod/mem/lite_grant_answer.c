// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the agent's answer to a MAP upcall (LITE_CMD_UPCALL_COMPLETE with
 * the manager's grant) parsed and checked into a struct lite_grant, before
 * lite_upcall.c matches it with its upcall and installs it. Every field is
 * checked here; the chunk nest's shape was checked by the policy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <net/genetlink.h>

#include "lite_mem.h"
#include "lite_grant.h"

static int lite_nl_get_u64_nonzero_grant(struct genl_info *info, u64 *out)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_GRANT_ID];

	*out = nla_get_u64(attr);
	if (!*out) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_GRANT_ID: grant id 0 is reserved");
		return -EINVAL;
	}
	return 0;
}

static int lite_nl_get_home(struct genl_info *info, u32 *out)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_NODE_ID];

	*out = nla_get_u32(attr);
	if (!*out) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_NODE_ID: node id 0 is reserved");
		return -EINVAL;
	}
	return 0;
}

/*
 * The chunks of a MAP answer: 1..LITE_CHUNKS_MAX, lengths adding up to size,
 * none wrapping around, every one but the last a multiple of
 * LITE_CHUNK_UNIT.
 */
static int lite_nl_grant_chunks(struct genl_info *info, struct lite_grant *g,
				u32 nr)
{
	struct nlattr *chunks = info->attrs[LITE_ATTR_CHUNKS];
	struct nlattr *tb[LITE_CHUNK_ATTR_MAX + 1];
	struct nlattr *chunk;
	u64 offset = 0;
	int rem, ret;
	u32 i = 0;

	nla_for_each_nested(chunk, chunks, rem) {
		struct lite_chunk *c = &g->chunks[i];

		/* The policy checked each one's type, nesting and fields. */
		ret = nla_parse_nested(tb, LITE_CHUNK_ATTR_MAX, chunk, NULL,
				       info->extack);
		if (ret)
			return ret;
		if (!tb[LITE_CHUNK_ATTR_ADDR] || !tb[LITE_CHUNK_ATTR_LENGTH]) {
			NL_SET_ERR_MSG_ATTR(info->extack, chunk,
					    "LITE_ATTR_CHUNK: needs LITE_CHUNK_ATTR_ADDR and LITE_CHUNK_ATTR_LENGTH");
			return -EINVAL;
		}
		c->addr = nla_get_u64(tb[LITE_CHUNK_ATTR_ADDR]);
		c->length = nla_get_u64(tb[LITE_CHUNK_ATTR_LENGTH]);
		c->offset = offset;
		if (!c->length || c->length > g->size - offset) {
			NL_SET_ERR_MSG_ATTR(info->extack, chunk,
					    "LITE_ATTR_CHUNK: length 0, or the lengths add up to more than LITE_ATTR_SIZE");
			return -EINVAL;
		}
		/*
		 * No range that wraps around the address space: whatever the
		 * key mode, no home registered one, and a work request's
		 * address past the wrap would reach the bottom of memory.
		 */
		if (c->addr + c->length < c->addr) {
			NL_SET_ERR_MSG_ATTR(info->extack, chunk,
					    "LITE_ATTR_CHUNK: address + length wraps around");
			return -EINVAL;
		}
		/*
		 * Every home makes its chunks of whole pages, the last one
		 * perhaps cut at the LMR's size (lite_lmr.c). The data path
		 * counts on it: a 16 KiB operation then spans at most a few
		 * chunks and fits one batch of work requests (LITE_OP_WRS),
		 * which a list of tiny chunks from a compromised manager
		 * would overflow (review 2026-11-28 M2).
		 */
		if (c->length < g->size - offset &&
		    !IS_ALIGNED(c->length, LITE_CHUNK_UNIT)) {
			NL_SET_ERR_MSG_ATTR(info->extack, chunk,
					    "LITE_ATTR_CHUNK: every chunk but the last must be a multiple of 4 KiB");
			return -EINVAL;
		}
		offset += c->length;
		i++;
	}
	if (i != nr || offset != g->size) {
		NL_SET_ERR_MSG_ATTR(info->extack, chunks,
				    "LITE_ATTR_CHUNKS: the lengths do not add up to LITE_ATTR_SIZE");
		return -EINVAL;
	}
	return 0;
}

/* The grant of a MAP answer, checked; one reference. */
int lite_nl_grant_parse(struct genl_info *info, u32 asked,
			struct lite_grant **out)
{
	static const int required[] = {
		LITE_ATTR_GRANT_ID, LITE_ATTR_LMR_ID, LITE_ATTR_NAME,
		LITE_ATTR_NODE_ID, LITE_ATTR_ACCESS, LITE_ATTR_EPOCH,
		LITE_ATTR_SIZE, LITE_ATTR_MEMORY_KEY, LITE_ATTR_CHUNKS,
		LITE_ATTR_INCARNATION, LITE_ATTR_GRANTED_AT_MS,
	};
	struct nlattr *chunk, *attr;
	struct lite_grant *g;
	u32 nr = 0;
	int i, rem, ret;

	for (i = 0; i < ARRAY_SIZE(required); i++) {
		if (!info->attrs[required[i]]) {
			NL_SET_ERR_ATTR_MISS(info->extack, NULL, required[i]);
			NL_SET_ERR_MSG(info->extack,
				       "a MAP answer needs LITE_ATTR_GRANT_ID, LMR_ID, NAME, NODE_ID, ACCESS, EPOCH, SIZE, MEMORY_KEY, CHUNKS, INCARNATION and GRANTED_AT_MS");
			return -EINVAL;
		}
	}
	nla_for_each_nested(chunk, info->attrs[LITE_ATTR_CHUNKS], rem) {
		if (nla_type(chunk) != LITE_ATTR_CHUNK || ++nr > LITE_CHUNKS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, chunk,
					    "LITE_ATTR_CHUNKS: 1..4096 LITE_ATTR_CHUNK");
			return -EINVAL;
		}
	}
	if (!nr) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[LITE_ATTR_CHUNKS],
				    "LITE_ATTR_CHUNKS: 1..4096 LITE_ATTR_CHUNK");
		return -EINVAL;
	}

	/*
	 * Accounted: the caller runs this in the requester's memcg
	 * (set_active_memcg()), which the grant is charged to while it lives.
	 */
	g = kvzalloc(struct_size(g, chunks, nr), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	kref_init(&g->ref);
	init_waitqueue_head(&g->drained);
	INIT_WORK(&g->unmap_work, lite_grant_unmap_work);
	g->nr_chunks = nr;
	ret = lite_nl_get_u64_nonzero_grant(info, &g->grant_id);
	if (!ret)
		ret = lite_nl_get_lmr_id(info, LITE_ATTR_LMR_ID, &g->lmr_id);
	if (!ret)
		ret = lite_nl_get_name(info, g->name);
	if (!ret)
		ret = lite_nl_get_home(info, &g->home_node_id);
	if (!ret)
		ret = lite_nl_get_size(info, &g->size);
	if (ret)
		goto err;
	attr = info->attrs[LITE_ATTR_ACCESS];
	g->access = nla_get_u32(attr);
	if (!g->access || (g->access & ~asked)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_ACCESS: not 0 and no more than the application asked for");
		ret = -EINVAL;
		goto err;
	}
	attr = info->attrs[LITE_ATTR_INCARNATION];
	g->incarnation = nla_get_u64(attr);
	if (!g->incarnation) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_INCARNATION: incarnation 0 is reserved");
		ret = -EINVAL;
		goto err;
	}
	g->epoch = nla_get_u64(info->attrs[LITE_ATTR_EPOCH]);
	g->memory_key = nla_get_u32(info->attrs[LITE_ATTR_MEMORY_KEY]);
	g->granted_at_ms = nla_get_s64(info->attrs[LITE_ATTR_GRANTED_AT_MS]);
	ret = lite_nl_grant_chunks(info, g, nr);
	if (ret)
		goto err;
	*out = g;
	return 0;
err:
	kvfree(g);
	return ret;
}
