# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared guest-side set-up for the kernel data path tests (nvmeof.sh,
# nfs-rdma.sh) and the two-device rdmap_sw tests (stats.sh, settings.sh,
# res.sh): RDMA providers on dummy netdevs, module bookkeeping.  Source it
# after lib.sh.
#
# Providers:
#   siw  upstream siw.ko built by scripts/siw (a test peer), from
#        $(rsw_siw_dir $RSW_KREL)/{plain,crc}/siw.ko; device siw0, link type siw
#   rsw  our rdmap_sw.ko from $RSW_OUT (scripts/build); device rsw0, link
#        type rdmap_sw
#
# MPA CRC (--crc on|off, empty = provider default):
#   siw  6.12's siw has no CRC module parameter (compile-time constants), so
#        "on" loads the crc/ variant that requires CRC; "off" and the default
#        load plain/ siw, which does not ask for CRC but accepts a peer's ask.
#   rsw  module parameter mpa_crc=Y|N, passed only when --crc was given.
#
# MPA Markers (--markers on|off, empty = provider default):
#   siw  has no Markers: "on" is refused.
#   rsw  module parameter mpa_markers=Y|N (ask for Markers in what it
#        receives), passed only when --markers was given.

RE_IB=/sys/class/infiniband
RE_MODS_BEFORE=

# Modules loaded now, one per line.  (Guests have no /dev/fd: no <(...).)
re_modules() { awk '{ print $1 }' /proc/modules | sort; }

# Modules loaded now but not at re_begin.
re_new_modules() {
	re_modules | grep -vxF -f "$RE_MODS_BEFORE" || true
}

# re_begin: remember the modules loaded before the test, load the RDMA core
# and the dummy netdev driver.
re_begin() {
	RE_MODS_BEFORE=$(mktemp)
	re_modules >"$RE_MODS_BEFORE"
	# grep -f with an empty file matches nothing, as wanted; keep it non-empty.
	echo '#' >>"$RE_MODS_BEFORE"
	local m
	for m in ib_core iw_cm rdma_cm; do
		check modprobe "$m"
	done
	# numdummies=0: the driver would otherwise create its own dummy0.
	check modprobe dummy numdummies=0
}

re_check_provider_name() {
	case "$1" in
	siw|rsw) ;;
	*) fail "unknown provider '$1' (want siw or rsw)" ;;
	esac
}

# re_ko PROVIDER CRC: the module file to load.
re_ko() {
	case "$1" in
	siw)
		if [ "$2" = on ]; then
			echo "$(rsw_siw_dir "$RSW_KREL")/crc/siw.ko"
		else
			echo "$(rsw_siw_dir "$RSW_KREL")/plain/siw.ko"
		fi
		;;
	rsw) echo "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko" ;;
	esac
}

re_module() { case "$1" in siw) echo siw ;; rsw) echo rdmap_sw ;; esac; }
re_linktype() { re_module "$1"; }
re_dev() { case "$1" in siw) echo siw0 ;; rsw) echo rsw0 ;; esac; }

re_hint() {
	case "$1" in
	siw) echo "run scripts/siw $RSW_KERNEL on the host" ;;
	rsw) echo "run scripts/build $RSW_KERNEL on the host" ;;
	esac
}

# re_load PROVIDER CRC [MARKERS]: load the provider's module (once).
re_load() {
	local p=$1 crc=$2 markers=${3:-} ko mod args=()
	ko=$(re_ko "$p" "$crc")
	mod=$(re_module "$p")
	[ ! -e "/sys/module/$mod" ] || return 0
	[ -f "$ko" ] || fail "no $ko: $(re_hint "$p")"
	check modinfo -F vermagic "$ko"
	assert_eq "${T_OUT%% *}" "$(uname -r)" "$mod.ko vermagic release"
	if [ "$p" = rsw ] && [ -n "$crc" ]; then
		modinfo -F parm "$ko" | grep -q '^mpa_crc:' ||
			fail "--crc $crc asked for rdmap_sw, but $ko has no mpa_crc parameter yet"
		if [ "$crc" = on ]; then args=(mpa_crc=Y); else args=(mpa_crc=N); fi
	fi
	if [ "$p" = siw ] && [ "$markers" = on ]; then
		fail "--markers on asked for siw, which has no MPA Markers"
	fi
	if [ "$p" = rsw ] && [ -n "$markers" ]; then
		modinfo -F parm "$ko" | grep -q '^mpa_markers:' ||
			fail "--markers $markers asked for rdmap_sw, but $ko has no mpa_markers parameter"
		if [ "$markers" = on ]; then args+=(mpa_markers=Y); else args+=(mpa_markers=N); fi
	fi
	insmod_deps "$ko" "${args[@]}"
	[ -e "/sys/module/$mod" ] || fail "/sys/module/$mod missing after insmod"
	if [ "$p" = rsw ] && [ -n "$crc" ]; then
		assert_file "/sys/module/$mod/parameters/mpa_crc" "${args[0]#mpa_crc=}"
	fi
	if [ "$p" = rsw ] && [ -n "$markers" ]; then
		assert_file "/sys/module/$mod/parameters/mpa_markers" \
			"$([ "$markers" = on ] && echo Y || echo N)"
	fi
}

# re_netdev NAME CIDR: a dummy netdev, up, with an IPv4 address.
re_netdev() { dummy_netdev "$@"; }

# re_attach PROVIDER NETDEV: rdma link add <dev> type <type> netdev NETDEV,
# then wait for the port to be ACTIVE.
re_attach() {
	local dev
	dev=$(re_dev "$1")
	rdma_attach "$dev" "$(re_linktype "$1")" "$2"
	check rdma link show "$dev/1"
	assert_match "$T_OUT" "netdev $2( |$)" "$dev netdev"
}

# re_detach PROVIDER: rdma link delete, and the device is gone.
re_detach() {
	local dev
	dev=$(re_dev "$1")
	check rdma link delete "$dev"
	poll_until 10 "$RE_IB/$dev removed" gone "$RE_IB/$dev"
}

# re_rsw_dev DEV NETDEV ADDR/PREFIX: a dummy NETDEV with ADDR and
# rdmap_sw's DEV on it, until its uverbs device is there.
re_rsw_dev() {
	re_netdev "$2" "$3"
	rdma_attach "$1" rdmap_sw "$2"
	poll_until 10 "uverbs device for $1" uverbs_ready "$1"
}

# re_rsw_two_up SRV CLI [PARAM...]: re_begin, then rdmap_sw (loaded with
# the PARAMs) with rsw0 on dummy0 (SRV/24) and rsw1 on dummy1 (CLI/24):
# the set-up of the two-device tests (stats.sh, res.sh).
re_rsw_two_up() {
	local srv=$1 cli=$2
	shift 2
	re_begin
	check modprobe -a ib_uverbs rdma_ucm
	insmod_deps "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko" "$@"
	re_rsw_dev rsw0 dummy0 "$srv/24"
	re_rsw_dev rsw1 dummy1 "$cli/24"
}

# re_rsw_two_down: delete rsw1 and rsw0 and their dummies, unload what
# re_begin did not find and check the kernel log.
re_rsw_two_down() {
	check rdma link delete rsw1
	check rdma link delete rsw0
	poll_until 10 "devices gone" eval "gone $RE_IB/rsw0 && gone $RE_IB/rsw1"
	check ip link del dummy0
	check ip link del dummy1
	re_unload_all
	dmesg_clean
}

# re_pair_up CRC TGT_CIDR HOST_CIDR: the providers of a test with a
# target and a host side ($target, $host): the target's on dummy0 with
# TGT_CIDR, the host's on dummy1 with HOST_CIDR, or, for one provider on
# both sides, one device on dummy0 serving both ends; sets host_ip.
# shellcheck disable=SC2154,SC2034 # target, host, host_ip: the test's
re_pair_up() {
	local crc=$1
	re_pair_netdev dummy0 "$2"
	re_load "$target" "$crc" "${markers:-}"
	re_attach "$target" dummy0
	if [ "$host" != "$target" ]; then
		re_pair_netdev dummy1 "$3"
		re_load "$host" "$crc" "${markers:-}"
		re_attach "$host" dummy1
		host_ip=${3%/*}
	else
		host_ip=${2%/*}
	fi
}

# re_pair_netdev NAME CIDR: a dummy netdev with an IPv4 or IPv6 address
# (without DAD: an address still tentative is not listened on).
re_pair_netdev() {
	re_netdev "$1"
	case "$2" in
	*:*) check ip -6 addr add "$2" dev "$1" nodad ;;
	*) check ip addr add "$2" dev "$1" ;;
	esac
}

# re_pair_down: undo re_pair_up, unload every module loaded since
# re_begin and check the kernel log, a step each.
# shellcheck disable=SC2154 # target, host: the test's
re_pair_down() {
	step "delete the RDMA links and the netdevs"
	re_detach "$target"
	check ip link del dummy0
	if [ "$host" != "$target" ]; then
		re_detach "$host"
		check ip link del dummy1
	fi
	step "unload every module the test loaded"
	re_unload_all
	step "the kernel log is clean"
	dmesg_clean
}

# re_unload_all: unload every module loaded since re_begin (in whatever order
# their reference counts allow) and assert that none is left.
re_unload_all() {
	local extra m progress=1 left name refcnt
	local -A refs
	while [ "$progress" = 1 ]; do
		progress=0
		extra=$(re_new_modules)
		# Reference counts, read by the shell: an awk per module and pass
		# costs seconds under TCG.
		refs=()
		while read -r name _ refcnt _; do
			refs[$name]=$refcnt
		done </proc/modules
		for m in $extra; do
			if [ "${refs[$m]:-}" = 0 ] && rmmod "$m" 2>/dev/null; then
				note "rmmod $m"
				progress=1
			fi
		done
	done
	left=$(re_new_modules | tr '\n' ' ')
	left=${left% }
	[ -z "$left" ] || { grep -E "^(${left// /|}) " /proc/modules | indent || true
		fail "modules still loaded: $left"; }
	ok "every module the test loaded is unloaded"
}

# re_mbps BYTES MS: MB/s (10^6 bytes per second), one decimal.
re_mbps() {
	awk -v b="$1" -v ms="$2" 'BEGIN { if (ms <= 0) ms = 1; printf "%.1f", b / 1e6 / (ms / 1000) }'
}

# MPA negotiation seen on the wire.  re_mpa_watch_start PORT [IFACE] starts
# a sniffer (python3, AF_PACKET on IFACE, default lo, where traffic between
# local addresses flows; on lo each packet is seen once, as it arrives)
# that counts MPA request and reply frames to/from TCP PORT, once per TCP
# connection whatever TCP retransmits or netem duplicates, and their
# CRC bit (IPv4, or IPv6 without extension headers); re_mpa_watch_stop
# prints "req=N req_crc=N rep=N rep_crc=N req_rd=N rep_rd=N req_v1=N
# rep_v1=N req_m=N rep_m=N req_v6=N rep_v6=N".  The CRC in use on a
# connection is the reply's C bit (RFC 5044 7.1).  req_rd counts Requests whose RFC 6581 words offer peer-to-peer
# with a zero-length Read as the only RTR and ORD >= 1 (what iw_cxgb4
# sends by default), rep_rd Replies that pick the Read RTR with IRD >= 1;
# req_v1 and rep_v1 count frames of MPA revision 1; req_m and rep_m frames
# with the M bit (Markers are per direction: a frame's M asks for them in
# what its sender receives, RFC 5044 7.1.1); req_v6 and rep_v6 frames
# carried over IPv6.
RE_MPA_PID=
RE_MPA_OUT=

re_mpa_watch_start() {
	local iface=${2:-lo}
	RE_MPA_OUT=$(mktemp)
	python3 -c '
import signal, socket, struct, sys
port, out, iface = int(sys.argv[1]), sys.argv[2], sys.argv[3]
seen = set()
n = {"req": 0, "req_crc": 0, "rep": 0, "rep_crc": 0, "req_rd": 0, "rep_rd": 0,
     "req_v1": 0, "rep_v1": 0, "req_m": 0, "rep_m": 0, "req_v6": 0, "rep_v6": 0}
def rtr_read(name, f):
    # RFC 6581: IRD word A|B|IRD, ORD word C|D|ORD; D is the Read RTR.
    if len(f) < 24 or not f[16] & 0x10:
        return False
    ird, ord_ = struct.unpack("!HH", f[20:24])
    if not ird & 0x8000 or (ord_ & 0xc000) != 0x4000:
        return False
    if name == "req":
        return not ird & 0x4000 and ord_ & 0x3fff >= 1
    return ird & 0x3fff >= 1
def dump(*_):
    with open(out, "w") as f:
        f.write(" ".join("%s=%d" % kv for kv in n.items()) + "\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, dump)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((iface, 0))
open(out + ".ready", "w").close()
while True:
    pkt, addr = s.recvfrom(65535)
    if (iface == "lo" and addr[2] == socket.PACKET_OUTGOING) or len(pkt) < 34:
        continue
    ether = struct.unpack("!H", pkt[12:14])[0]
    if ether == 0x0800 and pkt[23] == 6:
        tcp = 14 + (pkt[14] & 15) * 4
        ips = pkt[26:34]
    elif ether == 0x86DD and len(pkt) >= 74 and pkt[20] == 6:
        tcp = 54
        ips = pkt[22:54]
    else:
        continue
    sport, dport = struct.unpack("!HH", pkt[tcp:tcp + 4])
    if port not in (sport, dport):
        continue
    data = pkt[tcp + (pkt[tcp + 12] >> 4) * 4:]
    for key, name in ((b"MPA ID Req Frame", "req"), (b"MPA ID Rep Frame", "rep")):
        i = data.find(key)
        if i >= 0 and len(data) > i + 17:
            flow = (name, ips, pkt[tcp:tcp + 4])
            if flow in seen:
                continue
            seen.add(flow)
            n[name] += 1
            if data[i + 16] & 0x40:
                n[name + "_crc"] += 1
            if data[i + 16] & 0x80:
                n[name + "_m"] += 1
            if rtr_read(name, data[i:]):
                n[name + "_rd"] += 1
            if data[i + 17] == 1:
                n[name + "_v1"] += 1
            if ether == 0x86DD:
                n[name + "_v6"] += 1
' "$1" "$RE_MPA_OUT" "$iface" &
	RE_MPA_PID=$!
	# A hang guard, not a speed check: python's start on the debug
	# kernel with the other queue's guest beside it took over 10 s.
	poll_until 60 "MPA sniffer on $iface ready" test -e "$RE_MPA_OUT.ready"
}

re_mpa_watch_stop() {
	kill -TERM "$RE_MPA_PID" 2>/dev/null || true
	wait "$RE_MPA_PID" 2>/dev/null || true
	cat "$RE_MPA_OUT"
	rm -f "$RE_MPA_OUT" "$RE_MPA_OUT.ready"
}

# re_mpa_collect CRC: stop the sniffer, assert its counts (re_mpa_assert)
# and the M bits for $markers (re_mpa_assert_markers), and set mpa_counts
# (its line), mpa_crc ("replies with CRC/replies"), mpa_m ("replies with
# M/replies") and mpa_conns (replies).
# shellcheck disable=SC2034 # mpa_conns: the test's
re_mpa_collect() {
	check re_mpa_watch_stop
	mpa_counts=$T_OUT
	re_mpa_assert "$mpa_counts" "$1"
	re_mpa_assert_markers "$mpa_counts" "${markers:-}"
	mpa_crc=$(sed -n 's/.*\brep=\([0-9]*\) rep_crc=\([0-9]*\).*/\2\/\1/p' <<<"$mpa_counts")
	mpa_conns=${mpa_crc#*/}
	mpa_m=$(re_mpa_count "$mpa_counts" rep_m)/$mpa_conns
}

# re_mpa_assert_markers COUNTS MARKERS: with "on" (rdmap_sw asking on both
# ends) every Request and every Reply has M; with "off" none has; empty:
# reported only.
re_mpa_assert_markers() {
	local counts=$1 markers=$2 k
	local -A n=()
	for k in req rep req_m rep_m; do
		n[$k]=$(re_mpa_count "$counts" "$k")
	done
	case "$markers" in
	on)
		assert_eq "${n[req_m]}" "${n[req]}" "MPA requests with M (of ${n[req]})"
		assert_eq "${n[rep_m]}" "${n[rep]}" "MPA replies with M (of ${n[rep]})" ;;
	off)
		assert_eq "${n[req_m]}" 0 "MPA requests with M (of ${n[req]})"
		assert_eq "${n[rep_m]}" 0 "MPA replies with M (of ${n[rep]})" ;;
	*) note "MPA frames with M: requests ${n[req_m]} of ${n[req]}, replies ${n[rep_m]} of ${n[rep]} (no --markers given)" ;;
	esac
}

# re_mpa_assert COUNTS CRC: every MPA reply has the C bit when CRC is "on",
# none has it when "off"; any result is accepted (and reported) when empty.
re_mpa_assert() {
	local counts=$1 crc=$2 rep rep_crc
	rep=$(sed -n 's/.*\brep=\([0-9]*\).*/\1/p' <<<"$counts")
	rep_crc=$(sed -n 's/.*\brep_crc=\([0-9]*\).*/\1/p' <<<"$counts")
	if [ -z "$rep" ] || [ "$rep" -eq 0 ]; then
		fail "no MPA reply seen on lo ($counts)"
	fi
	case "$crc" in
	on) assert_eq "$rep_crc" "$rep" "MPA replies with CRC (of $rep)" ;;
	off) assert_eq "$rep_crc" 0 "MPA replies with CRC (of $rep)" ;;
	*) note "MPA replies with CRC: $rep_crc of $rep (no --crc given)" ;;
	esac
}

# re_mpa_count COUNTS KEY: the number KEY=N in re_mpa_watch_stop's line.
re_mpa_count() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" <<<"$1"; }

# re_rtr_assert COUNTS: every MPA Request offered only the Read RTR with
# ORD >= 1 and every Reply picked it with IRD >= 1 (after re_rsw_cxgb4).
re_rtr_assert() {
	local counts=$1 k
	local -A n=()
	for k in req req_rd rep rep_rd; do
		n[$k]=$(re_mpa_count "$counts" "$k")
	done
	[ "${n[req]:-0}" -gt 0 ] || fail "no MPA Request seen ($counts)"
	assert_eq "${n[req_rd]}" "${n[req]}" "Requests offering only a Read RTR with ORD >= 1 (of ${n[req]})"
	assert_eq "${n[rep_rd]}" "${n[rep]}" "Replies picking the Read RTR with IRD >= 1 (of ${n[rep]})"
}

# re_rsw_set DEV ATTR VALUE: a per-device setting of rdmap_sw (sysfs), read
# back.
re_rsw_set() {
	local f=$RE_IB/$1/$2
	[ -w "$f" ] || fail "no setting $f"
	echo "$3" >"$f" || fail "echo $3 > $f"
	assert_file "$f" "$3"
}

# re_rsw_cxgb4 DEV: make DEV's new connections behave as iw_cxgb4 at its
# defaults: peer-to-peer, CRC, revision 2, a zero-length Read as the only
# RTR (an initiator raises ORD 0 to 1 for it), which its responder accepts.
re_rsw_cxgb4() {
	re_rsw_set "$1" peer_to_peer 1
	re_rsw_set "$1" mpa_crc on
	re_rsw_set "$1" mpa_rev 2
	re_rsw_set "$1" rtr_types read
}

# NVMe-oF target through nvmet's configfs.  re_nvmet_export NQN TRADDR
# PORT BDEV: subsystem NQN (any host may connect) with BDEV as namespace 1,
# on nvmet port 1 (rdma, TRADDR:PORT, IPv4 or, for an address with a
# colon, IPv6; 0.0.0.0 listens on every RDMA device); the port is enabled
# when this returns.  re_nvmet_unexport NQN undoes it.
RE_NVMET=/sys/kernel/config/nvmet
re_nvmet_export() {
	local nqn=$1 addr=$2 port=$3 bdev=$4 s=$RE_NVMET/subsystems/$1 fam=ipv4 logged=$2:$3
	# nvmet-rdma logs the port as %pISpcs: an IPv6 address in brackets,
	# with its scope ID (0 for a global address).
	case "$addr" in *:*) fam=ipv6 logged="[$addr]:$port%0" ;; esac
	# A configfs this test mounts is unmounted again (re_nvmet_unexport),
	# so that the module it loaded can be unloaded.
	RE_CFS_MOUNTED=0
	if ! mountpoint -q /sys/kernel/config; then
		check mount -t configfs none /sys/kernel/config
		RE_CFS_MOUNTED=1
	fi
	[ -d "$RE_NVMET" ] || fail "no $RE_NVMET (configfs or nvmet missing)"
	check mkdir "$s"
	echo 1 >"$s/attr_allow_any_host" || fail "attr_allow_any_host"
	check mkdir "$s/namespaces/1"
	echo -n "$bdev" >"$s/namespaces/1/device_path" || fail "device_path"
	echo 1 >"$s/namespaces/1/enable" || fail "namespace enable"
	assert_file "$s/namespaces/1/enable" 1
	# The port's enabling line may be in the log already, from an export
	# earlier in this boot: wait for one more than there is now.
	RE_NVMET_SEEN=$(re_nvmet_enables "$logged")
	check mkdir "$RE_NVMET/ports/1"
	echo rdma >"$RE_NVMET/ports/1/addr_trtype" || fail "addr_trtype"
	echo "$fam" >"$RE_NVMET/ports/1/addr_adrfam" || fail "addr_adrfam"
	echo "$addr" >"$RE_NVMET/ports/1/addr_traddr" || fail "addr_traddr"
	echo "$port" >"$RE_NVMET/ports/1/addr_trsvcid" || fail "addr_trsvcid"
	check ln -s "$s" "$RE_NVMET/ports/1/subsystems/$nqn"
	poll_until 10 "nvmet_rdma enabled port 1 ($logged)" re_nvmet_enabled "$logged"
}

# How often nvmet-rdma reported port 1 listening on ADDR:PORT.  (Only grep
# the kernel log: printing it would flood the serial console.  Not grep -q:
# with pipefail, dmesg killed by SIGPIPE when grep stops early would fail
# the pipeline once the log is long.)
re_nvmet_enables() { dmesg | grep -cF "nvmet_rdma: enabling port 1 ($1)" || true; }
# For poll_until: nvmet-rdma reports the port listening, once more.
re_nvmet_enabled() { [ "$(re_nvmet_enables "$1")" -gt "${RE_NVMET_SEEN:-0}" ]; }

re_nvmet_unexport() {
	local s=$RE_NVMET/subsystems/$1
	check rm "$RE_NVMET/ports/1/subsystems/$1"
	check rmdir "$RE_NVMET/ports/1"
	echo 0 >"$s/namespaces/1/enable" || fail "namespace disable"
	check rmdir "$s/namespaces/1"
	check rmdir "$s"
	[ "${RE_CFS_MOUNTED:-0}" = 0 ] || check umount /sys/kernel/config
}
