#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench` (scripts/bench runs it in one VM boot): perftest
# bandwidth and latency over rdma_cm for rdmap_sw, upstream siw and rxe, and
# single-stream TCP (iperf3) and TCP ping-pong (sockperf), all on the same
# loopback path of one guest.
#
#   scripts/vm --kernel 6.12 --run-dir DIR --timeout 1500 -- scripts/tests/bench-guest.sh
#
#   +----------------------- guest ---------------------------+
#   |  perftest server --- rdma_cm ---  perftest client       |
#   |  (one provider at a time: rsw0 | siw0 | rxe0)           |
#   |  iperf3 / sockperf server --- TCP ---  client           |
#   |  dummy0 192.0.2.1/24: traffic to it loops back in-kernel|
#   +---------------------------------------------------------+
#
# One provider at a time, on the same dummy0, so each has the guest to
# itself and the same path.
# Rounds are interleaved to spread host-load drift over every provider:
# round r = { rsw, siw, rxe: load, attach, 6 perftest runs, detach, unload;
# tcp: iperf3, sockperf }, for r = 1..$RSW_BENCH_ROUNDS (default 3).
#
# Output, under $RSW_RUN/bench/ (scripts/bench turns it into the report):
#   results.tsv  one line per measurement:
#                round provider test status value unit method note
#                status ok|failed; method says where the value came from.
#   guest.env    guest facts (CPUs, loadavg before/after, versions)
#   logs/        every command's output
# A failed measurement or provider is recorded and the bench goes on; the
# script itself exits 0 unless its own set-up fails.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
ROUNDS=${RSW_BENCH_ROUNDS:-3}
# MPA CRC for both iWARP providers (scripts/bench --crc): off, siw's own
# default, unless asked for.
CRC=${RSW_BENCH_CRC:-off}
case "$CRC" in on) RSW_MPA_CRC=Y SIW_VARIANT=crc ;; *) CRC=off RSW_MPA_CRC=N SIW_VARIANT=plain ;; esac
PROVIDERS=${RSW_BENCH_PROVIDERS:-"rsw siw rxe"}
NETDEV=dummy0
IP=192.0.2.1
BW_SIZE=65536
LAT_SIZE=64
# Bandwidth: a fixed number of messages (-n).  Send runs fewer: iWARP has
# no RNR retry and perftest no flow control, so every Send needs a receive
# posted in advance; perftest posts min(-n, 512) of them.
#
# perftest converts its TSC readings with a CPU MHz figure that it samples
# after the transfers; under TCG, with the CPUs busy (rxe's kernel work
# especially) the sampling often fails ("Correlation coefficient r^2 < 0.9,
# Can't produce a report") or yields 0.  The transfers did complete then,
# so the bench derives the figure from wall clocks: iterations x size over
# (T(-n N) - T(-n 5)), T being the time from the client's result header,
# printed just before its transfers, to its last line (the failed sampling
# included, hence the -n 5 run to subtract), and marks it "derived".
# (Duration mode, -D, does not help: its report needs the same figure, and
# rxe's -D runs failed the same way.)  The derivation wants at least 1 s of
# transfers: 8000 messages of 64 KiB are 1.2 s at 3.5 Gb/s.
BW_ITERS=8000
SEND_ITERS=500
LAT_ITERS=2000
TCP_SECONDS=4
TRIES=4
RUN_TIMEOUT=60

OUT=$RSW_RUN/bench
LOGS=$OUT/logs
RES=$OUT/results.tsv
mkdir -p "$LOGS"
: >"$RES"

eval "$("$RSW_TOP/scripts/rdma-core" env)"
export LD_LIBRARY_PATH=$RSW_RDMA_LIB
# perftest is Debian's (only libibverbs/librdmacm come from rdma-core 56.1).
for tool in ib_write_bw iperf3 sockperf jq; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (run scripts/setup)"
done

t_banner

# record ROUND PROVIDER TEST STATUS VALUE UNIT METHOD NOTE
record() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$RES"
	note "result: $*"
}

# ---------------------------------------------------------------- providers
ko_of() {
	case "$1" in
	rsw) echo "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko" ;;
	siw) echo "$(rsw_siw_dir "$RSW_KREL")/$SIW_VARIANT/siw.ko" ;;
	rxe) echo "" ;;	# Debian's image ships rdma_rxe.ko
	esac
}
module_of() { case "$1" in rsw) echo rdmap_sw ;; siw) echo siw ;; rxe) echo rdma_rxe ;; esac; }
linktype_of() { case "$1" in rsw) echo rdmap_sw ;; siw) echo siw ;; rxe) echo rxe ;; esac; }

bounded() { timeout -k 5 "$RUN_TIMEOUT" "$@"; }

# provider_up P: load P's module and attach DEV=P0 to $NETDEV; on failure
# print why and return 1.
provider_up() {
	local p=$1 ko mod
	DEV=${p}0
	ko=$(ko_of "$p")
	mod=$(module_of "$p")
	{
		if [ -n "$ko" ]; then
			[ -f "$ko" ] || { echo "no $ko"; return 1; }
			if [ "$p" = rsw ]; then
				t_insmod_deps "$ko" mpa_crc="$RSW_MPA_CRC" || return 1
			else
				t_insmod_deps "$ko" || return 1
			fi
		else
			bounded modprobe "$mod" || return 1
		fi
		t_rdma_attach "$DEV" "$(linktype_of "$p")" "$NETDEV" || return 1
		bounded rdma link show "$DEV/1"
	} >>"$LOGS/provider-$p.log" 2>&1
}

provider_down() {
	local p=$1
	{
		bounded rdma link delete "${p}0" || true
		wait_for 10 gone "/sys/class/infiniband/${p}0" ||
			echo "${p}0 still there 10 s after link delete"
		bounded rmmod "$(module_of "$p")" || true
	} >>"$LOGS/provider-$p.log" 2>&1
}

# ---------------------------------------------------------------- perftest
PORT=18500

# listening PORT: an rdma_cm id listens on PORT and, for iWARP, so does the
# provider's kernel TCP socket (rdma_cm shows LISTEN before iw_cm has asked
# the driver to listen: a client let in earlier is refused).
listening() {
	rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN .*src-addr [^ ]*:$1( |$)" &&
		{ [ "$DEV" = rxe0 ] || tcp_listening "$1"; }
}
tcp_listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

# wait_listen PORT PID CHECK: until CHECK PORT succeeds (20 s) or PID exits.
wait_listen() {
	local _
	for _ in $(seq 200); do
		"$3" "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stamp LOG: copy stdin to LOG and, each line prefixed with the time it
# arrived, to LOG.ts.
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line" >&3
		printf '%s %s\n' "$EPOCHREALTIME" "$line" >&4
	done 3>"$1" 4>"$1.ts"
}

# span LOG: seconds from perftest's result header ("#bytes ...", printed
# line-buffered just before the transfers start) to the client's last line.
span() {
	awk '/#bytes/ && !h { h = $1 } { l = $1 } END { if (h) printf "%.3f", l - h }' "$1.ts"
}

# perftest_once TOOL LOG ARGS...: one server/client pair on a fresh port;
# the client's output goes to LOG (and, time-stamped, to LOG.ts).  Returns
# the client's exit status (or 99 when the server never listened).
perftest_once() {
	local tool=$1 log=$2 srv rc=0
	shift 2
	PORT=$((PORT + 1))
	bounded "$tool" -d "$DEV" -R -p "$PORT" "$@" >"$log.server" 2>&1 &
	srv=$!
	if ! wait_listen "$PORT" "$srv" listening; then
		wait "$srv" 2>/dev/null || true
		echo "server never listened on $PORT" >"$log"
		return 99
	fi
	bounded stdbuf -oL -eL "$tool" -d "$DEV" -R -p "$PORT" "$@" "$IP" 2>&1 | stamp "$log"
	rc=${PIPESTATUS[0]}
	# A server whose client failed may wait for another one: end it.
	[ "$rc" -eq 0 ] || kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	return "$rc"
}

# derive TOOL LOG N: DERIVED = N x BW_SIZE x 8 / (span(LOG) - span of the
# same client with -n 5) in Gb/s; DERIVED_HOW says so.  Fails when the
# spans are missing or differ by less than 1 s: the sampling's own jitter
# (a few tenths of a second under TCG) would dominate.
DERIVED='' DERIVED_HOW=''
derive() {
	local tool=$1 log=$2 n=$3 t t5
	perftest_once "$tool" "$log.n5" -s "$BW_SIZE" -n 5 --report_gbits || true
	t=$(span "$log") t5=$(span "$log.n5")
	[ -n "$t" ] && [ -n "$t5" ] || return 1
	DERIVED=$(awk -v n="$n" -v s="$BW_SIZE" -v t="$t" -v t5="$t5" \
		'BEGIN { if (t - t5 >= 1) printf "%.3f", n * s * 8 / (t - t5) / 1e9 }')
	DERIVED_HOW="$n x $BW_SIZE B / ($t s - $t5 s with -n 5)"
	[ -n "$DERIVED" ]
}

# bw ROUND PROVIDER TEST TOOL: bandwidth at BW_SIZE, in Gb/s.
bw() {
	local r=$1 p=$2 test=$3 tool=$4 n=$BW_ITERS try log row v iters rc
	[ "$test" != send_bw ] || n=$SEND_ITERS
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-$p-$test-$try.log"
		rc=0
		perftest_once "$tool" "$log" -s "$BW_SIZE" -n "$n" --report_gbits || rc=$?
		# #bytes #iterations BW-peak BW-average MsgRate
		row=$(awk -v s="$BW_SIZE" '$1 == s && NF >= 4 { print $2, $(NF - 1); exit }' "$log")
		iters=${row% *} v=${row#* }
		if [ "$rc" -eq 0 ] && [ "$iters" = "$n" ] && [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] &&
			awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }'; then
			# Round 1 also derives the figure of runs perftest timed, to
			# show how well the derivation tracks perftest.
			if [ "$r" = 1 ] && derive "$tool" "$log" "$n"; then
				record "$r" "$p" "$test" ok "$v" Gb/s perftest "try $try; derived $DERIVED"
			else
				record "$r" "$p" "$test" ok "$v" Gb/s perftest "try $try"
			fi
			return 0
		fi
		# Derive only when every transfer completed and just the clock
		# sampling failed; anything else is a failed try.
		grep -q "Can't produce a report" "$log" ||
			{ [ "$rc" -eq 0 ] && [ "$iters" = "$n" ]; } || continue
		derive "$tool" "$log" "$n" || continue
		record "$r" "$p" "$test" ok "$DERIVED" Gb/s "derived: $DERIVED_HOW" \
			"try $try; perftest could not time it"
		return 0
	done
	record "$r" "$p" "$test" failed "" Gb/s perftest "$TRIES tries failed, last log ${log#"$RSW_RUN"/}"
}

# lat ROUND PROVIDER TEST TOOL: latency at LAT_SIZE, perftest's t_typical
# (median) in us: half a round trip for write/send, a full Read for read.
lat_ok() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }
lat() {
	local r=$1 p=$2 test=$3 tool=$4 try log v
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-$p-$test-$try.log"
		perftest_once "$tool" "$log" -s "$LAT_SIZE" -n "$LAT_ITERS" || continue
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
		v=$(awk -v s="$LAT_SIZE" '$1 == s && NF >= 6 { print $5; exit }' "$log")
		# "inf" when perftest's CPU clock probe failed (TCG).  Both
		# sides of ib_*_lat time the same ping-pong: then take the
		# server's figure, if its probe worked; else retry.
		if lat_ok "$v"; then
			record "$r" "$p" "$test" ok "$v" us "perftest t_typical" "try $try"
			return 0
		fi
		v=$(awk -v s="$LAT_SIZE" '$1 == s && NF >= 6 { print $5; exit }' "$log.server")
		if lat_ok "$v"; then
			record "$r" "$p" "$test" ok "$v" us "perftest t_typical, server side" \
				"try $try; the client could not time it"
			return 0
		fi
	done
	record "$r" "$p" "$test" failed "" us perftest "$TRIES tries failed, last log ${log#"$RSW_RUN"/}"
}

provider_round() {
	local r=$1 p=$2 t why
	step "round $r: $p"
	if ! provider_up "$p"; then
		why=$(tail -n 1 "$LOGS/provider-$p.log")
		for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
			record "$r" "$p" "$t" failed "" - - "provider did not come up: $why"
		done
		provider_down "$p"
		return 0
	fi
	bw "$r" "$p" write_bw ib_write_bw
	bw "$r" "$p" read_bw ib_read_bw
	bw "$r" "$p" send_bw ib_send_bw
	lat "$r" "$p" write_lat ib_write_lat
	lat "$r" "$p" read_lat ib_read_lat
	lat "$r" "$p" send_lat ib_send_lat
	provider_down "$p"
}

# ---------------------------------------------------------------- TCP

iperf() {
	local r=$1 try log srv v
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-tcp-iperf3-$try.log"
		PORT=$((PORT + 1))
		bounded iperf3 -s -1 -B "$IP" -p "$PORT" >"$log.server" 2>&1 &
		srv=$!
		wait_listen "$PORT" "$srv" tcp_listening || { wait "$srv" || true; continue; }
		bounded iperf3 -c "$IP" -p "$PORT" -t "$TCP_SECONDS" -O 1 -J >"$log" 2>&1 || true
		wait "$srv" 2>/dev/null || true
		v=$(jq -r '.end.sum_received.bits_per_second // empty' "$log" 2>/dev/null) || true
		[ -n "$v" ] || continue
		record "$r" tcp stream_bw ok "$(awk -v v="$v" 'BEGIN { printf "%.3f", v / 1e9 }')" \
			Gb/s "iperf3 -t $TCP_SECONDS -O 1, receiver" "try $try"
		return 0
	done
	record "$r" tcp stream_bw failed "" Gb/s iperf3 "$TRIES tries failed"
}

# sockperf: busy-polling like perftest's default (non-blocking sockets on
# both sides: recvfrom() spins on EAGAIN); the figure is sockperf's 50th
# percentile of RTT/2.  (3.7's --no-rdtsc leaves no valid observations.)
sockperf_pp() {
	local r=$1 try log srv v
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-tcp-sockperf-$try.log"
		PORT=$((PORT + 1))
		bounded sockperf server --tcp -i "$IP" -p "$PORT" --nonblocked >"$log.server" 2>&1 &
		srv=$!
		wait_listen "$PORT" "$srv" tcp_listening || { kill "$srv" 2>/dev/null; wait "$srv" || true; continue; }
		bounded sockperf ping-pong --tcp -i "$IP" -p "$PORT" -m "$LAT_SIZE" \
			-t "$TCP_SECONDS" --nonblocked >"$log" 2>&1 || true
		kill "$srv" 2>/dev/null || true
		wait "$srv" 2>/dev/null || true
		v=$(sed -n 's/.*percentile 50\.000 *= *\([0-9.]*\).*/\1/p' "$log" | head -n 1)
		[ -n "$v" ] || continue
		record "$r" tcp pingpong_lat ok "$v" us "sockperf p50 of RTT/2, busy-poll" "try $try"
		return 0
	done
	record "$r" tcp pingpong_lat failed "" us sockperf "$TRIES tries failed"
}

# ---------------------------------------------------------------- main
{
	echo "guest_cpus=$(nproc)"
	echo "guest_loadavg_start=$(cat /proc/loadavg)"
	echo "kernel=$(uname -r)"
	echo "perftest=$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
	echo "iperf3=$(dpkg-query -W -f='${Version}' iperf3 2>/dev/null)"
	echo "sockperf=$(dpkg-query -W -f='${Version}' sockperf 2>/dev/null)"
	echo "rounds=$ROUNDS"
	echo "mpa_crc=$CRC"
	echo "bw_size=$BW_SIZE"
	echo "bw_iters=$BW_ITERS"
	echo "send_iters=$SEND_ITERS"
	echo "lat_size=$LAT_SIZE"
	echo "lat_iters=$LAT_ITERS"
	echo "tcp_seconds=$TCP_SECONDS"
} >"$OUT/guest.env"

step "RDMA core and $NETDEV with $IP/24"
check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
check modprobe dummy numdummies=0
dummy_netdev "$NETDEV" "$IP/24"

for r in $(seq "$ROUNDS"); do
	for p in $PROVIDERS; do
		provider_round "$r" "$p"
	done
	step "round $r: tcp"
	iperf "$r"
	sockperf_pp "$r"
done

echo "guest_loadavg_end=$(cat /proc/loadavg)" >>"$OUT/guest.env"
step "summary"
column -t -s $'\t' "$RES" | indent || cat "$RES"
ok "bench done: $(grep -c $'\tok\t' "$RES") ok, $(grep -c $'\tfailed\t' "$RES") failed"
