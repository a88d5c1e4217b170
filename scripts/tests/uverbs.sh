#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdmap_sw's user data path (mapped CQ and QP rings, doorbell) under stock
# rdma-core 56.1 applications and perftest, over the loopback of one guest.
#
#   scripts/build 6.12 && scripts/rdma-core provider &&
#   scripts/vm --kernel 6.12 --timeout 600 -- scripts/tests/uverbs.sh
#   (debug kernel: --kernel debug --timeout 1800)
#
#   +----------------------- guest ------------------------+
#   |  server --- rdma_cm / uverbs ---  client             |
#   |  (rping, ucmatose, riostream, perftest)              |
#   |        libibverbs 56.1 + librdmap_sw                 |
#   |  rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24 (loopback)  |
#   +------------------------------------------------------+
#
# Checks: verbs-smoke (rings without a peer: flush on ERROR, completion
# channel); rping 1000 verified pings; ucmatose 2 connections x 100
# messages; riostream with data verification; rdma res shows the QPs of a
# live connection in RTS; perftest bw (write/read/send) and lat
# (write/read/send) at a few sizes (skipped when perftest is not
# installed); the module unloads and the kernel log is clean.
#
# perftest bw tests run with --use_old_post_send (ibv_post_send) and again
# through the extended send API (ibv_wr_*, perftest's default).  Under TCG
# perftest's CPU clock probe may fail; the figures printed are its own.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
# The debug kernel (KASAN, lockdep, kmemleak) runs about 4x slower.
if [ "${RSW_KERNEL:-}" = debug ]; then
	T_CMD_TIMEOUT=240
fi
# Upper bound for one server (it outlives its client a little).
SRV_TIMEOUT=${SRV_TIMEOUT:-$((T_CMD_TIMEOUT + 30))}

eval "$("$RSW_TOP/scripts/rdma-core" env)"
[ -x "$RSW_RDMA_BIN/rping" ] && [ -x "$RSW_RDMA_SMOKE" ] ||
	fail "rdma-core 56.1 or the provider is not built (run scripts/rdma-core)"
export LD_LIBRARY_PATH=$RSW_RDMA_LIB
B=$RSW_RDMA_BIN
LOGS=$RSW_RUN/uverbs
mkdir -p "$LOGS"

t_banner


# listening PORT: an rdma_cm id listens on PORT and so does the device's
# TCP socket (rdma_cm shows LISTEN before the provider's listen is done).
listening() {
	rdma res show cm_id | grep -E "state LISTEN .*src-addr [^ ]*:$1( |$)" &&
		ss -Hltn "sport = :$1" | grep -q .
}

# start_server NAME PORT CMD...: run CMD in the background (bounded by
# SRV_TIMEOUT), output in $LOGS/NAME.server, and wait until it listens.
start_server() {
	local name=$1 port=$2
	shift 2
	printf '    $ %s &   (server, log %s)\n' "$*" "$LOGS/$name.server"
	timeout -k 5 "$SRV_TIMEOUT" "$@" >"$LOGS/$name.server" 2>&1 &
	SRV_PID=$!
	poll_until 20 "$name server listening on port $port (or exited)" \
		listening_or_gone "$port"
	if ! kill -0 "$SRV_PID" 2>/dev/null; then
		tail -n 20 "$LOGS/$name.server" | indent
		fail "$name server exited before listening"
	fi
}

listening_or_gone() {
	listening "$1" || ! kill -0 "$SRV_PID" 2>/dev/null
}

# wait_server NAME: the server started last must exit 0.
wait_server() {
	local rc=0
	wait "$SRV_PID" || rc=$?
	note "$1 server output:"
	tail -n 20 "$LOGS/$1.server" | indent
	[ "$rc" -eq 0 ] || fail "$1 server exit status $rc"
	ok "$1 server exited 0"
}

# logged NAME CMD...: run CMD (bounded by T_CMD_TIMEOUT) with its output in
# $LOGS/NAME.client; print the tail.  For chatty clients (rping -v).
logged() {
	local name=$1 rc=0
	shift
	timeout -k 5 "$T_CMD_TIMEOUT" "$@" >"$LOGS/$name.client" 2>&1 || rc=$?
	tail -n 5 "$LOGS/$name.client"
	return "$rc"
}

step "load the RDMA core and rdmap_sw"
check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
check modprobe dummy numdummies=0
insmod_deps "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"

step "$NETDEV with $IP/24, $DEV attached to it"
check ip link add "$NETDEV" type dummy
check ip addr add "$IP/24" dev "$NETDEV"
check ip link set "$NETDEV" up
check rdma link add "$DEV" type rdmap_sw netdev "$NETDEV"
poll_until 10 "uverbs device for $DEV" uverbs_ready "$DEV"

step "ibv_devinfo -v"
check "$B/ibv_devinfo" -v -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"

step "verbs-smoke: CQ, MR, QP rings, flush on ERROR"
check "$RSW_RDMA_SMOKE" "$DEV" active

step "rping: 1000 pings, data verified on both sides"
start_server rping 7174 "$B/rping" -s -a "$IP" -p 7174 -V -C 1000
check logged rping "$B/rping" -c -a "$IP" -p 7174 -v -V -C 1000
# stderr (event messages) may land inside a buffered stdout line: count
# the distinct ping numbers rather than whole lines.
n=$(grep -o 'rdma-ping-[0-9]*:' "$LOGS/rping.client" | sort -u | wc -l)
assert_eq "$n" 1000 "distinct verified pings printed by the client"
wait_server rping

step "rping, 65000 bytes: rdma res shows both QPs in RTS while it runs"
start_server rping-big 7175 "$B/rping" -s -a "$IP" -p 7175 -V -S 65000 -C 500
printf '    $ rping -c ... -S 65000 -C 500 &\n'
timeout -k 5 "$T_CMD_TIMEOUT" "$B/rping" -c -a "$IP" -p 7175 -V -S 65000 \
	-C 500 >"$LOGS/rping-big.client" 2>&1 &
CLI_PID=$!
two_rts() {
	[ "$(rdma res show qp link "$DEV/1" | grep -c 'state RTS')" -ge 2 ]
}
poll_until 30 "two RTS QPs on $DEV" two_rts
check rdma res show qp link "$DEV/1"
rc=0
wait "$CLI_PID" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 20 "$LOGS/rping-big.client" | indent; fail "rping client exit status $rc"; }
ok "rping client (65000 bytes x 500, verified) exited 0"
wait_server rping-big

step "ucmatose: 2 connections x 100 messages of 1 KiB"
start_server ucmatose 7471 "$B/ucmatose" -b "$IP" -p 7471 -c 2 -C 100 -S 1024
check "$B/ucmatose" -s "$IP" -p 7471 -c 2 -C 100 -S 1024
assert_match "$T_OUT" 'test complete' "ucmatose client"
wait_server ucmatose
assert_match "$(cat "$LOGS/ucmatose.server")" 'test complete' "ucmatose server"

# -T v verifies the data; b/a add blocking and poll()-driven I/O.
for mode in n b a; do
	step "riostream (rsockets, iomap writes), -T $mode -T v"
	start_server "riostream-$mode" 7472 "$B/riostream" -b "$IP" -p 7472 \
		-T "$mode" -T v -S 65536 -C 200
	check "$B/riostream" -s "$IP" -p 7472 -T "$mode" -T v -S 65536 -C 200
	wait_server "riostream-$mode"
done

step "rdma_cm ids and QPs are gone"
no_qps() { [ -z "$(rdma res show qp link "$DEV/1")" ]; }
poll_until 10 "no QP left on $DEV" no_qps

if ! command -v ib_write_bw >/dev/null; then
	skip "perftest is not installed (apt-get install perftest)"
else
	PT=(-d "$DEV" -R)
	port=18515
	# perf TOOL SIZE ITERS [ARGS]: one server/client run, retried (at
	# most 3 runs) only for two failures of perftest itself: its CPU
	# clock probe under TCG ("Can't produce a report": the transfers ran,
	# the figures could not be computed) and its closing sync race (see
	# below).  Any other failure fails the test, so does a third retry.
	perf() {
		local tool=$1 size=$2 iters=$3 try rc out name
		shift 3
		step "perftest $tool -s $size -n $iters $*"
		for try in 1 2 3; do
			port=$((port + 1))
			name=$tool-$size-p$port
			start_server "$name" "$port" "$tool" "${PT[@]}" \
				-p "$port" -s "$size" -n "$iters" "$@"
			printf '    $ %s\n' "$tool ${PT[*]} -p $port -s $size -n $iters $* $IP"
			rc=0
			out=$(timeout -k 5 "$T_CMD_TIMEOUT" "$tool" "${PT[@]}" -p "$port" \
				-s "$size" -n "$iters" "$@" "$IP" 2>&1) || rc=$?
			printf '%s\n' "$out" >"$LOGS/$name.client"
			printf '%s\n' "$out" | grep -E "^[[:space:]]*(#bytes|${size}[[:space:]])|report|r\^2" | indent || true
			if [ "$rc" -eq 0 ]; then
				assert_match "$out" "^[[:space:]]*${size}[[:space:]]+${iters}[[:space:]]" \
					"$tool result row"
				rc=0
				wait "$SRV_PID" || rc=$?
				[ "$rc" -ne 0 ] || { ok "$name server exited 0"; return; }
				tail -n 3 "$LOGS/$name.server" | indent
				# perftest's closing sync over its rdma_cm QP posts the
				# next receive only after consuming a message; on iWARP
				# (no RNR retry) a peer that is quicker loses the QP.
				grep -q "Bad wc status -- 5 " "$LOGS/$name.server" ||
					fail "$name server exit status $rc"
				note "run $try: client done, server's closing sync flushed (perftest/iWARP race); retrying"
				continue
			fi
			wait "$SRV_PID" || true
			# Open issue (Documentation/userspace.rst): now and then
			# the client's connect to a fresh perftest server is
			# refused (REJECTED, -111), seen with ib_send_bw only,
			# and perftest then crashes in its error path.  Retried,
			# and reported on every occurrence.
			if grep -q "RDMA_CM_EVENT_REJECTED; error: -111" <<<"$out"; then
				note "run $try: connect refused (open issue, see userspace.rst); retrying"
				continue
			fi
			grep -q "Can't produce a report" <<<"$out" ||
				{ printf '%s\n' "$out" | tail -n 30 | indent; fail "$tool exit status $rc"; }
			note "run $try: perftest could not time the run (TCG clock probe); retrying"
		done
		fail "$tool: no clean run in 3 (see the notes above)"
	}
	# ib_send_bw: at most as many messages as posted receives (perftest
	# caps its RX depth at -n), since iWARP has no RNR retry and
	# perftest no flow control: a receiver that falls behind would see a
	# Send with no receive posted, which is fatal (RFC 5040).
	for size in 64 4096 65536; do
		perf ib_write_bw "$size" 2000 --use_old_post_send
		perf ib_read_bw "$size" 2000 --use_old_post_send
		perf ib_send_bw "$size" 500 --use_old_post_send
	done
	# The same through the extended send API (ibv_create_qp_ex, ibv_wr_*).
	perf ib_write_bw 65536 1000
	perf ib_read_bw 65536 1000
	perf ib_send_bw 65536 500
	for tool in ib_write_lat ib_read_lat ib_send_lat; do
		perf "$tool" 64 2000
		perf "$tool" 4096 1000
	done
fi

step "detach and unload"
check rdma link delete "$DEV"
poll_until 5 "$DEV gone" gone "/sys/class/infiniband/$DEV"
check rmmod rdmap_sw
check ip link delete "$NETDEV"
dmesg_clean
