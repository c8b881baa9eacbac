// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: this node's identity (node id, incarnation, RDMA address) and the
 * rdma_cm listener peers connect to. Once the node listens, it connects to
 * itself as well (the loopback peer, lite_peer.c): operations on the LMRs
 * it hosts use those connections.
 *
 * With peer_auth, the loopback connections are authenticated like the
 * others, with a secret lite.ko makes for each identity (random, never
 * leaves the kernel).
 *
 * The listener is created and destroyed only under lite_listen_mutex, which
 * rdma_cm handlers never take, so rdma_destroy_id() on it (which waits for
 * a running handler) can be called with that mutex held but never with
 * lite_lock, which the handlers do take.
 *
 * A listener is known to the DEVICE_REMOVAL handler from the moment it is
 * created, not only once installed: rdma_bind_addr() attaches it to the
 * device, and the device can go before its creator takes lite_lock to
 * install it. Then the handler must not return 1 (rdma_cm would destroy an
 * id its creator is still using) nor forget it (nobody would destroy it,
 * and ib_unregister_device() would wait for it for ever): it marks it lost,
 * and the creator destroys it instead of installing it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/string.h>
#include <net/net_namespace.h>

#include "lite_transport.h"

#define LITE_LISTEN_BACKLOG 128

static struct {
	bool set;
	bool stopping;			/* module unload: no new listener */
	struct lite_node_id id;
	struct rdma_cm_id *listener;
	/* Being created, bound and started (under lite_listen_mutex too). */
	struct rdma_cm_id *installing;
	bool installing_lost;		/* its device went meanwhile */
} lite_node;				/* under lite_lock */

static DEFINE_MUTEX(lite_listen_mutex);

/* The listener's context: tells its own events from its children's. */
static char lite_listener_tag;

static void lite_listen_work_fn(struct work_struct *work);
static DECLARE_WORK(lite_listen_work, lite_listen_work_fn);

bool lite_node_name_valid(const char name[LITE_NODE_NAME_BUF])
{
	size_t len = strnlen(name, LITE_NODE_NAME_BUF);
	size_t i;

	if (!len || len > LITE_NODE_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = name[i];

		/* ASCII only: the kernel's isalnum() takes Latin-1 letters too. */
		if (isascii(c) && isalnum(c))
			continue;
		if (i && (c == '.' || c == '_' || c == '-'))
			continue;
		return false;
	}
	return true;
}

bool lite_node_get_locked(struct lite_node_id *out)
{
	lockdep_assert_held(&lite_lock);
	if (!lite_node.set)
		return false;
	*out = lite_node.id;
	return true;
}

int lite_node_device_get(struct lite_device **out)
{
	int ret = 0;

	mutex_lock(&lite_lock);
	if (!lite_node.set) {
		ret = -ENXIO;
	} else if (!lite_node.listener || !lite_node.listener->device) {
		ret = -ENODEV;
	} else {
		/* The listener holds the device until rdma_cm removes it. */
		*out = lite_device_get(lite_node.listener->device);
		if (!*out)
			ret = -ENODEV;
	}
	mutex_unlock(&lite_lock);
	return ret;
}

/*
 * The listener lost its device. Whoever takes lite_node.listener destroys
 * it: here that is rdma_cm, by the non-zero return. One not installed yet
 * is its creator's to destroy (lite_listener_claim_locked()).
 */
static int lite_listener_removed(struct rdma_cm_id *id)
{
	bool mine = false;
	__be32 addr;

	mutex_lock(&lite_lock);
	if (lite_node.listener == id) {
		lite_node.listener = NULL;
		mine = true;
	} else if (lite_node.installing == id) {
		lite_node.installing_lost = true;
	}
	addr = lite_node.id.addr;
	mutex_unlock(&lite_lock);
	if (mine)
		pr_warn("RDMA device of %pI4 removed; not listening until it is back\n",
			&addr);
	return mine ? 1 : 0;
}

/*
 * rdma_cm hands connection requests to the listener's handler, and the new
 * ids inherit it: after lite_conn_request() has accepted one, its context
 * is the connection and its events go to lite_conn_event().
 */
static int lite_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return lite_conn_request(id, ev);
	if (id->context != &lite_listener_tag)
		return lite_conn_event(id, ev);

	switch (ev->event) {
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return lite_listener_removed(id);
	default:
		pr_debug("listener: %s (%d)\n", rdma_event_msg(ev->event),
			 ev->status);
		return 0;
	}
}

/*
 * Under lite_lock: the caller of a successful lite_listen() takes @id to
 * install it. False if its device went meanwhile: the caller then destroys
 * it (after unlocking; rdma_cm's device removal waits for that).
 */
static bool lite_listener_claim_locked(struct rdma_cm_id *id)
{
	bool lost = lite_node.installing_lost;

	lockdep_assert_held(&lite_lock);
	WARN_ON_ONCE(lite_node.installing != id);
	lite_node.installing = NULL;
	lite_node.installing_lost = false;
	if (lost)
		pr_info("a new listener lost its RDMA device while starting; destroyed\n");
	return !lost;
}

/*
 * A new listener on @addr, known to lite_listener_removed() as installing
 * until the caller claims it (lite_listener_claim_locked()). Under
 * lite_listen_mutex, so there is one at a time.
 */
static int lite_listen(__be32 addr, struct rdma_cm_id **out)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(lite_cm_port),
		.sin_addr.s_addr = addr,
	};
	struct rdma_cm_id *id;
	int ret;

	lockdep_assert_held(&lite_listen_mutex);
	id = rdma_create_id(&init_net, lite_listen_handler, &lite_listener_tag,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	/* Before the bind: from there on the device can remove it. */
	mutex_lock(&lite_lock);
	lite_node.installing = id;
	lite_node.installing_lost = false;
	mutex_unlock(&lite_lock);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, LITE_LISTEN_BACKLOG);
	if (ret) {
		mutex_lock(&lite_lock);
		lite_node.installing = NULL;
		lite_node.installing_lost = false;
		mutex_unlock(&lite_lock);
		rdma_destroy_id(id);
		return ret;
	}
	*out = id;
	return 0;
}

/* The same identity with another name (or none): nothing else changes. */
static void lite_node_rename_locked(const char *name)
{
	lockdep_assert_held(&lite_lock);
	if (!strcmp(lite_node.id.name, name))
		return;
	if (name[0])
		pr_info("node %u is named %s\n", lite_node.id.id, name);
	else
		pr_info("node %u has no name now\n", lite_node.id.id);
	strscpy(lite_node.id.name, name, sizeof(lite_node.id.name));
}

/*
 * The loopback peer's secret, keyed (peer_auth only; NULL otherwise, or if
 * the kernel cannot: then the node cannot reach its own LMRs, and says so).
 */
static struct crypto_shash *lite_loopback_key_alloc(u32 id)
{
	u8 secret[LITE_PEER_SECRET_LEN];
	struct crypto_shash *key;

	if (!lite_peer_auth)
		return NULL;
	get_random_bytes(secret, sizeof(secret));
	key = lite_peer_key_alloc(secret);
	memzero_explicit(secret, sizeof(secret));
	if (IS_ERR(key)) {
		pr_warn("node %u: cannot key hmac(sha256) (%ld): no loopback connections\n",
			id, PTR_ERR(key));
		return NULL;
	}
	return key;
}

/*
 * The node's identity @nid with its new @listener (claimed); *@key goes to
 * a new loopback peer. @dev gets the device's name: once lite_lock is
 * dropped, a device removal may free the listener.
 */
static void lite_node_install_locked(const struct lite_node_id *nid,
				     struct rdma_cm_id *listener,
				     struct crypto_shash **key,
				     char dev[IB_DEVICE_NAME_MAX])
{
	lockdep_assert_held(&lite_lock);
	lite_node.id = *nid;
	lite_node.listener = listener;
	lite_node.set = true;
	lite_transport_ops->node_set_locked(nid->id);
	/* Without it, operations on this node's own LMRs fail (EHOSTDOWN). */
	if (lite_loopback_set_locked(nid, key))
		pr_warn("node %u: no memory for the loopback connections\n",
			nid->id);
	strscpy(dev, dev_name(&listener->device->dev), IB_DEVICE_NAME_MAX);
}

int lite_node_set(const struct lite_node_id *nid, struct netlink_ext_ack *extack)
{
	struct rdma_cm_id *old, *listener;
	char dev[IB_DEVICE_NAME_MAX];
	struct crypto_shash *key;
	bool same;
	int ret = 0;

	/* Before any lock: allocating it may load the algorithm. */
	key = lite_loopback_key_alloc(nid->id);
	mutex_lock(&lite_listen_mutex);
	mutex_lock(&lite_lock);
	same = lite_node.set && lite_node.id.id == nid->id &&
	       lite_node.id.incarnation == nid->incarnation &&
	       lite_node.id.addr == nid->addr;
	if (!same && lite_peers_count_locked()) {
		mutex_unlock(&lite_lock);
		NL_SET_ERR_MSG(extack, "remove every peer before changing the node identity");
		ret = -EBUSY;
		goto out;
	}
	/* Lookups by name must find one node (only peers of @same can clash). */
	if (nid->name[0] && lite_peer_find_name_locked(nid->name)) {
		mutex_unlock(&lite_lock);
		NL_SET_ERR_MSG(extack, "a peer has this name");
		ret = -EEXIST;
		goto out;
	}
	/* The same identity again: done, or listen again if that was lost. */
	if (same && lite_node.listener) {
		lite_node_rename_locked(nid->name);
		mutex_unlock(&lite_lock);
		goto out;
	}
	old = lite_node.listener;
	lite_node.listener = NULL;
	if (!same) {
		lite_node.set = false;
		lite_loopback_set_locked(NULL, NULL);
	}
	mutex_unlock(&lite_lock);

	if (old)
		rdma_destroy_id(old);

	ret = lite_listen(nid->addr, &listener);
	if (!ret) {
		mutex_lock(&lite_lock);
		if (lite_listener_claim_locked(listener)) {
			lite_node_install_locked(nid, listener, &key, dev);
			mutex_unlock(&lite_lock);
			pr_info("node %s%s%u%s incarnation %llu, listening on %pI4 port %u (%s)\n",
				nid->name, nid->name[0] ? " (" : "", nid->id,
				nid->name[0] ? ")" : "", nid->incarnation,
				&nid->addr, lite_cm_port, dev);
			goto out;
		}
		/* Its device went while it was being started. */
		mutex_unlock(&lite_lock);
		rdma_destroy_id(listener);
		ret = -ENODEV;
	}
	switch (ret) {
	case -EADDRNOTAVAIL:
	case -ENODEV:
		NL_SET_ERR_MSG(extack, "the address is not on an RDMA device of this node");
		ret = -EADDRNOTAVAIL;
		goto out;
	case -EADDRINUSE:
		NL_SET_ERR_MSG(extack, "the rdma_cm port is already in use on this address");
		goto out;
	default:
		NL_SET_ERR_MSG(extack, "cannot listen with rdma_cm on the address");
		break;
	}
out:
	mutex_unlock(&lite_listen_mutex);
	/* Unused: the same identity keeps its loopback peer and secret. */
	if (key)
		crypto_free_shash(key);
	return ret;
}

/* A device came (back): listen again if the node lost its listener. */
static void lite_listen_work_fn(struct work_struct *work)
{
	struct rdma_cm_id *listener = NULL;
	__be32 addr;
	bool need;

	mutex_lock(&lite_listen_mutex);
	mutex_lock(&lite_lock);
	need = lite_node.set && !lite_node.listener && !lite_node.stopping;
	addr = lite_node.id.addr;
	mutex_unlock(&lite_lock);

	if (need && !lite_listen(addr, &listener)) {
		mutex_lock(&lite_lock);
		/* (A lost listener is destroyed below, as an unwanted one.) */
		if (lite_listener_claim_locked(listener) && lite_node.set &&
		    !lite_node.listener && !lite_node.stopping &&
		    lite_node.id.addr == addr) {
			lite_node.listener = listener;
			listener = NULL;
			pr_info("listening on %pI4 port %u again\n", &addr,
				lite_cm_port);
		}
		mutex_unlock(&lite_lock);
	}
	mutex_unlock(&lite_listen_mutex);
	if (listener)
		rdma_destroy_id(listener);
}

void lite_node_device_added(void)
{
	queue_work(lite_wq, &lite_listen_work);
}

/* Module unload: stop accepting connections. */
void lite_node_exit(void)
{
	struct rdma_cm_id *old;

	mutex_lock(&lite_lock);
	lite_node.stopping = true;
	mutex_unlock(&lite_lock);
	cancel_work_sync(&lite_listen_work);

	mutex_lock(&lite_listen_mutex);
	mutex_lock(&lite_lock);
	old = lite_node.listener;
	lite_node.listener = NULL;
	mutex_unlock(&lite_lock);
	/* Waits for a connection request being handled on it. */
	if (old)
		rdma_destroy_id(old);
	mutex_unlock(&lite_listen_mutex);
}
