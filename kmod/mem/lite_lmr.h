/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: a hosted LMR, for the two files that reach into one: lite_lmr.c
 * (the table, the netlink commands, the memory) and lite_lmr_mr.c (its
 * memory region with key_mode=lmr, quarantine, device removal). Everyone
 * else sees struct lite_lmr through lite_mem.h's functions only.
 */
#ifndef LITE_LMR_H
#define LITE_LMR_H

#include <linux/log2.h>
#include <linux/mmzone.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>

#include "lite_mem.h"

/*
 * Chunks are at most the largest order the page allocator gives: 4 MiB
 * with 4 KiB pages and the default configuration. Not from MAX_ORDER: until
 * 6.4 it was one past that order, 6.4 made it the order itself, and 6.8
 * renamed it MAX_PAGE_ORDER. MAX_ORDER_NR_PAGES, the pages of the largest
 * block, has meant the same in all of them.
 */
#define LITE_LMR_MAX_ORDER	ilog2(MAX_ORDER_NR_PAGES)
#define LITE_LMR_CHUNK_MAX	(PAGE_SIZE << LITE_LMR_MAX_ORDER)

/*
 * LMR ids are u64 and index lite_lmrs (and grant ids the grant table): an
 * xarray index is an unsigned long, so a 32-bit kernel would alias ids.
 * Kbuild refuses such a kernel with a message; this is the backstop.
 */
static_assert(sizeof(unsigned long) >= sizeof(u64),
	      "lite.ko needs a 64-bit kernel (u64 xarray indexes)");

struct lite_lmr_chunk {
	struct page *page;
	u64 dma;
	u64 length;		/* bytes of the LMR in it (<= the block) */
	unsigned int order;
};

struct lite_lmr {
	struct kref ref;
	struct list_head all;		/* lite_lmrs_all, under lite_lmr_dma_lock */
	/* Under lite_lmr_mutex. */
	u64 lmr_id;
	u64 epoch;
	/*
	 * The manager freed it and the home waits for LMR_FREE (LMR_UPDATE
	 * with LITE_ATTR_RELEASING; never cleared). Only remembered for the
	 * agent: a restarted one must not bring the LMR back as live.
	 */
	bool releasing;
	/* Fixed once hosted. */
	u64 size;
	u32 uid, gid, mode;
	u32 memory_key;
	char name[LITE_NAME_BUF];
	/*
	 * Set by LMR_FREE under lite_grants_mutex, in the pass that revokes
	 * the grants into it: a grant installed later is refused (see
	 * lite_grant_install()), so none escapes the revoke.
	 */
	bool unhosted;
	/* Committed: its size is in lite_lmr_bytes until it is released. */
	bool counted;
	/*
	 * The device the chunks are mapped on: changed under
	 * lite_lmr_unmap_mutex and lite_lmr_dma_lock, read under either.
	 */
	struct lite_device *ldev;
	/*
	 * key_mode=lmr: the LMR's regions over the same pages (under
	 * lite_lmr_unmap_mutex), read-write (memory_key) and read-only
	 * (read_key, 0 in key_mode=global), and their start.
	 */
	struct ib_mr *mr;
	struct ib_mr *read_mr;
	u32 read_key;
	u64 iova;
	/* A region could not be deregistered: the pages are never freed. */
	bool leak;
	/* lite_lmrs_quarantined, under lite_lmr_mutex. */
	struct list_head quarantine;
	/* Device removal's list of the LMRs it lost, and their ids. */
	struct list_head lost;
	u64 lost_id;
	u32 nr_mapped;
	u32 nr_chunks;
	struct lite_lmr_chunk chunks[];
};

/* lite_lmr.c: the table and the locks (their rules are there). */
extern struct xarray lite_lmrs;
extern struct mutex lite_lmr_mutex;
extern struct list_head lite_lmrs_all;
extern spinlock_t lite_lmr_dma_lock;
extern struct mutex lite_lmr_unmap_mutex;
extern struct list_head lite_lmrs_quarantined;

/* Unmaps the chunks mapped on lmr->ldev; returns the device's reference. */
struct lite_device *lite_lmr_unmap_locked(struct lite_lmr *lmr);

/*
 * lite_lmr_mr.c. lite_lmr_floor(): key_mode=lmr's smallest chunk order for
 * an LMR of @size bytes on @ldev (-ENOMEM: none fits one region).
 * lite_lmr_register(): the chunks become two regions, read-write and
 * read-only, valid on return.
 * lite_lmr_mr_drop(): invalidates and deregisters both (under
 * lite_lmr_unmap_mutex); if that fails, lmr->leak. lite_lmr_quarantine():
 * LMR_FREE with LITE_ATTR_QUARANTINE, taking the table's reference.
 */
int lite_lmr_floor(struct lite_device *ldev, u64 size, unsigned int *floor);
int lite_lmr_register(struct lite_lmr *lmr, unsigned int floor);
void lite_lmr_mr_drop(struct lite_lmr *lmr);
void lite_lmr_quarantine(struct lite_lmr *lmr);

#endif /* LITE_LMR_H */
