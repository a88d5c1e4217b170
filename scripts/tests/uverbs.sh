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
# channel); wire-smoke; ext-verbs (RFC 7306 atomics, racing a local
# thread's increments on one word, and Write with Immediate); rping 1000
# verified pings; ucmatose 2 connections x 100
# messages; riostream with data verification; rdma res shows the QPs of a
# live connection in RTS; perftest over rdma_cm (skipped when perftest
# is not installed); the module unloads and the kernel log is clean.
#
# perftest: by default a slice that runs each path once (write/read/send
# bw at 64 KiB, one -b, write/read/send lat at 64 B, inline bw and lat,
# ibv_post_send, 1 MiB), six cells on the debug kernel, and on both the
# RFC 7306 atomics: ib_atomic_bw and ib_atomic_lat with -A FETCH_AND_ADD
# and -A CMP_AND_SWAP (perftest's atomic size is 8); RSW_PERF_MATRIX=full
# (make stress) runs the whole matrix: bw (one way and -b) and lat at 1 B,
# 64 B, 4 KiB, 64 KiB and 1 MiB, inline where it applies, and bw through
# ibv_post_send (--use_old_post_send) at two sizes.  A cell passes only on
# a clean run with the client's result row; perftest's own failures are
# retried (at most 4 runs, each logged), never accepted.  The figures are
# perftest's, except that a bandwidth printed as 0 is derived and labelled,
# and a latency cell printed without figures is named and counted.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
# The debug kernel (KASAN, lockdep, kmemleak) runs about 4x slower: fewer
# pings there (make stress's full matrix keeps the long runs).
PINGS=1000 BIG_PINGS=500
if [ "${RSW_KERNEL:-}" = debug ]; then
	T_CMD_TIMEOUT=240
	[ "${RSW_PERF_MATRIX:-}" = full ] || PINGS=300 BIG_PINGS=150
fi
# Upper bound for one server (it outlives its client a little).
SRV_TIMEOUT=${SRV_TIMEOUT:-$((T_CMD_TIMEOUT + 30))}

rdma_core_use rping verbs-smoke ext-verbs
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
# $LOGS/NAME.client and its stderr in NAME.client.err, apart: rping's
# stderr would land inside its block-buffered stdout.  Print the tails.
logged() {
	local name=$1 rc=0
	shift
	timeout -k 5 "$T_CMD_TIMEOUT" "$@" >"$LOGS/$name.client" 2>"$LOGS/$name.client.err" || rc=$?
	tail -n 5 "$LOGS/$name.client" "$LOGS/$name.client.err"
	return "$rc"
}

rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "ibv_devinfo -v"
check "$B/ibv_devinfo" -v -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"

step "verbs-smoke: CQ, MR, QP rings, flush on ERROR"
check "$RSW_RDMA_SMOKE" "$DEV" active

step "wire-smoke: 16 SGEs, 256-byte inline, solicited events"
check "$RSW_RDMA_PROVIDER_BUILD/wire-smoke" "$DEV" "$IP" 7480

# 2000 remote FetchAdd(+1) racing 2000 local __atomic_fetch_add on one word
# (under a second on 6.12, a few on the debug kernel).
step "ext-verbs: RFC 7306 atomics (2000 racing increments a side), Write with Immediate"
check "$RSW_RDMA_PROVIDER_BUILD/ext-verbs" "$DEV" "$IP" 7481 2000
assert_match "$T_OUT" '^# [0-9]+ checks, 0 failed$' "ext-verbs verdict"

step "rping: $PINGS pings, data verified on both sides"
start_server rping 7174 "$B/rping" -s -a "$IP" -p 7174 -V -C "$PINGS"
check logged rping "$B/rping" -c -a "$IP" -p 7174 -v -V -C "$PINGS"
# Count the distinct ping numbers the client verified.
n=$(grep -o 'rdma-ping-[0-9]*:' "$LOGS/rping.client" | sort -u | wc -l)
assert_eq "$n" "$PINGS" "distinct verified pings printed by the client"
wait_server rping

step "rping, 65000 bytes: rdma res shows both QPs in RTS while it runs"
start_server rping-big 7175 "$B/rping" -s -a "$IP" -p 7175 -V -S 65000 -C "$BIG_PINGS"
printf '    $ rping -c ... -S 65000 -C %s &\n' "$BIG_PINGS"
timeout -k 5 "$T_CMD_TIMEOUT" "$B/rping" -c -a "$IP" -p 7175 -V -S 65000 \
	-C "$BIG_PINGS" >"$LOGS/rping-big.client" 2>&1 &
CLI_PID=$!
two_rts() {
	[ "$(rdma res show qp link "$DEV/1" | grep -c 'state RTS')" -ge 2 ]
}
poll_until 30 "two RTS QPs on $DEV" two_rts
check rdma res show qp link "$DEV/1"
rc=0
wait "$CLI_PID" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 20 "$LOGS/rping-big.client" | indent; fail "rping client exit status $rc"; }
ok "rping client (65000 bytes x $BIG_PINGS, verified) exited 0"
wait_server rping-big

step "ucmatose: 2 connections x 100 messages of 1 KiB"
start_server ucmatose 7471 "$B/ucmatose" -b "$IP" -p 7471 -c 2 -C 100 -S 1024
check "$B/ucmatose" -s "$IP" -p 7471 -c 2 -C 100 -S 1024
assert_match "$T_OUT" 'test complete' "ucmatose client"
wait_server ucmatose
assert_match "$(cat "$LOGS/ucmatose.server")" 'test complete' "ucmatose server"

# -T v verifies the data; b/a add blocking and poll()-driven I/O (not on
# the debug kernel in make check: 15 s each there; make stress runs them).
RIO_MODES="n b a"
[ "${RSW_KERNEL:-}" != debug ] || [ "${RSW_PERF_MATRIX:-}" = full ] || RIO_MODES=n
for mode in $RIO_MODES; do
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
	# -F: when its CPU-MHz probe fails (often under TCG, most with -b,
	# where both sides probe at once), perftest still prints its result
	# row, with 0 for the figures, and exits 0 instead of exit(1) with
	# "Can't produce a report".  The verdict (both sides exit 0, the row
	# with the iteration count) is unchanged; a 0 MB/s is derived below.
	PT=(-d "$DEV" -R -F)
	port=18515
	# Counts for the summary line.
	P_CELLS=0 P_FIRST=0 P_CLOCK=0 P_CLOSE=0 P_RELISTEN=0 P_NOFIG=0
	# perf TOOL SIZE ITERS [ARGS]: one cell of the matrix, a perftest
	# server/client pair over rdma_cm.  A cell passes only on a clean run:
	# the client exits 0 with its result row and the server exits 0.
	# Three failures are perftest's own, not the device's; each is told
	# apart by evidence that would be missing if the fault were ours, and
	# anything else (a timeout, a crash, any other error) fails at once:
	#  clock   its CPU-MHz probe gave up under TCG: "Can't produce a
	#          report" from a side that then exited 1 (perftest's
	#          FAILURE) with no completion error, and the other side at
	#          most exited 1 (with -b a server that gives up also fails
	#          the client's closing exchange).  Retried, never accepted.
	#  close   its closing sync over the rdma_cm QP posts the next receive
	#          only after consuming a message; on iWARP (no RNR retry) a
	#          quicker peer loses the QP.  Only when the client exited 0
	#          with its result row and the server exited 1 whose only
	#          completion errors are flushes ("Bad wc status -- 5").
	#  relisten  -R connects twice (a control, then the test connection,
	#          for which the server destroys its listener and listens
	#          again); a client quicker than that is refused by TCP
	#          (REJECTED, -111), and this perftest (4.5) crashes in
	#          librdmacm on its own retry path.  Only when the driver's
	#          connection log of this run shows the connect refused by
	#          TCP (a CEP failing -111 while "connecting") at a moment
	#          when no listener of the run was alive.
	# Every failed run is logged on one line (cause, evidence, log file).
	# At most 4 runs per cell.
	perf() {
		local tool=$1 size=$2 iters=$3 try rc src out name why t0 t1
		shift 3
		step "perftest $tool -s $size -n $iters $*"
		P_CELLS=$((P_CELLS + 1))
		for try in 1 2 3 4; do
			port=$((port + 1))
			name=$tool-$size-p$port
			# Marks this run's start in the kernel log, for the
			# driver's connection log (relisten evidence).
			echo "rsw-perf-mark $name" >/dev/kmsg
			start_server "$name" "$port" "$tool" "${PT[@]}" \
				-p "$port" -s "$size" -n "$iters" "$@"
			printf '    $ %s\n' "$tool ${PT[*]} -p $port -s $size -n $iters $* $IP"
			rc=0
			t0=$(date +%s%N)
			out=$(timeout -k 5 "$T_CMD_TIMEOUT" "$tool" "${PT[@]}" -p "$port" \
				-s "$size" -n "$iters" "$@" "$IP" 2>&1) || rc=$?
			t1=$(date +%s%N)
			printf '%s\n' "$out" >"$LOGS/$name.client"
			printf '%s\n' "$out" | grep -E "^[[:space:]]*(#bytes|${size}[[:space:]])|report|r\^2" | indent || true
			# A server whose client failed may wait for ever (it
			# listens again for the test connection), or still be
			# sampling its clock for its own report (-b): give it
			# 20 s to say why before it is stopped.
			# (A refused client's server waits for ever: no grace.)
			if [ "$rc" -ne 0 ]; then
				grep -q "RDMA_CM_EVENT_REJECTED" <<<"$out" ||
					for _ in $(seq 40); do
						server_gone && break
						sleep 0.5
					done
				kill "$SRV_PID" 2>/dev/null || true
			fi
			src=0
			wait "$SRV_PID" || src=$?
			dmesg | sed -n "/rsw-perf-mark $name\$/,\$p" |
				grep -F 'rdmap_sw: CEP' >"$LOGS/$name.cm" || true
			if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ]; then
				assert_match "$out" "^[[:space:]]*${size}[[:space:]]+${iters}[[:space:]]" \
					"$tool result row"
				figures_note "$tool" "$size" "$iters" "$out" "$t0" "$t1" "$@"
				ok "$name: client and server exited 0"
				[ "$try" -gt 1 ] || P_FIRST=$((P_FIRST + 1))
				return
			fi
			if ! why=$(perf_failure "$rc" "$src" "$out" "$size" "$iters" \
				"$LOGS/$name.server" "$LOGS/$name.cm"); then
				printf '%s\n' "$out" | tail -n 30 | indent
				note "server ($LOGS/$name.server):"
				tail -n 10 "$LOGS/$name.server" | indent
				note "driver connection log ($LOGS/$name.cm, last 20 lines):"
				tail -n 20 "$LOGS/$name.cm" | indent
				fail "$tool: client exit status $rc, server $src, not a known perftest failure: $why"
			fi
			case $why in
			clock*) P_CLOCK=$((P_CLOCK + 1)) ;;
			close*) P_CLOSE=$((P_CLOSE + 1)) ;;
			relisten*) P_RELISTEN=$((P_RELISTEN + 1)) ;;
			esac
			note "run $try failed (client $rc, server $src): $why; logs $LOGS/$name.{client,server,cm}"
			# make check counts these (scripts/steps.sh).
			echo "RETRY: perftest $tool: ${why%%:*}"
		done
		fail "$tool: no clean run in 4 (see the notes above)"
	}
	# perf_failure RC SRC OUT SIZE ITERS SERVER_LOG CM_LOG: which of perf()'s
	# known perftest failures this is, with its evidence ("clock: ...");
	# non-zero status with what is missing if none.
	perf_failure() {
		local rc=$1 src=$2 out=$3 size=$4 iters=$5 slog=$6 cmlog=$7
		local nr="Can't produce a report" v
		local row="^[[:space:]]*${size}[[:space:]]+${iters}[[:space:]]"
		if grep -q "$nr" <<<"$out"; then
			[ "$rc" -eq 1 ] || { echo "client printed \"$nr\" but exit status $rc, not 1"; return 1; }
			! grep -q 'Bad wc status' <<<"$out" || { echo "client printed \"$nr\" and a completion error"; return 1; }
			[ "$src" -eq 0 ] || [ "$src" -eq 1 ] || [ "$src" -eq 143 ] ||
				{ echo "client's clock probe failed, but server exit status $src"; return 1; }
			echo "clock: the client's CPU-MHz probe failed after its transfers (\"$nr\", exit 1)"
			return 0
		fi
		if grep -q "$nr" "$slog"; then
			[ "$src" -eq 1 ] || { echo "server printed \"$nr\" but exit status $src, not 1"; return 1; }
			[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] ||
				{ echo "server's clock probe failed, but client exit status $rc"; return 1; }
			echo "clock: the server's CPU-MHz probe failed after its transfers (\"$nr\", exit 1)"
			return 0
		fi
		if [ "$rc" -eq 0 ]; then
			grep -Eq -- "$row" <<<"$out" || { echo "client exited 0 without its result row"; return 1; }
			[ "$src" -eq 1 ] || { echo "server exit status $src (a flush at close exits 1)"; return 1; }
			grep -q 'Bad wc status -- 5 ' "$slog" || { echo "server failed without a flushed completion"; return 1; }
			! grep 'Bad wc status' "$slog" | grep -vq 'Bad wc status -- 5 ' ||
				{ echo "server logged a completion error other than a flush"; return 1; }
			echo "close: client done with its result row, server's closing sync flushed (Bad wc status -- 5)"
			return 0
		fi
		if grep -q "RDMA_CM_EVENT_REJECTED; error: -111" <<<"$out"; then
			case $rc in 124|137) echo "client refused and then timed out (exit $rc)"; return 1 ;; esac
			v=$(relisten_evidence "$cmlog")
			case $v in
			relisten*) echo "$v"; return 0 ;;
			*) echo "test connection refused, but $v"; return 1 ;;
			esac
		fi
		case $rc in
		124|137) echo "client timed out (${T_CMD_TIMEOUT} s)" ;;
		*) echo "no perftest failure matches" ;;
		esac
		return 1
	}
	# relisten_evidence CM_LOG: from the driver's connection log of one
	# run, "relisten: ..." when a connect was refused by TCP ("CEP[n]
	# connecting: failed: -111") while none of the run's listeners was
	# alive; else what contradicts that.
	relisten_evidence() {
		awk '
		!match($0, /rdmap_sw: CEP\[[0-9]+\] /) { next }
		{
			id = substr($0, RSTART + 14, RLENGTH - 16)
			what = substr($0, RSTART + RLENGTH)
		}
		what == "listening: listening" { live[id] = 1; n++; made++; next }
		what ~ /: destroy$/ && (id in live) { delete live[id]; n--; gone++; next }
		what ~ /^connecting: failed: -111 / {
			if (n > 0) busy++
			else if (!free++) { m = made; g = gone }
		}
		END {
			if (!made)
				print "no listener in the driver connection log (dynamic debug off?)"
			else if (busy)
				print busy " connect(s) refused while a listener was alive"
			else if (!free)
				print "no connect refused by TCP in the driver connection log"
			else if (!m)
				print "a connect was refused before the run had listened at all"
			else
				print "relisten: connect refused by TCP while none of the " m " listener(s) made before it was alive (" g " destroyed)"
		}' "$1"
	}
	# figures_note TOOL SIZE ITERS OUT T0 T1 [ARGS]: under TCG perftest's
	# CPU-MHz sampling may yield a report of 0 MB/s for a clean bandwidth
	# run; then derive the figure from iterations x size over the
	# client's wall time (connection setup included, so a lower bound)
	# and label it as derived.  A latency cell has no such fallback: one
	# without a positive t_avg is named and counted (P_NOFIG).
	figures_note() {
		local tool=$1 size=$2 iters=$3 out=$4 t0=$5 t1=$6 avg dir=1
		shift 6
		case $tool in
		*_lat)
			# No clock, no latency: the cell ran clean but has no
			# figures; say so, and count it in the summary.
			avg=$(printf '%s\n' "$out" | awk -v s="$size" -v n="$iters" \
				'$1 == s && $2 == n { print $6; exit }')
			awk -v a="$avg" 'BEGIN { exit !(a ~ /^[0-9.]+$/ && a + 0 > 0) }' && return 0
			P_NOFIG=$((P_NOFIG + 1))
			note "$tool printed no usable latency (t_avg '$avg': perftest's CPU clock probe under TCG); the cell ran clean, it has no figures"
			return 0
			;;
		*_bw) ;;
		*) return 0 ;;
		esac
		avg=$(printf '%s\n' "$out" | awk -v s="$size" -v n="$iters" \
			'$1 == s && $2 == n { print $4; exit }')
		[ -n "$avg" ] && awk -v a="$avg" 'BEGIN { exit !(a + 0 == 0) }' || return 0
		case " $* " in *" -b "*) dir=2 ;; esac
		note "$tool printed 0 MB/s (perftest's CPU clock probe under TCG); derived: $(awk -v s="$size" -v n="$iters" -v d="$dir" -v t0="$t0" -v t1="$t1" \
			'BEGIN { printf "%.2f MB/s", s * n * d / ((t1 - t0) / 1e9) / 1e6 }') = $dir x $iters x $size B / client wall time incl. setup"
	}
	server_gone() { ! kill -0 "$SRV_PID" 2>/dev/null; }
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	if [ -w /sys/kernel/debug/dynamic_debug/control ]; then
		echo 'module rdmap_sw file cm.c +p' \
			>/sys/kernel/debug/dynamic_debug/control 2>/dev/null || true
	fi

	# ib_send_bw: at most as many messages as posted receives (perftest
	# caps its RX depth at -n), since iWARP has no RNR retry and
	# perftest no flow control: a receiver that falls behind would see a
	# Send with no receive posted, which is fatal (RFC 5040).
	#
	# RSW_PERF_MATRIX=full (make stress): the matrix issue 4 names:
	# bandwidth (unidirectional and -b) and latency at 1 B .. 1 MiB
	# through perftest's default send path (the extended API, ibv_wr_*);
	# inline variants (-I) where a payload fits (perftest turns inline off
	# by default for a device it does not know, so the plain runs are the
	# non-inline ones); and the classic ibv_post_send path
	# (--use_old_post_send) at two sizes.  The debug kernel (about 4x
	# slower) runs it at two sizes.
	perf_full() {
		local size bw_n send_n lat_n dir tool
		if [ "${RSW_KERNEL:-}" = debug ]; then
			SIZES=${RSW_PERF_SIZES:-64 65536}
		else
			SIZES=${RSW_PERF_SIZES:-1 64 4096 65536 1048576}
		fi
		for size in $SIZES; do
			if [ "$size" -ge 1048576 ]; then bw_n=100 send_n=100 lat_n=50
			else bw_n=1000 send_n=500 lat_n=500; fi
			for dir in "" -b; do
				perf ib_write_bw "$size" "$bw_n" $dir
				perf ib_read_bw "$size" "$bw_n" $dir
				perf ib_send_bw "$size" "$send_n" $dir
			done
			for tool in ib_write_lat ib_read_lat ib_send_lat; do
				perf "$tool" "$size" "$lat_n"
			done
			# Inline: writes and sends whose payload fits max_inline.
			if [ "$size" -le 256 ]; then
				perf ib_write_bw "$size" "$bw_n" -I "$size"
				perf ib_send_bw "$size" "$send_n" -I "$size"
				perf ib_write_lat "$size" "$lat_n" -I "$size"
				perf ib_send_lat "$size" "$lat_n" -I "$size"
			fi
		done
		perf_atomics 2000 1000
		for size in 64 65536; do
			perf ib_write_bw "$size" 1000 --use_old_post_send
			perf ib_read_bw "$size" 1000 --use_old_post_send
			perf ib_send_bw "$size" 500 --use_old_post_send
		done
	}
	# perf_atomics BW_ITERS LAT_ITERS: the RFC 7306 atomics, both kinds,
	# bandwidth and latency (8 bytes: perftest refuses any other size).
	perf_atomics() {
		local a
		for a in FETCH_AND_ADD CMP_AND_SWAP; do
			perf ib_atomic_bw 8 "$1" -A "$a"
			perf ib_atomic_lat 8 "$2" -A "$a"
		done
	}
	# Default (make check): each path once.  Bandwidth of write, read and
	# send at 64 KiB, one -b cell, latency of all three at 64 B, one
	# inline bw and lat cell, one ibv_post_send cell, one 1 MiB cell.
	perf_slice() {
		perf ib_write_bw 65536 1000
		perf ib_read_bw 65536 1000
		perf ib_send_bw 65536 500
		perf ib_write_bw 65536 1000 -b
		perf ib_write_lat 64 500
		perf ib_read_lat 64 500
		perf ib_send_lat 64 500
		perf ib_send_bw 64 500 -I 64
		perf ib_write_lat 64 500 -I 64
		perf ib_send_bw 4096 500 --use_old_post_send
		perf ib_read_bw 1048576 100
		perf_atomics 2000 500
	}
	# The debug kernel (KASAN, lockdep, kmemleak; about 4x slower): four
	# cells, each data path, both send APIs, a bidirectional run and an
	# inline latency test once (make stress: the whole matrix).
	perf_debug_slice() {
		perf ib_write_bw 65536 1000
		perf ib_read_bw 65536 1000 -b
		perf ib_send_bw 65536 500 --use_old_post_send
		perf ib_write_lat 64 500 -I 64
		perf_atomics 1000 200
	}
	case ${RSW_PERF_MATRIX:-} in
	full) perf_full ;;
	'') if [ "${RSW_KERNEL:-}" = debug ]; then perf_debug_slice; else perf_slice; fi ;;
	*) fail "RSW_PERF_MATRIX must be full or unset, not '$RSW_PERF_MATRIX'" ;;
	esac
	step "perftest summary"
	note "perftest: $P_CELLS cells, $P_FIRST clean first tries, retries: clock $P_CLOCK, close $P_CLOSE, relisten $P_RELISTEN; latency cells without figures: $P_NOFIG"
fi

rsw_dummy_down "$DEV" "$NETDEV"
