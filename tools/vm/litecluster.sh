#!/bin/bash
# litecluster.sh: a whole LITE cluster inside a `litevm run` cluster.
#
# Sourced by a command that `litevm run` runs on the host (inside the
# cluster's network namespace): it starts litemgr on the bridge address and
# a liteagent with the real lite.ko module in every guest, waits until every
# node has joined and every pair of nodes has its RC QPs up, and stops it all
# again. Used by tests/vm/datapath.sh, tools/demo.sh and tools/bench/compare.
#
# Needs: LITE_BIN (Bazel's bin directory with //controlplane:litemgr,
# //agent:liteagent, //cmd/litectl and //cmd/litenl built), and the
# variables `litevm run` sets (LITE_VM_STATE, LITE_VM_GUESTS,
# LITE_VM_BRIDGE_IP).
#
# The control plane runs with mutual TLS: lc_start makes a CA and
# certificates with cmd/litecerts in $LITE_VM_STATE/tls on the host (the
# manager's "litemgr", one per guest named as its node, "nodeN", and an
# operator "ops" for litectl), once per cluster. Each guest gets its node's
# files in its control folder ($LITE_VM_STATE/gN/ctl/tls, /run/litevm/tls in
# the guest: the guests' /tmp is an overlay that need not show host files
# made after boot). LITE_INSECURE=1 keeps the old plaintext mode.
#
# Safe under `set -euo pipefail`.
#
# Functions:
#   lc_start [LEASE_MS]   manager + one agent per guest (lease default 10 s);
#                         returns once ready
#                         (every node ALIVE, every guest's peers connected),
#                         or fails with the logs' tails after 120 s
#   lc_node_name GUEST    prints the name guest GUEST's agent joins with
#                         (node1, node2, ...: the node's name everywhere)
#   lc_node_id GUEST      prints the node id the manager gave guest GUEST
#                         (ids are handed out in join order: node2 may be 3)
#   lc_node_label GUEST   prints e.g. "node2 (id 3)"
#   lc_stop               stops agents and manager (also on EXIT)
#   lc_logs               prints the tails of the manager and agent logs
#   lc_tls_summary        one line: how the control plane runs (mutual TLS
#                         and the certificates' names, or plaintext)
# Environment after lc_start: LITE_MANAGER (for litectl), LC_MANAGER_PID;
# with TLS also LITE_TLS_CERT, LITE_TLS_KEY, LITE_TLS_CA (the operator's
# certificate, for litectl) and LC_TLS_DIR.

LC_PORT=7420
LC_AGENT_PORT=7421
LC_CM_PORT=18600
LC_MANAGER_PID=
declare -ga LC_AGENT_JOBS=()

LC_LITECERTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/cmd/litecerts
LC_OPERATOR=ops

lc_log() { printf '%s %s\n' "$(date +%T)" "$*"; }

lc_insecure() { [[ ${LITE_INSECURE-} == 1 ]]; }

# lc_tls_setup: the cluster's certificates (made once per cluster), each
# guest's copied into its control folder, and litectl's in the environment.
lc_tls_setup() {
	local g name ctl
	LC_TLS_DIR=$LITE_VM_STATE/tls
	if [[ ! -f $LC_TLS_DIR/ca.crt ]]; then
		"$LC_LITECERTS" "$LC_TLS_DIR" ca > /dev/null || return 1
		"$LC_LITECERTS" "$LC_TLS_DIR" manager > /dev/null || return 1
		"$LC_LITECERTS" "$LC_TLS_DIR" operator "$LC_OPERATOR" > /dev/null || return 1
	fi
	for ((g = 1; g <= LITE_VM_GUESTS; g++)); do
		name=$(lc_node_name "$g")
		if [[ ! -f $LC_TLS_DIR/$name.crt ]]; then
			"$LC_LITECERTS" "$LC_TLS_DIR" node "$name" > /dev/null || return 1
		fi
	done
	# Every guest's copy once all are issued: the same authz file everywhere.
	for ((g = 1; g <= LITE_VM_GUESTS; g++)); do
		name=$(lc_node_name "$g")
		ctl=$LITE_VM_STATE/g$g/ctl/tls
		mkdir -p "$ctl"
		# The authz file too: the agent's NodeAgent answers operators only.
		cp "$LC_TLS_DIR/ca.crt" "$LC_TLS_DIR/authz" "$LC_TLS_DIR/$name.crt" "$ctl/"
		(umask 077 && cp "$LC_TLS_DIR/$name.key" "$ctl/")
	done
	export LITE_TLS_CERT=$LC_TLS_DIR/$LC_OPERATOR.crt
	export LITE_TLS_KEY=$LC_TLS_DIR/$LC_OPERATOR.key
	export LITE_TLS_CA=$LC_TLS_DIR/ca.crt
	export LC_TLS_DIR
}

# lc_manager_tls_flags, lc_agent_tls_flags GUEST: the daemons' TLS flags.
lc_manager_tls_flags() {
	if lc_insecure; then
		echo "--insecure"
	else
		echo "--tls_cert=$LC_TLS_DIR/litemgr.crt --tls_key=$LC_TLS_DIR/litemgr.key" \
			"--tls_ca=$LC_TLS_DIR/ca.crt --authz=$LC_TLS_DIR/authz"
	fi
}
lc_agent_tls_flags() {
	local d=/run/litevm/tls name
	name=$(lc_node_name "$1")
	if lc_insecure; then
		echo "--insecure"
	else
		echo "--tls_cert=$d/$name.crt --tls_key=$d/$name.key --tls_ca=$d/ca.crt" \
			"--authz=$d/authz --manager_tls_name=litemgr"
	fi
}

lc_tls_summary() {
	local names g
	if lc_insecure; then
		echo "control plane: PLAINTEXT gRPC (LITE_INSECURE=1): no certificates, every caller trusted"
		return
	fi
	names=$(lc_node_name 1)
	for ((g = 2; g <= LITE_VM_GUESTS; g++)); do names+=", $(lc_node_name "$g")"; done
	echo "control plane: mutual TLS, cluster CA $LC_TLS_DIR/ca.crt; certificates" \
		"'litemgr' (manager), $names (nodes), '$LC_OPERATOR' (operator, litectl)"
}

# lc_guest_ip GUEST
lc_guest_ip() { echo "10.211.0.$((10 + $1))"; }

lc_start() {
	local lease_ms=${1:-10000} g deadline
	LITE_MANAGER=$LITE_VM_BRIDGE_IP:$LC_PORT
	export LITE_MANAGER
	if ! lc_insecure; then
		lc_tls_setup || {
			lc_log "cannot make the cluster's certificates in $LITE_VM_STATE/tls"
			return 1
		}
	fi
	# Lease 10 s (not the default 1 s): the guests are emulated (TCG) on a
	# host that may be busy, and a guest moving 64 MiB starves its agent.
	# With 3 s, CI saw node3's agent failed in the middle of datapath.sh
	# and the rest of the suite fail with it (EHOSTDOWN, then ENOENT and
	# EAGAIN while the cluster rejoined). Tests of failure detection pass a
	# shorter lease or kill the agent and wait for the lease.
	# shellcheck disable=SC2046 # the flags are words without spaces
	"$LITE_BIN/controlplane/litemgr" --listen="$LITE_MANAGER" \
		--lease_ms="$lease_ms" --recovery_window_ms=0 $(lc_manager_tls_flags) \
		> "$LITE_VM_STATE/litemgr.log" 2>&1 &
	LC_MANAGER_PID=$!
	trap lc_stop EXIT
	deadline=$((SECONDS + 20))
	until "$LITE_BIN/cmd/litectl/litectl" health > /dev/null 2>&1; do
		if ((SECONDS > deadline)) || ! kill -0 "$LC_MANAGER_PID" 2> /dev/null; then
			lc_log "litemgr did not come up:"
			tail -n 20 "$LITE_VM_STATE/litemgr.log"
			return 1
		fi
		sleep 0.2
	done
	lc_log "litemgr listening on $LITE_MANAGER (pid $LC_MANAGER_PID, lease ${lease_ms} ms)"
	lc_log "$(lc_tls_summary)"

	LC_AGENT_JOBS=()
	for ((g = 1; g <= LITE_VM_GUESTS; g++)); do
		LC_AGENT_JOBS[g]=$(litevm spawn -g "$g" -t 3600 -- \
			"exec $LITE_BIN/agent/liteagent --module=netlink" \
			"--manager=$LITE_MANAGER --node_name=$(lc_node_name "$g")" \
			"--rdma_address=$(lc_guest_ip "$g"):$LC_CM_PORT" \
			"--listen=0.0.0.0:$LC_AGENT_PORT $(lc_agent_tls_flags "$g")" \
			"> /tmp/liteagent.log 2>&1")
	done
	lc_wait_ready 120
}

# lc_wait_ready SECONDS: every guest's node ALIVE at the manager and every
# guest's lite.ko connected to every other guest.
lc_wait_ready() {
	local limit=$1 start=$SECONDS g alive connected want=$((LITE_VM_GUESTS - 1))
	while true; do
		# (grep finds nothing at first: not an error under pipefail)
		alive=$("$LITE_BIN/cmd/litectl/litectl" nodes -o json 2> /dev/null |
			{ grep -o '"NODE_STATE_ALIVE"' || true; } | wc -l)
		if ((alive == LITE_VM_GUESTS)); then
			connected=0
			for ((g = 1; g <= LITE_VM_GUESTS; g++)); do
				local n
				n=$(litevm exec -g "$g" -t 20 -- "$LITE_BIN/cmd/litenl/litenl peers -o json" 2> /dev/null |
					{ grep -o '"state": "connected"' || true; } | wc -l)
				((n == want)) && connected=$((connected + 1))
			done
			if ((connected == LITE_VM_GUESTS)); then
				lc_log "cluster ready: $alive nodes alive, every pair connected ($((SECONDS - start)) s)"
				return 0
			fi
		fi
		if ((SECONDS - start > limit)); then
			lc_log "cluster not ready after ${limit} s ($alive of $LITE_VM_GUESTS nodes alive)"
			lc_logs
			return 1
		fi
		# Nodes join 0.5-1 s apart here: a second per poll was a second
		# lost per cluster start.
		sleep 0.2
	done
}

lc_node_name() { echo "node$1"; }

lc_node_id() {
	"$LITE_BIN/cmd/litectl/litectl" nodes -o json |
		tr -d '\n ' | grep -o "{[^{}]*\"node_name\":\"$(lc_node_name "$1")\"[^{}]*}" |
		grep -o '"node_id":[0-9]*' | cut -d: -f2
}

lc_node_label() {
	local id
	id=$(lc_node_id "$1") || id=
	echo "$(lc_node_name "$1") (id ${id:-?})"
}

lc_logs() {
	local g
	echo "---- litemgr log (tail)"
	tail -n 15 "$LITE_VM_STATE/litemgr.log" 2> /dev/null
	for ((g = 1; g <= LITE_VM_GUESTS; g++)); do
		echo "---- guest $g liteagent log (tail)"
		litevm exec -g "$g" -t 20 -- "tail -n 15 /tmp/liteagent.log" 2> /dev/null
	done
}

lc_stop() {
	local g pids=()
	# In parallel: each kill may wait 5 s for its agent to exit.
	for g in "${!LC_AGENT_JOBS[@]}"; do
		litevm kill -g "$g" "${LC_AGENT_JOBS[g]}" > /dev/null 2>&1 &
		pids+=($!)
	done
	# A kill may fail (the guest was crashed): stopping goes on regardless.
	((${#pids[@]} == 0)) || wait "${pids[@]}" 2> /dev/null || true
	LC_AGENT_JOBS=()
	if [[ -n $LC_MANAGER_PID ]]; then
		kill "$LC_MANAGER_PID" 2> /dev/null || true
		wait "$LC_MANAGER_PID" 2> /dev/null || true
		LC_MANAGER_PID=
	fi
}
