#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The ibverbs-provider-rdmap-sw package with the distribution's own
# rdma-core (bookworm: libibverbs1 44, perftest 4.5), in a guest (the
# overlay takes every write; the host is never touched):
#
#   scripts/deb && scripts/build 6.12 &&
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 900 -- scripts/tests/distro.sh
#
#   dpkg -i ibverbs-provider-rdmap-sw_<ver>_<arch>.deb  (RSW_PROV_DEB, else scripts/deb's)
#   rdmap_sw.ko (scripts/build)   dummy0 10.78.0.1/24 <-- rsw0
#   rdma_rxe                      dummy1 10.78.1.1/24 <-- rxe0
#   then, with an environment of PATH and HOME only (no LD_LIBRARY_PATH,
#   no RDMAV_DRIVERS: asserted), Debian's /usr/bin tools:
#     ibv_devinfo -d rsw0         iWARP, PORT_ACTIVE
#     rping -C 100                every ping verified; the server has
#                                 /usr/lib/<multiarch>/libibverbs/librdmap_sw-rdmav34.so mapped
#     ucmatose                    2 connections x 100 messages
#     ib_write_bw -R, ib_send_lat -R   (perftest over rdma_cm) result rows
#     rxe0 beside it              ibv_devinfo -d rxe0, rping -C 10
#   NVMe-oF unaffected: nvmet-rdma + nvme-rdma over rsw0, 4 MiB written
#   and read back O_DIRECT, sha256 compared
#   dpkg --purge: the files are gone, the provider directory and
#   /etc/libibverbs.d are as before the install.
#
# The module itself is the checkout's build (the DKMS package is pkg.sh's).
# dpkg-query formats are dpkg-query's ${...}, not the shell's:
# shellcheck disable=SC2016
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

DEV=rsw0 IP=10.78.0.1 RXE=rxe0 RXE_IP=10.78.1.1 PINGS=100
NQN=nqn.2026-11.org.rdmap-sw:distro-test PORT=4420
RE_NVMET=/sys/kernel/config/nvmet
PKG=ibverbs-provider-rdmap-sw
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
PROVIDER=/usr/lib/$MA/libibverbs/librdmap_sw-rdmav34.so
DRIVER=/etc/libibverbs.d/rdmap_sw.driver
LOGS=$RSW_RUN/distro
SRV_PID=
mkdir -p "$LOGS"
# re_pair_up: one rdmap_sw device serves both ends.
target=rsw host=rsw

# sys CMD...: CMD with PATH and HOME only, as a login shell would have it
# without any of the tests' rdma-core 56.1 set-up.
sys() {
	timeout -k 5 "$T_CMD_TIMEOUT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
}

# listening PORT: an rdma_cm listener on PORT: iWARP's is a TCP socket
# (rsw0), RoCE's (rxe0) only an rdma_cm id.
listening() {
	ss -Hltn "sport = :$1" | grep -q . ||
		rdma res show cm_id | grep -F 'state LISTEN' | grep -Eq ":$1( |$)"
}
listening_or_gone() { listening "$1" || ! kill -0 "$SRV_PID" 2>/dev/null; }

# server NAME PORT CMD...: CMD (in sys) in the background, listening on
# PORT within 20 s; its output in $LOGS/NAME.server, its pid in SRV_PID.
server() {
	local name=$1 port=$2
	shift 2
	printf '    $ %s &   (server, log %s)\n' "$*" "$LOGS/$name.server"
	timeout -k 5 120 env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		"$@" >"$LOGS/$name.server" 2>&1 &
	SRV_PID=$!
	if ! wait_for 20 listening_or_gone "$port"; then
		{ rdma res show cm_id; ss -Hltn; } 2>&1 | indent
		fail "$name server not listening on port $port after 20 s (rdma_cm ids, TCP listeners above)"
	fi
	kill -0 "$SRV_PID" 2>/dev/null ||
		{ indent <"$LOGS/$name.server"; fail "$name server exited before listening"; }
}

# server_done NAME: the server started last exited 0.
server_done() {
	local rc=0
	wait "$SRV_PID" || rc=$?
	[ "$rc" -eq 0 ] || { tail -n 20 "$LOGS/$1.server" | indent; fail "$1 server exit status $rc"; }
	ok "$1 server exited 0"
}

# provider_state: what libibverbs' two directories hold.
provider_state() { ls -l "/usr/lib/$MA/libibverbs" /etc/libibverbs.d; }

# nvme_bdev: the block device of $NQN.
nvme_bdev() {
	local d
	for d in /sys/block/nvme*n*; do
		if [ ! -e "$d/device/subsysnqn" ] || [ "$(<"$d/device/subsysnqn")" != "$NQN" ] ||
			[ ! -b "/dev/${d##*/}" ]; then
			continue
		fi
		echo "/dev/${d##*/}"
		return 0
	done
	return 1
}

# tool_pid: the tool the server() started last (timeout's child; env execs it).
tool_pid() { awk '{ print $1 }' "/proc/$SRV_PID/task/$SRV_PID/children" 2>/dev/null; }

# tool_maps: the rdmap_sw providers the tool has mapped (paths, one a line).
tool_maps() {
	local pid
	pid=$(tool_pid)
	[ -n "$pid" ] || return 0
	grep -o '/[^ ]*librdmap_sw-rdmav[0-9]*\.so' "/proc/$pid/maps" 2>/dev/null | sort -u || true
}

# perf TOOL SIZE ITERS: perftest over rdma_cm (-R) on $DEV, server and
# client from /usr/bin; the client's result row and both exit 0.  Up to
# three attempts on new ports (perftest's TCG-time failures: uverbs.sh),
# each failed one printed and counted.
PERF_PORT=18515 PERF_RETRIES=0
perf() {
	local tool=$1 size=$2 iters=$3 try rc t0 t1
	step "perftest $tool -R -s $size -n $iters over $DEV"
	for try in 1 2 3; do
		PERF_PORT=$((PERF_PORT + 1))
		server "$tool-$try" "$PERF_PORT" "$tool" -d "$DEV" -R -F -p "$PERF_PORT" \
			-s "$size" -n "$iters"
		printf '    $ %s\n' "$tool -d $DEV -R -F -p $PERF_PORT -s $size -n $iters $IP"
		rc=0 t0=$(date +%s%N)
		T_OUT=$(sys "$tool" -d "$DEV" -R -F -p "$PERF_PORT" -s "$size" \
			-n "$iters" "$IP" 2>&1) || rc=$?
		t1=$(date +%s%N)
		printf '%s\n' "$T_OUT" >"$LOGS/$tool-$try.client"
		grep -E "^[[:space:]]*(#bytes|${size}[[:space:]])" <<<"$T_OUT" | indent || true
		local src=0
		wait "$SRV_PID" || src=$?
		if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ] &&
			grep -Eq "^[[:space:]]*${size}[[:space:]]+${iters}[[:space:]]+[0-9.]+" <<<"$T_OUT"; then
			ok "$tool: result row, client and server exited 0 (attempt $try)"
			perf_zero_note "$tool" "$size" "$iters" "$t0" "$t1"
			return
		fi
		PERF_RETRIES=$((PERF_RETRIES + 1))
		note "attempt $try failed: client exit $rc, server exit $src"
		tail -n 5 "$LOGS/$tool-$try.client" | indent
		tail -n 5 "$LOGS/$tool-$try.server" | indent
	done
	fail "$tool: three attempts failed"
}

# perf_zero_note TOOL SIZE ITERS T0 T1: perftest under TCG prints
# 0.00 MB/s (its CPU clock probe; uverbs.sh): say so, with the figure
# derived from the client's wall time (setup included, so a lower bound).
perf_zero_note() {
	local avg
	case $1 in *_bw) ;; *) return 0 ;; esac
	avg=$(awk -v s="$2" -v n="$3" '$1 == s && $2 == n { print $4; exit }' <<<"$T_OUT")
	awk -v a="$avg" 'BEGIN { exit !(a + 0 == 0) }' || return 0
	note "$1 printed 0 MB/s (perftest's CPU clock probe under TCG); derived: $(awk -v s="$2" \
		-v n="$3" -v t0="$4" -v t1="$5" 'BEGIN { printf "%.2f MB/s", s * n / ((t1 - t0) / 1e9) / 1e6 }') = $3 x $2 B / client wall time incl. setup"
}

# nvmeof_short: NVMe-oF over rsw0 while the package is installed: export
# /dev/nullb0, connect, write 4 MiB O_DIRECT, read it back, compare.
nvmeof_short() {
	local bdev sum_w sum_r
	step "NVMe-oF over $DEV: nvmet-rdma $IP:$PORT, nvme connect, 4 MiB written and read back"
	re_nvmet_export "$NQN" "$IP" "$PORT" /dev/nullb0
	check nvme connect -t rdma -a "$IP" -s "$PORT" -n "$NQN" --host-traddr "$IP"
	poll_until 30 "block device of $NQN" nvme_bdev
	bdev=$(nvme_bdev)
	head -c 4194304 /dev/urandom >"$LOGS/nvme.in" || fail "4 MiB from /dev/urandom"
	sum_w=$(sha256sum <"$LOGS/nvme.in" | cut -d' ' -f1)
	check dd if="$LOGS/nvme.in" of="$bdev" bs=64k oflag=direct conv=fsync status=none
	check dd if="$bdev" of="$LOGS/nvme.out" bs=64k count=64 iflag=direct status=none
	sum_r=$(sha256sum <"$LOGS/nvme.out" | cut -d' ' -f1)
	assert_eq "$sum_r" "$sum_w" "sha256 of the 4 MiB read back from $bdev"
	check nvme disconnect -n "$NQN"
	assert_match "$T_OUT" "disconnected 1 controller" "nvme disconnect"
	re_nvmet_unexport "$NQN"
}

t_banner

step "preconditions: the .deb, Debian's rdma-core 44 tools, no rdmap_sw provider yet"
ver=$(cd "$RSW_TOP" && dpkg-parsechangelog -S Version)
DEB=${RSW_PROV_DEB:-$(rsw_deb_dir)/${PKG}_${ver}_$(dpkg --print-architecture).deb}
[ -f "$DEB" ] || fail "no $DEB: build it with scripts/deb (make deb) first"
ok "$DEB"
check dpkg-query -W -f '${Package} ${Version} ${Status}\n' libibverbs1 ibverbs-utils \
	rdmacm-utils perftest
[ "$(grep -c ' install ok installed$' <<<"$T_OUT")" = 4 ] || fail "not all installed (above)"
for t in ibv_devinfo rping ucmatose ib_write_bw ib_send_lat; do
	check dpkg -S "/usr/bin/$t"
done
# The second provider beside ours: the kernel must have rxe.
check modinfo -n rdma_rxe
if [ -e "$PROVIDER" ] || [ -e "$DRIVER" ]; then
	fail "$PROVIDER or $DRIVER exists before the install"
fi
before=$(provider_state)
ok "no $PROVIDER, no $DRIVER"

step "dpkg -i $PKG"
check dpkg -i "$DEB"
check dpkg-query -W -f '${Package} ${Version} ${Status}\n' "$PKG"
assert_match "$T_OUT" "^$PKG $ver install ok installed$" "$PKG status"
check dpkg -L "$PKG"
assert_match "$T_OUT" "^$PROVIDER$" "packaged provider"
assert_file "$DRIVER" "driver rdmap_sw"

step "RDMA core, nvmet-rdma, nvme-rdma, null_blk; rsw0 on dummy0 $IP"
re_begin
check modprobe -a ib_uverbs rdma_ucm
check modprobe null_blk nr_devices=1 gb=1 bs=4096 memory_backed=1
check modprobe -a nvmet nvmet-rdma nvme-rdma
re_pair_up "" "$IP/24" ""
poll_until 10 "uverbs device for $DEV" uverbs_ready "$DEV"

step "the tools' environment: PATH and HOME, nothing else"
check sys env
assert_no_match "$T_OUT" '^(LD_LIBRARY_PATH|LD_PRELOAD|RDMAV_DRIVERS|RDMAV_[A-Z_]*)=' "environment"
ok "env: $(tr '\n' ' ' <<<"$T_OUT")"

step "ibv_devinfo -d $DEV (/usr/bin, libibverbs $(dpkg-query -W -f '${Version}' libibverbs1))"
check sys ibv_devinfo -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"

step "rping: $PINGS pings, data verified on both sides; the server maps $PROVIDER"
server rping 7174 rping -s -a "$IP" -p 7174 -V -C "$PINGS"
maps=$(tool_maps)
[ "$maps" = "$PROVIDER" ] || fail "the rping server maps '${maps:-no rdmap_sw provider}', not $PROVIDER"
ok "rping server (pid $(tool_pid)) maps $maps"
check sys rping -c -a "$IP" -p 7174 -v -V -C "$PINGS"
pings=$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)
assert_eq "$pings" "$PINGS" "distinct verified pings printed by the client"
server_done rping

step "ucmatose: 2 connections x 100 messages"
server ucmatose 7471 ucmatose -b "$IP" -p 7471 -c 2 -C 100
check sys ucmatose -s "$IP" -p 7471 -c 2 -C 100
assert_match "$T_OUT" 'test complete' "ucmatose client"
server_done ucmatose
assert_match "$(cat "$LOGS/ucmatose.server")" 'test complete' "ucmatose server"

perf ib_write_bw 65536 200
perf ib_send_lat 64 200

step "rxe0 beside rsw0: rdma link add $RXE type rxe netdev dummy1 ($RXE_IP)"
re_pair_netdev dummy1 "$RXE_IP/24"
check modprobe rdma_rxe
check rdma link add "$RXE" type rxe netdev dummy1
poll_until 10 "$RXE port 1 ACTIVE" port_active "$RXE"
poll_until 10 "uverbs device for $RXE" uverbs_ready "$RXE"
check sys ibv_devices
assert_match "$T_OUT" "^[[:space:]]+${DEV}[[:space:]]" "ibv_devices lists $DEV"
assert_match "$T_OUT" "^[[:space:]]+${RXE}[[:space:]]" "ibv_devices lists $RXE"
check sys ibv_devinfo -d "$RXE"
assert_match "$T_OUT" 'transport:[[:space:]]+InfiniBand ' "$RXE transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "$RXE port 1 state"
server rping-rxe 7175 rping -s -a "$RXE_IP" -p 7175 -V -C 10
check sys rping -c -a "$RXE_IP" -p 7175 -v -V -C 10
pings=$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)
assert_eq "$pings" 10 "distinct verified pings over $RXE"
server_done rping-rxe
check sys ibv_devinfo -d "$DEV"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "$DEV still there, port 1 state"

nvmeof_short

step "detach rxe0"
check rdma link delete "$RXE"
poll_until 10 "$RXE removed" gone "/sys/class/infiniband/$RXE"
check ip link del dummy1

step "dpkg --purge $PKG: its files are gone, libibverbs' directories as before"
check dpkg --purge "$PKG"
check_fails dpkg-query -W -f '${Status}\n' "$PKG"
if [ -e "$PROVIDER" ] || [ -e "$DRIVER" ]; then
	fail "$PROVIDER or $DRIVER is still there"
fi
after=$(provider_state)
if [ "$before" != "$after" ]; then
	# (Guests have no /dev/fd: files, not <(...).)
	printf '%s\n' "$before" >"$LOGS/state.before"
	printf '%s\n' "$after" >"$LOGS/state.after"
	diff "$LOGS/state.before" "$LOGS/state.after" | indent || true
	fail "libibverbs' directories differ from before the install (above)"
fi
ok "no $PROVIDER, no $DRIVER; $(find "/usr/lib/$MA/libibverbs" -name '*.so' | wc -l) providers, as before"
# rsw0 is still there, but no provider of the system's claims it now.
check_fails sys ibv_devinfo -d "$DEV"
[ -e "/sys/class/infiniband/$DEV" ] || fail "$DEV went away: the refusal above proves nothing"
ok "$DEV exists, and the system's libibverbs no longer serves it"

re_pair_down
