#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench` (scripts/bench runs it in one VM boot): perftest
# bandwidth and latency over rdma_cm and NVMe-oF (fio over nvme-rdma to an
# nvmet-rdma target) for rdmap_sw, upstream siw and rxe, and single-stream
# TCP (iperf3) and TCP ping-pong (sockperf), all on the same loopback path
# of one guest.
#
#   scripts/vm --kernel 6.12 --run-dir DIR --timeout 1500 -- scripts/tests/bench-guest.sh
#
#   +----------------------- guest ---------------------------+
#   |  perftest server --- rdma_cm ---  perftest client       |
#   |  nvmet-rdma target --- rdma_cm --- nvme-rdma host + fio |
#   |  (one provider at a time: rsw0 | siw0 | rxe0)           |
#   |  iperf3 / sockperf server --- TCP ---  client           |
#   |  dummy0 192.0.2.1/24: traffic to it loops back in-kernel|
#   +---------------------------------------------------------+
#
# One provider at a time, on the same dummy0, so each has the guest to
# itself and the same path.
# Rounds are interleaved to spread host-load drift over every provider:
# round r = { rsw, siw, rxe (rotated by one each round: rsw siw rxe, then
# siw rxe rsw, ...): load, attach, the perftest runs below, the NVMe-oF
# runs, detach, unload; the CRC pass: rsw-crc, siw-crc (rotated the same
# way): the same with MPA CRC on, a subset of the tests; tcp: iperf3,
# sockperf }, for r = 1..$RSW_BENCH_ROUNDS (default 3).
#
# perftest runs per provider and round:
#   bandwidth 64 KiB        write_bw read_bw send_bw
#   16 QPs, 64 KiB          write_bw_q16 (aggregate)
#   one-way message rate    write_mr_64 send_mr_64 write_mr_4k send_mr_4k
#   latency                 write_lat read_lat send_lat (64 B)
#                           write_lat_4k read_lat_4k send_lat_4k
# NVMe-oF runs per provider and round (the provider is target and host;
# namespace: memory-backed null_blk, as in nvmeof.sh; fio libaio, direct):
#   nvme_randread_qd1 nvme_randread_qd32 (4 KiB, kIOPS)
#   nvme_seqread_128k (128 KiB sequential read, iodepth 16, MB/s)
# CRC pass (rsw-crc: rdmap_sw with mpa_crc=Y; siw-crc: scripts/siw's crc/
# build), $CRC_TESTS:
#   write_bw read_bw send_bw write_lat read_lat send_lat nvme_randread_qd32
#
# Environment (scripts/bench sets the first three; scripts/vm passes every
# RSW_* variable exported on the host, so the others can shorten a trial):
#   RSW_BENCH_ROUNDS     rounds (default 3)
#   RSW_BENCH_CRC        on|off: MPA CRC of the main runs (default off)
#   RSW_BENCH_CRC_TABLE  on|off: the CRC pass (default on; off when
#                        RSW_BENCH_CRC is on, the main runs having CRC on)
#   RSW_BENCH_PROVIDERS  providers (default "rsw siw rxe"; the CRC pass
#                        runs rsw-crc and siw-crc for those of rsw, siw named)
#   RSW_BENCH_TESTS      only these tests (names as in results.tsv, e.g.
#                        "write_lat nvme_randread_qd32"; default all)
#   RSW_BENCH_NVME_SECONDS  fio runtime per NVMe-oF run (default 8, after
#                        a 1 s ramp)
#
# Output, under $RSW_RUN/bench/ (scripts/bench turns it into the report):
#   results.tsv  one line per measurement:
#                round provider test status value unit method note
#                status ok|failed; method says where the value came from.
#                provider rsw|siw|rxe|tcp, rsw-crc|siw-crc for the CRC
#                pass; test nvme_teardown (failed only) when NVMe-oF could
#                not be torn down after a provider.
#   guest.env    guest facts (CPUs, loadavg before/after, versions)
#   logs/        every command's output
# A failed measurement or provider is recorded and the bench goes on; the
# script itself exits 0 unless its own set-up fails.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# re_ko: which siw.ko.
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
ROUNDS=${RSW_BENCH_ROUNDS:-3}
# MPA CRC for both iWARP providers (scripts/bench --crc): off, siw's own
# default, unless asked for.
CRC=${RSW_BENCH_CRC:-off}
[ "$CRC" = on ] || CRC=off
# The CRC pass (scripts/bench --crc-table): pointless when the main runs
# have CRC on already.
CRC_TABLE=${RSW_BENCH_CRC_TABLE:-on}
if [ "$CRC_TABLE" != on ] || [ "$CRC" = on ]; then
	CRC_TABLE=off
fi
PROVIDERS=${RSW_BENCH_PROVIDERS:-"rsw siw rxe"}
CRC_PASS=
if [ "$CRC_TABLE" = on ]; then
	for p in rsw siw; do
		[[ " $PROVIDERS " != *" $p "* ]] || CRC_PASS+="$p-crc "
	done
fi
# The CRC pass's subset of the tests: 64 B latency, 64 KiB bandwidth,
# 4 KiB random reads at queue depth 32.
CRC_TESTS="write_bw read_bw send_bw write_lat read_lat send_lat nvme_randread_qd32"
ONLY=${RSW_BENCH_TESTS:-}
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
# 16 QPs: -n is per QP.
Q16_ITERS=1000
# Message rate: enough messages for a second or more at siw's rate; Sends
# with every receive posted in advance (-r), as above.
MR_ITERS=20000
MR_SEND_ITERS=4000
TCP_SECONDS=4
TRIES=4
RUN_TIMEOUT=60
# NVMe-oF: fio's runtime after a ramp (both seconds); the subsystem, on
# the port nvmeof.sh uses.  fio reads the first FIO_SIZE of the namespace.
NVME_SECONDS=${RSW_BENCH_NVME_SECONDS:-8}
NVME_RAMP=1
NQN=nqn.2026-11.org.rdmap-sw:bench
NVMET=/sys/kernel/config/nvmet
NVME_PORT=4420
FIO_SIZE=256M

OUT=$RSW_RUN/bench
LOGS=$OUT/logs
RES=$OUT/results.tsv
mkdir -p "$LOGS"
: >"$RES"

eval "$("$RSW_TOP/scripts/rdma-core" env)"
export LD_LIBRARY_PATH=$RSW_RDMA_LIB
rdma_core_own_provider
# perftest is Debian's (only libibverbs/librdmacm come from rdma-core 56.1).
for tool in ib_write_bw iperf3 sockperf jq fio nvme; do
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
# base P: the provider P runs (rsw-crc is rsw, siw-crc siw).
base() { echo "${1%-crc}"; }
# crc_of P: MPA CRC of P: on for the CRC pass, else as the main runs.
crc_of() { case "$1" in *-crc) echo on ;; *) echo "$CRC" ;; esac; }
# ko_of P: the module file of P (none for rxe: Debian's image ships
# rdma_rxe.ko); siw's crc/ build for CRC on (rdma-env.sh).
ko_of() { [ "$1" = rxe ] || re_ko "$(base "$1")" "$(crc_of "$1")"; }
module_of() { case "$(base "$1")" in rsw) echo rdmap_sw ;; siw) echo siw ;; rxe) echo rdma_rxe ;; esac; }
linktype_of() { case "$(base "$1")" in rsw) echo rdmap_sw ;; siw) echo siw ;; rxe) echo rxe ;; esac; }

# runs P TEST: TEST is measured for provider P: the CRC pass runs
# $CRC_TESTS only, and RSW_BENCH_TESTS, when set, narrows every provider
# to the tests it names.
runs() {
	case "$1" in *-crc) [[ " $CRC_TESTS " == *" $2 "* ]] || return 1 ;; esac
	# RFC 7306 atomics: siw implements none (it terminates the stream).
	case "$1:$2" in siw*:atomic_*) return 1 ;; esac
	[ -z "$ONLY" ] || [[ " $ONLY " == *" $2 "* ]]
}

bounded() { timeout -k 5 "$RUN_TIMEOUT" "$@"; }

# provider_up P: load P's module and attach DEV to $NETDEV; on failure
# print why and return 1.  rdmap_sw gets mpa_crc=Y or N as crc_of says.
provider_up() {
	local p=$1 ko mod crc=N
	DEV=$(base "$p")0
	ko=$(ko_of "$p")
	mod=$(module_of "$p")
	[ "$(crc_of "$p")" = off ] || crc=Y
	{
		if [ -n "$ko" ]; then
			[ -f "$ko" ] || { echo "no $ko"; return 1; }
			if [ "$mod" = rdmap_sw ]; then
				t_insmod_deps "$ko" mpa_crc="$crc" || return 1
				file_is /sys/module/rdmap_sw/parameters/mpa_crc "$crc" ||
					{ echo "rdmap_sw loaded without mpa_crc=$crc"; return 1; }
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
		bounded rdma link delete "$DEV" || true
		wait_for 10 gone "/sys/class/infiniband/$DEV" ||
			echo "$DEV still there 10 s after link delete"
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

# derive TOOL LOG N SIZE METRIC ARGS...: DERIVED from wall clocks: N
# messages of SIZE (all QPs' together) over (span(LOG) - span of the same
# client, same ARGS, with -n 5), in Gb/s for METRIC gbps, in thousands of
# messages a second for kmps; DERIVED_HOW says so.  Fails when the spans
# are missing or differ by less than 1 s: the sampling's own jitter (a few
# tenths of a second under TCG) would dominate.
DERIVED='' DERIVED_HOW=''
derive() {
	local tool=$1 log=$2 n=$3 size=$4 metric=$5 t t5
	shift 5
	perftest_once "$tool" "$log.n5" -s "$size" -n 5 --report_gbits "$@" || true
	t=$(span "$log") t5=$(span "$log.n5")
	[ -n "$t" ] && [ -n "$t5" ] || return 1
	DERIVED=$(awk -v n="$n" -v s="$size" -v t="$t" -v t5="$t5" -v m="$metric" \
		'BEGIN { if (t - t5 >= 1) printf "%.3f", (m == "gbps" ? n * s * 8 / 1e9 : n / 1e3) / (t - t5) }')
	DERIVED_HOW="$n x $size B / ($t s - $t5 s with -n 5)"
	[ -n "$DERIVED" ]
}

# bw ROUND PROVIDER TEST TOOL SIZE N QPS METRIC [ARGS...]: one-way
# transfer of N messages of SIZE per QP on QPS QPs; METRIC gbps records
# perftest's BW average in Gb/s, kmps its message rate in thousands of
# messages a second (all QPs together).
bw() {
	local r=$1 p=$2 test=$3 tool=$4 size=$5 n=$6 qps=$7 metric=$8
	local try log row v iters rc unit=Gb/s
	shift 8
	[ "$metric" = gbps ] || unit=kmsg/s
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-$p-$test-$try.log"
		rc=0
		perftest_once "$tool" "$log" -s "$size" -n "$n" --report_gbits "$@" || rc=$?
		# #bytes #iterations BW-peak BW-average MsgRate[Mpps]
		row=$(awk -v s="$size" -v m="$metric" '$1 == s && NF >= 5 {
			print $2, (m == "gbps" ? $(NF - 1) : $NF * 1000); exit }' "$log")
		iters=${row% *} v=${row#* }
		# perftest counts the iterations of all QPs together.
		if [ "$rc" -eq 0 ] && [ "$iters" = $((n * qps)) ] && [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] &&
			awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }'; then
			# Round 1 also derives the figure of runs perftest timed, to
			# show how well the derivation tracks perftest.
			if [ "$r" = 1 ] && derive "$tool" "$log" $((n * qps)) "$size" "$metric" "$@"; then
				record "$r" "$p" "$test" ok "$v" "$unit" perftest "try $try; derived $DERIVED"
			else
				record "$r" "$p" "$test" ok "$v" "$unit" perftest "try $try"
			fi
			return 0
		fi
		# Derive only when every transfer completed and just the clock
		# sampling failed; anything else is a failed try.
		grep -q "Can't produce a report" "$log" ||
			{ [ "$rc" -eq 0 ] && [ "$iters" = $((n * qps)) ]; } || continue
		derive "$tool" "$log" $((n * qps)) "$size" "$metric" "$@" || continue
		record "$r" "$p" "$test" ok "$DERIVED" "$unit" "derived: $DERIVED_HOW" \
			"try $try; perftest could not time it"
		return 0
	done
	record "$r" "$p" "$test" failed "" "$unit" perftest "$TRIES tries failed, last log ${log#"$RSW_RUN"/}"
}

# lat ROUND PROVIDER TEST TOOL SIZE: latency at SIZE, perftest's t_typical
# (median) in us: half a round trip for write/send, a full Read for read.
lat_ok() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }
lat() {
	local r=$1 p=$2 test=$3 tool=$4 size=$5 try log v
	shift 5
	for try in $(seq "$TRIES"); do
		log="$LOGS/r$r-$p-$test-$try.log"
		perftest_once "$tool" "$log" -s "$size" -n "$LAT_ITERS" "$@" || continue
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
		v=$(awk -v s="$size" '$1 == s && NF >= 6 { print $5; exit }' "$log")
		# "inf" when perftest's CPU clock probe failed (TCG).  Both
		# sides of ib_*_lat time the same ping-pong: then take the
		# server's figure, if its probe worked; else retry.
		if lat_ok "$v"; then
			record "$r" "$p" "$test" ok "$v" us "perftest t_typical" "try $try"
			return 0
		fi
		v=$(awk -v s="$size" '$1 == s && NF >= 6 { print $5; exit }' "$log.server")
		if lat_ok "$v"; then
			record "$r" "$p" "$test" ok "$v" us "perftest t_typical, server side" \
				"try $try; the client could not time it"
			return 0
		fi
	done
	record "$r" "$p" "$test" failed "" us perftest "$TRIES tries failed, last log ${log#"$RSW_RUN"/}"
}

# Every perftest measurement of a provider round: TEST TOOL SIZE KIND, KIND
# bw (Gb/s), q16 (Gb/s on 16 QPs), mr (message rate) or lat.
PERFTESTS="write_bw ib_write_bw $BW_SIZE bw
read_bw ib_read_bw $BW_SIZE bw
send_bw ib_send_bw $BW_SIZE bw
write_bw_q16 ib_write_bw $BW_SIZE q16
write_mr_64 ib_write_bw 64 mr
send_mr_64 ib_send_bw 64 mr
write_mr_4k ib_write_bw 4096 mr
send_mr_4k ib_send_bw 4096 mr
write_lat ib_write_lat $LAT_SIZE lat
read_lat ib_read_lat $LAT_SIZE lat
send_lat ib_send_lat $LAT_SIZE lat
write_lat_4k ib_write_lat 4096 lat
read_lat_4k ib_read_lat 4096 lat
send_lat_4k ib_send_lat 4096 lat
atomic_mr_fa ib_atomic_bw 8 amr FETCH_AND_ADD
atomic_mr_cs ib_atomic_bw 8 amr CMP_AND_SWAP
atomic_lat_fa ib_atomic_lat 8 alat FETCH_AND_ADD"

# measure ROUND PROVIDER TEST TOOL SIZE KIND [ATOMIC]: one line of
# PERFTESTS; amr and alat are ib_atomic_bw/lat with -A ATOMIC.
measure() {
	local r=$1 p=$2 test=$3 tool=$4 size=$5 kind=$6 op=${7:-} n
	case "$kind" in
	bw)
		n=$BW_ITERS
		[ "$tool" != ib_send_bw ] || n=$SEND_ITERS
		bw "$r" "$p" "$test" "$tool" "$size" "$n" 1 gbps ;;
	q16) bw "$r" "$p" "$test" "$tool" "$size" "$Q16_ITERS" 16 gbps -q 16 ;;
	mr)
		if [ "$tool" = ib_send_bw ]; then
			bw "$r" "$p" "$test" "$tool" "$size" "$MR_SEND_ITERS" 1 kmps -r "$MR_SEND_ITERS"
		else
			bw "$r" "$p" "$test" "$tool" "$size" "$MR_ITERS" 1 kmps
		fi ;;
	lat) lat "$r" "$p" "$test" "$tool" "$size" ;;
	amr) bw "$r" "$p" "$test" "$tool" "$size" "$MR_ITERS" 1 kmps -A "$op" ;;
	alat) lat "$r" "$p" "$test" "$tool" "$size" -A "$op" ;;
	esac
}

# ---------------------------------------------------------------- NVMe-oF
# Every NVMe-oF measurement of a provider round: TEST, fio's --rw, --bs,
# --iodepth, and the figure (iops: kIOPS, mbps: MB/s).
NVMETESTS="nvme_randread_qd1 randread 4k 1 iops
nvme_randread_qd32 randread 4k 32 iops
nvme_seqread_128k read 128k 16 mbps"

# nvme_bdev: the block device of $NQN (multipath head or plain).
nvme_bdev() {
	local f
	for f in /sys/block/nvme*n*/device/subsysnqn; do
		file_is "$f" "$NQN" || continue
		f=${f#/sys/block/}
		f=/dev/${f%%/*}
		[ -b "$f" ] || continue
		echo "$f"
		return 0
	done
	return 1
}

# no_nvme_ctrl: no NVMe controller is left (for wait_for).
no_nvme_ctrl() { ! compgen -G '/sys/class/nvme/nvme*' >/dev/null; }

# put FILE VALUE: write VALUE into the configfs attribute FILE, saying so.
put() {
	printf '$ echo %s > %s\n' "$2" "$1"
	printf '%s' "$2" >"$1"
}

# nvmet_export: subsystem $NQN, any host, namespace 1 on /dev/nullb0, on
# nvmet port 1 (rdma, $IP:$NVME_PORT), as rdma-env.sh's re_nvmet_export
# sets it up.  Not that one: it fails the whole script at its first error,
# and it waits for nvmet-rdma's "enabling port 1" in the kernel log, which
# the first provider of the boot has printed already (the second one's
# wait may then see that line, or, under pipefail, its grep -q SIGPIPE
# dmesg and time out); this one waits for the listening cm_id.
nvmet_export() {
	local s=$NVMET/subsystems/$NQN port=$NVMET/ports/1
	t_cmd mkdir "$s" "$s/namespaces/1" "$port" || return
	put "$s/attr_allow_any_host" 1 && put "$s/namespaces/1/device_path" /dev/nullb0 &&
		put "$s/namespaces/1/enable" 1 && put "$port/addr_trtype" rdma &&
		put "$port/addr_adrfam" ipv4 && put "$port/addr_traddr" "$IP" &&
		put "$port/addr_trsvcid" "$NVME_PORT" || return
	t_cmd ln -s "$s" "$port/subsystems/$NQN" || return
	wait_for 10 listening "$NVME_PORT" ||
		{ echo "nvmet-rdma not listening on $IP:$NVME_PORT 10 s after enabling port 1"; return 1; }
}

# nvme_up: the nvmet target on $DEV (subsystem $NQN, namespace a
# memory-backed null_blk, port $IP:$NVME_PORT) and the host connected to
# it over $DEV too; sets BDEV.  Prints every command; on failure says why
# and returns 1.
BDEV=
nvme_up() {
	BDEV=
	t_cmd modprobe null_blk nr_devices=1 gb=1 bs=4096 memory_backed=1 || return
	t_cmd modprobe -a nvmet nvmet-rdma nvme-rdma || return
	mountpoint -q /sys/kernel/config || t_cmd mount -t configfs none /sys/kernel/config || return
	nvmet_export || return
	t_cmd nvme connect -t rdma -a "$IP" -s "$NVME_PORT" -n "$NQN" --host-traddr "$IP" || return
	wait_for 30 nvme_bdev || { echo "no block device for $NQN 30 s after nvme connect"; return 1; }
	BDEV=$(nvme_bdev)
	echo "block device $BDEV"
}

# nvme_down: undo whatever of nvme_up was done (host first), unload
# nvme-rdma and nvmet-rdma (which fails if a queue was left behind);
# returns 1 if anything is left.
nvme_down() {
	local s=$NVMET/subsystems/$NQN rc=0 m
	no_nvme_ctrl || t_cmd nvme disconnect -n "$NQN" || rc=1
	wait_for 30 no_nvme_ctrl || { echo "NVMe controllers left 30 s after disconnect"; rc=1; }
	if [ -d "$NVMET" ]; then
		[ ! -L "$NVMET/ports/1/subsystems/$NQN" ] ||
			t_cmd rm "$NVMET/ports/1/subsystems/$NQN" || rc=1
		[ ! -d "$NVMET/ports/1" ] || t_cmd rmdir "$NVMET/ports/1" || rc=1
		[ ! -d "$s/namespaces/1" ] || { echo 0 >"$s/namespaces/1/enable" &&
			t_cmd rmdir "$s/namespaces/1"; } || rc=1
		[ ! -d "$s" ] || t_cmd rmdir "$s" || rc=1
	fi
	for m in nvme_rdma nvmet_rdma; do
		[ ! -e "/sys/module/$m" ] || t_cmd modprobe -r "$m" || rc=1
	done
	return "$rc"
}

# nvme_fio ROUND PROVIDER TEST RW BS QD METRIC: one fio run on $BDEV
# (one try: fio has no clock to fail, a failure is the transport's).
nvme_fio() {
	local r=$1 p=$2 test=$3 rw=$4 bs=$5 qd=$6 metric=$7 log unit=kIOPS v=
	log="$LOGS/r$r-$p-$test.json"
	[ "$metric" = iops ] || unit=MB/s
	if bounded fio --name="$test" --filename="$BDEV" --thread --ioengine=libaio --direct=1 \
		--rw="$rw" --bs="$bs" --iodepth="$qd" --size="$FIO_SIZE" --time_based \
		--ramp_time="$NVME_RAMP" --runtime="$NVME_SECONDS" \
		--output-format=json --output="$log" >"$log.err" 2>&1; then
		# fio may print notes before its JSON document.
		v=$(sed -n '/^{/,$p' "$log" | jq -r --arg m "$metric" '.jobs[0]
			| select(.error == 0 and .read.io_bytes > 0)
			| if $m == "iops" then .read.iops / 1e3 else .read.bw_bytes / 1e6 end') || v=
	fi
	if [[ "$v" =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]]; then
		record "$r" "$p" "$test" ok "$(awk -v v="$v" 'BEGIN { printf "%.3f", v }')" "$unit" \
			"fio $rw bs=$bs iodepth=$qd ${NVME_SECONDS}s" ""
	else
		record "$r" "$p" "$test" failed "" "$unit" fio "fio failed, see ${log#"$RSW_RUN"/}{,.err}"
	fi
}

# nvme_round ROUND PROVIDER: the NVMe-oF runs of a provider round, then
# the teardown (a failed one is recorded as test nvme_teardown).
nvme_round() {
	local r=$1 p=$2 log test rw bs qd metric why todo=''
	while read -r test _; do
		runs "$p" "$test" && todo+="$test "
	done <<<"$NVMETESTS"
	[ -n "$todo" ] || return 0
	log="$LOGS/r$r-$p-nvme.log"
	if nvme_up >>"$log" 2>&1; then
		while read -r test rw bs qd metric; do
			runs "$p" "$test" || continue
			nvme_fio "$r" "$p" "$test" "$rw" "$bs" "$qd" "$metric" </dev/null
		done <<<"$NVMETESTS"
	else
		why=$(tail -n 1 "$log")
		for test in $todo; do
			record "$r" "$p" "$test" failed "" - - "NVMe-oF set-up failed: $why"
		done
	fi
	nvme_down >>"$log" 2>&1 ||
		record "$r" "$p" nvme_teardown failed "" - - "see ${log#"$RSW_RUN"/}"
}

# ---------------------------------------------------------------- rounds
provider_round() {
	local r=$1 p=$2 why test tool size kind
	step "round $r: $p"
	if ! provider_up "$p"; then
		why=$(tail -n 1 "$LOGS/provider-$p.log")
		while read -r test _; do
			runs "$p" "$test" || continue
			record "$r" "$p" "$test" failed "" - - "provider did not come up: $why"
		done <<<"$PERFTESTS"$'\n'"$NVMETESTS"
		provider_down "$p"
		return 0
	fi
	while read -r test tool size kind op; do
		runs "$p" "$test" || continue
		measure "$r" "$p" "$test" "$tool" "$size" "$kind" ${op:+"$op"} </dev/null
	done <<<"$PERFTESTS"
	nvme_round "$r" "$p"
	provider_down "$p"
}

# rotated R WORDS...: WORDS rotated left by R - 1 (round 1 as given).
rotated() {
	local k=$((($1 - 1) % ($# - 1))) w
	shift
	w=("$@")
	echo "${w[@]:k}" "${w[@]:0:k}"
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
	echo "fio=$(dpkg-query -W -f='${Version}' fio 2>/dev/null)"
	echo "nvme_cli=$(dpkg-query -W -f='${Version}' nvme-cli 2>/dev/null)"
	echo "rounds=$ROUNDS"
	echo "mpa_crc=$CRC"
	echo "crc_table=$CRC_TABLE"
	echo "crc_tests=$CRC_TESTS"
	echo "only_tests=$ONLY"
	echo "bw_size=$BW_SIZE"
	echo "bw_iters=$BW_ITERS"
	echo "send_iters=$SEND_ITERS"
	echo "lat_size=$LAT_SIZE"
	echo "lat_iters=$LAT_ITERS"
	echo "q16_iters=$Q16_ITERS"
	echo "mr_iters=$MR_ITERS"
	echo "mr_send_iters=$MR_SEND_ITERS"
	echo "tcp_seconds=$TCP_SECONDS"
	echo "nvme_seconds=$NVME_SECONDS"
	echo "nvme_ramp=$NVME_RAMP"
	echo "fio_size=$FIO_SIZE"
} >"$OUT/guest.env"

step "RDMA core and $NETDEV with $IP/24"
check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
check modprobe dummy numdummies=0
dummy_netdev "$NETDEV" "$IP/24"

for r in $(seq "$ROUNDS"); do
	# shellcheck disable=SC2086 # a word list
	for p in $(rotated "$r" $PROVIDERS); do
		provider_round "$r" "$p"
	done
	# The CRC pass, its order rotated too.
	# shellcheck disable=SC2086 # a word list
	[ -z "$CRC_PASS" ] || for p in $(rotated "$r" $CRC_PASS); do
		provider_round "$r" "$p"
	done
	runs tcp stream_bw || runs tcp pingpong_lat || continue
	step "round $r: tcp"
	! runs tcp stream_bw || iperf "$r"
	! runs tcp pingpong_lat || sockperf_pp "$r"
done

echo "guest_loadavg_end=$(cat /proc/loadavg)" >>"$OUT/guest.env"
step "summary"
column -t -s $'\t' "$RES" | indent || cat "$RES"
ok "bench done: $(grep -c $'\tok\t' "$RES") ok, $(grep -c $'\tfailed\t' "$RES") failed"
