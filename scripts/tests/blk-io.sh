# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # variables the sourcing test sets (below)
# Verified block I/O through a kernel storage ULP over RDMA, shared by
# nvmeof.sh and srp.sh.  Source it after lib.sh and rdma-env.sh.
#
# bio_run runs, at bs=4k and bs=128k, fio randrw (direct, libaio, iodepth
# 16, crc32c verify with verify_backlog, verify_fatal) for $seconds over
# the first $BIO_FIO_SIZE of $bdev, or, on a kernel without SysV IPC (which
# fio needs), a dd O_DIRECT write, read-back and sha256 compare of
# DD_MIB[bs] MiB, announced by a SKIP line and marked "(dd)".  While each
# runs, `rdma res show qp` and `cm_id` are sampled (res_assert_devices).
# It prints and keeps one summary line per block size (bio_summaries):
#   $BIO_HEAD bs=4k read=… MB/s write=… MB/s errors=0$BIO_TAIL
#
# The test sets bdev, seconds, target and host (providers), TGT_IP, PORT
# and host_ip (the connection's addresses), mpa_crc and mpa_conns
# (re_mpa_collect), and defines bio_live: succeeds while every session of
# the ULP is up and never reconnected.  bio_run's arguments name the run
# (files, fio jobs), the restrack names of the target's and the host's
# cm_ids, the least number of connections and the summary lines' head.

BIO_FIO_SIZE=256M
# dd fallback sizes (MiB): 4 KiB direct I/O is slow under TCG and KASAN.
declare -A DD_MIB=([4k]=16 [128k]=64)
# The debug kernel (KASAN) moves about 0.2 MiB/s at 4 KiB: smaller rounds.
if [ "${RSW_KERNEL:-}" = debug ]; then
	DD_MIB=([4k]=4 [128k]=32)
fi
declare -A BIO_SUMMARY=()

# bdev_sectors: sectors read plus written on $bdev so far (/sys/block/X/stat),
# and on its hidden NVMe multipath paths (nvmeXcYnZ): before 6.3 a
# multipath head counts no I/O of its own (Debian's 6.1), after it both
# do.  Only its growth matters (io_flowing).
bdev_sectors() {
	local name=${bdev#/dev/} f stats=()
	stats=("/sys/block/$name/stat")
	if [[ $name =~ ^nvme([0-9]+)n([0-9]+)$ ]]; then
		for f in /sys/class/block/nvme"${BASH_REMATCH[1]}"c*n"${BASH_REMATCH[2]}"/stat; do
			[ -r "$f" ] && stats+=("$f")
		done
	fi
	awk '{ n += $3 + $7 } END { print n }' "${stats[@]}"
}

# For poll_until: $bdev moved sectors since $io_mark.
io_flowing() { [ "$(bdev_sectors)" -gt "$io_mark" ]; }

# res_assert_devices QP CM: while I/O flows (`rdma res show qp`, `cm_id`
# output), every connected cm_id of the ULP sits on the device of its side:
# the target's ($BIO_T_COMM) on $(re_dev $target) at $TGT_IP:$PORT, the
# host's ($BIO_H_COMM) on $(re_dev $host) from $host_ip to $TGT_IP:$PORT,
# none anywhere else; the two sides pair up port by port, one pair per MPA
# connection seen, and the QP of each cm_id is in RTS on that device.  With
# both sides on one provider that is one device; with target != host this
# proves the run really crossed between siw0 and rsw0.  BIO_TARGET_REMOTE=1
# (the target in another guest, wire2.sh): only the host's side is here,
# one cm_id per MPA connection seen.
res_assert_devices() {
	[ "${BIO_TARGET_REMOTE:-0}" = 0 ] || { res_assert_host "$@"; return; }
	local qp=$1 cm=$2 tdev hdev t_re h_re line n dev tports='' hports='' all
	tdev=$(re_dev "$target")
	hdev=$(re_dev "$host")
	t_re="^link $tdev/1 cm-idn [0-9]+ lqpn ([0-9]+) qp-type RC state CONNECT ps TCP comm \[$BIO_T_COMM\] src-addr ${TGT_IP//./\\.}:$PORT dst-addr ${host_ip//./\\.}:([0-9]+) *$"
	h_re="^link $hdev/1 cm-idn [0-9]+ lqpn ([0-9]+) qp-type RC state CONNECT ps TCP comm \[$BIO_H_COMM\] src-addr ${host_ip//./\\.}:([0-9]+) dst-addr ${TGT_IP//./\\.}:$PORT *$"
	all=$(grep -E "state CONNECT .*comm \[($BIO_T_COMM|$BIO_H_COMM)\]" <<<"$cm" || true)
	while read -r line; do
		[ -n "$line" ] || continue
		if [[ $line =~ $t_re ]]; then
			tports+="${BASH_REMATCH[2]} "
			dev=$tdev
		elif [[ $line =~ $h_re ]]; then
			hports+="${BASH_REMATCH[2]} "
			dev=$hdev
		else
			fail "$BIO_NAME cm_id not on the expected device and addresses: $line"
		fi
		n=${BASH_REMATCH[1]}
		grep -Eq "^link $dev/1 lqpn $n .*state RTS " <<<"$qp" ||
			fail "no QP $n in RTS on $dev for: $line"
	done <<<"$all"
	tports=$(tr ' ' '\n' <<<"$tports" | sed '/^$/d' | sort -n | tr '\n' ' ')
	hports=$(tr ' ' '\n' <<<"$hports" | sed '/^$/d' | sort -n | tr '\n' ' ')
	tports=${tports% }
	hports=${hports% }
	n=$(wc -w <<<"$tports")
	[ "$n" -ge "$BIO_MIN_CONNS" ] ||
		fail "$n target cm_ids on $tdev, want at least $BIO_MIN_CONNS"
	assert_eq "$n" "$mpa_conns" "target connections on $tdev = MPA connections seen"
	assert_eq "$hports" "$tports" "host ports on $hdev (paired with the target's on $tdev)"
	ok "$n connections: target on $tdev $TGT_IP:$PORT, host on $hdev $host_ip, QPs in RTS"
}

# res_assert_host QP CM: res_assert_devices for the host's side alone.
res_assert_host() {
	local qp=$1 cm=$2 hdev h_re line n=0 all
	hdev=$(re_dev "$host")
	h_re="^link $hdev/1 cm-idn [0-9]+ lqpn ([0-9]+) qp-type RC state CONNECT ps TCP comm \[$BIO_H_COMM\] src-addr ${host_ip//./\\.}:[0-9]+ dst-addr ${TGT_IP//./\\.}:$PORT *$"
	all=$(grep -E "state CONNECT .*comm \[$BIO_H_COMM\]" <<<"$cm" || true)
	while read -r line; do
		[ -n "$line" ] || continue
		[[ $line =~ $h_re ]] ||
			fail "$BIO_NAME cm_id not on the expected device and addresses: $line"
		grep -Eq "^link $hdev/1 lqpn ${BASH_REMATCH[1]} .*state RTS " <<<"$qp" ||
			fail "no QP ${BASH_REMATCH[1]} in RTS on $hdev for: $line"
		n=$((n + 1))
	done <<<"$all"
	[ "$n" -ge "$BIO_MIN_CONNS" ] ||
		fail "$n host cm_ids on $hdev, want at least $BIO_MIN_CONNS"
	assert_eq "$n" "$mpa_conns" "host connections on $hdev = MPA connections seen"
	ok "$n connections: host on $hdev $host_ip to $TGT_IP:$PORT, QPs in RTS"
}

# sample_while_io WHAT PID: once $bdev moves data while PID (the I/O
# generator) runs, snapshot `rdma res show qp` and `cm_id`.  The snapshot
# shows the connections that carried the I/O as long as the sessions
# stayed up throughout (bio_live: a reconnect would also change the MPA
# count res_assert_devices compares with); a loaded host may finish a
# short fio run before the snapshot is done, which is no reason to fail.
sample_while_io() {
	local what=$1 pid=$2 qp cm
	io_mark=$(bdev_sectors)
	poll_until 60 "$what moves data on $bdev" io_flowing
	check rdma res show qp
	qp=$T_OUT
	check rdma res show cm_id
	cm=$T_OUT
	bio_live || fail "a $BIO_NAME session is not up after the snapshot"
	if kill -0 "$pid" 2>/dev/null; then
		ok "sampled while $what runs"
	else
		ok "sampled after $what moved data, sessions still up ($what ended during the snapshot)"
	fi
	res_assert_devices "$qp" "$cm"
}

# run_io WHAT LIMIT CMD...: CMD in the background (at most LIMIT s), its
# QPs and cm_ids checked while it runs (sample_while_io); CMD must succeed.
run_io() {
	local what=$1 limit=$2 rc=0 out
	shift 2
	out=$(mktemp)
	printf '    $ %s\n' "$*"
	timeout -k 5 "$limit" "$@" >"$out" 2>&1 &
	local pid=$!
	sample_while_io "$what" "$pid"
	wait "$pid" || rc=$?
	[ ! -s "$out" ] || indent <"$out"
	rm -f "$out"
	[ "$rc" -ne 124 ] || fail "$what timed out (${limit}s): $*"
	[ "$rc" -eq 0 ] || fail "exit status $rc from: $*"
}

# fio_summary FILE: error, bytes, runtimes, bandwidths from fio's JSON.
fio_summary() {
	python3 - "$1" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
# fio may print notes before the JSON document.
doc = json.loads(text[text.index('{'):])
job = doc['jobs'][0]
r, w = job['read'], job['write']
print(job['error'], r['io_bytes'], w['io_bytes'], r['runtime'], w['runtime'],
      r['bw_bytes'], w['bw_bytes'])
EOF
}

# fio_run BS: randrw with crc32c verify; sets BIO_SUMMARY[BS].
fio_run() {
	local bs=$1 err rbytes wbytes rms wms rbw wbw json=$RSW_RUN/$BIO_NAME-fio-$1.json
	step "fio randrw bs=$bs for ${seconds}s, crc32c verify on $bdev"
	run_io fio $((seconds * 3 + 120)) fio --name="$BIO_NAME-$bs" --filename="$bdev" \
		--thread --ioengine=libaio --direct=1 --rw=randrw --bs="$bs" --iodepth=16 \
		--size="$BIO_FIO_SIZE" --time_based --runtime="$seconds" \
		--verify=crc32c --verify_backlog=256 --verify_fatal=1 \
		--output-format=json --output="$json"
	check fio_summary "$json"
	read -r err rbytes wbytes rms wms rbw wbw <<<"$T_OUT"
	assert_eq "$err" 0 "fio error (verify errors included)"
	[ "$rbytes" -gt 0 ] || fail "fio read nothing"
	[ "$wbytes" -gt 0 ] || fail "fio wrote nothing"
	ok "read $rbytes bytes in $rms ms, wrote $wbytes bytes in $wms ms"
	BIO_SUMMARY[$bs]="$BIO_HEAD bs=$bs read=$(re_mbps "$rbw" 1000) MB/s write=$(re_mbps "$wbw" 1000) MB/s errors=$err$BIO_TAIL"
}

# dd_run BS: without fio, write DD_MIB[BS] MiB of random data with O_DIRECT
# in BS blocks, read it back the same way and compare sha256; sets
# BIO_SUMMARY[BS].
dd_run() {
	local bs=$1 src=/dev/shm/$BIO_NAME-src back=/dev/shm/$BIO_NAME-back sum t0 wms rms err=0
	local mib=${DD_MIB[$1]}
	step "dd direct-I/O round trip, bs=$bs, $mib MiB, sha256 compare on $bdev"
	check dd if=/dev/urandom of="$src" bs=1M count="$mib" status=none
	sum=$(sha256sum "$src" | cut -d' ' -f1)
	t0=$(now_ms)
	run_io "dd write" 600 dd if="$src" of="$bdev" bs="$bs" oflag=direct conv=fsync status=none
	wms=$(($(now_ms) - t0))
	t0=$(now_ms)
	T_CMD_TIMEOUT=600 check dd if="$bdev" of="$back" bs="$bs" iflag=direct \
		count=$((mib * 1048576 / $(numfmt --from=iec "${bs^^}"))) status=none
	rms=$(($(now_ms) - t0))
	[ "$(sha256sum "$back" | cut -d' ' -f1)" = "$sum" ] || err=1
	rm -f "$src" "$back"
	assert_eq "$err" 0 "sha256 mismatches after the round trip"
	BIO_SUMMARY[$bs]="$BIO_HEAD bs=$bs read=$(re_mbps $((mib * 1048576)) "$rms") MB/s write=$(re_mbps $((mib * 1048576)) "$wms") MB/s errors=$err$BIO_TAIL (dd)"
}

# bio_run NAME T_COMM H_COMM MIN_CONNS HEAD: verified I/O at bs=4k and
# bs=128k, a summary line each (BIO_NAME, BIO_T_COMM, BIO_H_COMM,
# BIO_MIN_CONNS and BIO_HEAD from the arguments, BIO_TAIL from mpa_crc).
bio_run() {
	local bs use_fio=1
	BIO_NAME=$1 BIO_T_COMM=$2 BIO_H_COMM=$3 BIO_MIN_CONNS=$4 BIO_HEAD=$5
	BIO_TAIL=" mpa_crc=$mpa_crc${mpa_m:+ mpa_m=$mpa_m}"
	if [ ! -d /proc/sysvipc ]; then
		use_fio=0
		skip "fio needs SysV shm (shmget), which this kernel lacks (CONFIG_SYSVIPC): dd direct-I/O round trips (4k: ${DD_MIB[4k]} MiB, 128k: ${DD_MIB[128k]} MiB) instead"
	fi
	for bs in 4k 128k; do
		if [ "$use_fio" = 1 ]; then
			fio_run "$bs"
		else
			dd_run "$bs"
		fi
		echo "${BIO_SUMMARY[$bs]}"
	done
}

# bio_summaries: the summary lines again (for the end of the log).
bio_summaries() {
	local bs
	for bs in 4k 128k; do
		echo "${BIO_SUMMARY[$bs]}"
	done
}
