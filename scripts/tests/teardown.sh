#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under load (issue 10): one event while a load runs over rdmap_sw.
#
#   scripts/build debug && scripts/rdma-core &&
#   scripts/vm --kernel debug --mem 2048 --timeout 900 -- \
#       scripts/tests/teardown.sh --event EVENT --load perftest|fio
#
# A row alone sets everything up, runs its event and tears everything down.
# make check runs its rows in one boot (scripts/tests/group.sh), sharing
# the bystander and the loaded modules, each row a member with its own
# verdict and kmemleak check:
#   teardown.sh --begin                    modules, rsw0, the control rping
#   teardown.sh --shared --event E --load L   one row; leaves those running
#   teardown.sh --end                      the control rping went on all
#                                          along; everything unloads
# (state between members in $RSW_RUN/teardown).  RSW_TEARDOWN_LOAD_S sets
# fio's time limit (600 s), a backstop only: every row ends fio itself (it
# is stopped once it moved data again, or the event ends it), so an event
# that takes long (a link flap on a loaded debug kernel: up to 50 s) cannot
# outlast the load and pass for a clean end.
#
#   perftest:  client  veth0 10.77.0.1 + rswa (init_net) --veth--+
#              server  veth1 10.77.0.2 + rswb, in netns rswtd <---+
#              (ib_send_bw -R -e -n 1000000: it sleeps on completion
#              events instead of polling both vCPUs busy, and runs until
#              the event or the row stops it; the load crosses the veth
#              pair, so veth0's byte counters show it moving)
#   fio:       nvme host and nvmet target both on rswa (veth0), in
#              init_net (nvme-rdma and nvmet-rdma resolve addresses there
#              only); /sys/block/nvmeXn1/stat shows the load moving
#   both:      dummy0 192.0.2.1 + rsw0: the bystander, a verified rping
#
# Events (each while the load moves data):
#   kill-client  kill -9 of the client process (ib_send_bw, fio)
#   kill-server  kill -9 of the server process (perftest only: the NVMe-oF
#                target is the kernel; with fio the row is a counted SKIP)
#   link-flap    veth0 down for 2 s, then up
#   netdev-del   ip link delete veth0 (veth1, rswa and rswb go with it)
#   link-del     rdma link delete rswa
#   rmmod        rmmod rdmap_sw: refused (then everything runs on), or
#                clean (every rsw device goes; the module reloads and a new
#                verified rping works)
#   netns-del    SIGKILL to the processes in rswtd (the server: it pins
#                the namespace), then ip netns delete rswtd (perftest
#                only, like kill-server; with fio a counted SKIP)
# Per row it asserts: the load was running at the event (its QP in RTS on
# rswa, veth0 or the block device moving data in the poll right before,
# every load process alive); the event's effects end within bounds
# (devices, namespace, module gone within GONE_S; a load the event kills
# ends within END_S; a load that may survive it moves data again within
# END_S and is then stopped); errors are clean (a load that fails exits
# non-zero with an error message, not by a signal or the time limit; the
# NVMe host either keeps its live controller or loses it and its block
# device; no kernel bug report); nothing leaks (every surviving rsw
# device's `rdma res` counts return to their value before the load, no
# established TCP connection is left on the load's port; at the end every
# module unloads; the group runner asks kmemleak after each row on the
# debug kernel); the bystander is unaffected (the control rping goes on
# with verified data past the event, except under rmmod, which removes
# its device by design: then it ends cleanly and a new one works).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
EVENT=${RSW_TEARDOWN_EVENT:-}
LOAD=${RSW_TEARDOWN_LOAD:-perftest}
MODE=alone
LOAD_S=${RSW_TEARDOWN_LOAD_S:-600}
usage() {
	echo "usage: $0 [--shared] --event kill-client|kill-server|link-flap|netdev-del|link-del|rmmod|netns-del --load perftest|fio" >&2
	echo "       $0 --begin | --end" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--event) EVENT=$2; shift 2 ;;
	--load) LOAD=$2; shift 2 ;;
	--shared) MODE=shared; shift ;;
	--begin) MODE=begin; shift ;;
	--end) MODE=end; shift ;;
	*) usage ;;
	esac
done
if [ "$MODE" = alone ] || [ "$MODE" = shared ]; then
	case "$EVENT" in
	kill-client|kill-server|link-flap|netdev-del|link-del|rmmod|netns-del) ;;
	*) usage ;;
	esac
	case "$LOAD" in perftest|fio) ;; *) usage ;; esac
fi
case "$LOAD_S" in ''|*[!0-9]*|0) echo "RSW_TEARDOWN_LOAD_S takes a positive number" >&2; exit 2 ;; esac

# Bounds (seconds).  GONE_S: what the event removes is gone.  END_S: a load
# process ends after the event (or after its own end, if it may survive).
GONE_S=30 END_S=30
T_CMD_TIMEOUT=120
NS=
CLI_IP=10.77.0.1 SRV_IP=10.77.0.2 CTL_IP=192.0.2.1
PORT=18600 CTL_PORT=7301
NQN=nqn.2026-11.org.rdmap-sw:teardown
LOGS=$RSW_RUN/teardown
mkdir -p "$LOGS"

rdma_core_use rping

STATE=$LOGS/state
t_banner
note "mode=$MODE event=$EVENT load=$LOAD load_s=$LOAD_S bounds: gone ${GONE_S}s, end ${END_S}s"

# --- background processes ----------------------------------------------------

# bg NAME CMD...: CMD in the background, log in $LOGS/NAME.  A watcher
# subshell records CMD's pid (NAME.pid, for kill -9) and, when it ends, its
# exit status (NAME.rc), so later rows (other processes) can see it too.
# Nothing limits its time: reap does, and fails on a hang.
declare -A PIDS RCS
bg() {
	local name=$1
	shift
	printf '    $ %s &   (log %s)\n' "$*" "$LOGS/$name"
	rm -f "$LOGS/$name.pid" "$LOGS/$name.rc"
	(
		"$@" >"$LOGS/$name" 2>&1 &
		echo $! >"$LOGS/$name.pid"
		rc=0
		wait $! || rc=$?
		echo "$rc" >"$LOGS/$name.rc"
	) </dev/null >/dev/null 2>&1 &	# holds no pipe of the group runner
	wait_for 10 test -s "$LOGS/$name.pid" || fail "$name did not start"
	PIDS[$name]=$(<"$LOGS/$name.pid")
}
pid_of() { [ -n "${PIDS[$1]:-}" ] || PIDS[$1]=$(<"$LOGS/$1.pid"); echo "${PIDS[$1]}"; }
alive() { [ -e "$LOGS/$1.pid" ] && [ ! -e "$LOGS/$1.rc" ]; }
ended() { ! alive "$1"; }

# reap NAME LIMIT: NAME ends within LIMIT s (else: a hang, the row fails);
# its exit status goes to RCS[NAME].
reap() {
	poll_until "$2" "$1 ends" ended "$1"
	RCS[$1]=$(<"$LOGS/$1.rc")
	note "$1 exited ${RCS[$1]}; its log ends:"
	{ tail -n 6 "$LOGS/$1"; echo; } | sed '/^$/d' | indent
}

# stop NAME: end a process the test no longer needs (SIGTERM, then reap).
stop() {
	kill "$(pid_of "$1")" 2>/dev/null || true
	reap "$1" 10
}

# own_error RC: an error status of the program's own: not 0, not a time
# limit (124), not a signal (128 + N; rping's exit(-1) is 255).
own_error() { [ "$1" -ne 0 ] && [ "$1" -ne 124 ] && { [ "$1" -lt 128 ] || [ "$1" -gt 159 ]; }; }

# failed_cleanly NAME: NAME exited with an error status of its own.
failed_cleanly() {
	local rc=${RCS[$1]}
	[ "$rc" -ne 0 ] || fail "$1 exited 0 although its connection was torn down"
	own_error "$rc" || fail "$1 ended by a signal or a time limit (exit $rc), not by an error"
	ok "$1 failed with its own error (exit $rc)"
}

# --- what the rows observe ---------------------------------------------------

pings() { grep -c 'ping data' "$LOGS/$1" 2>/dev/null || true; }
pinging() { [ "$(pings "$1")" -ge "$2" ]; }
# The control rping goes on: alive and past CTL_SEEN verified pings.
CTL_SEEN=0
ctl_more() { alive ctl.cli && [ "$(pings ctl.cli)" -gt "$CTL_SEEN" ]; }
ctl_goes_on() {
	poll_until 60 "the control rping goes on (past $CTL_SEEN verified pings)" ctl_more
	CTL_SEEN=$(pings ctl.cli)
}

veth_bytes() {
	local d=/sys/class/net/veth0/statistics
	echo $(($(<"$d/tx_bytes") + $(<"$d/rx_bytes")))
}
# moved MARK: veth0 carried at least 1 MiB since MARK.
moved() { [ "$(veth_bytes)" -ge $(($1 + 1048576)) ]; }
ns_listening() { ip netns exec "$NS" ss -Hltn "sport = :$1" | grep -q .; }
listening() { ss -Hltn "sport = :$1" | grep -q .; }
ib_gone() { [ ! -e "/sys/class/infiniband/$1" ]; }
ns_gone() { [ -z "$NS" ] || ! ip netns list | grep -qw "$NS"; }
# load_rts COMM: a QP of COMM in RTS on rswa.  A kernel ULP's QPs show
# as rdma_cm's, so for one its connected cm_id names the QP.
load_rts() {
	local n
	if [ "$1" = nvme_rdma ]; then
		n=$(rdma res show cm_id link rswa/1 |
			sed -nE 's/.* lqpn ([0-9]+) .*state CONNECT .*comm \[nvme_rdma\].*/\1/p' | head -n1)
		[ -n "$n" ] && rdma res show qp link rswa/1 lqpn "$n" | grep -q 'state RTS '
		return
	fi
	rdma res show qp link rswa/1 | grep -Eq "state RTS .*comm $1( |$)"
}
# No established TCP connection left on the load's port (init_net).
port_quiet() {
	[ -z "$(ss -Htn state established "( sport = :$1 or dport = :$1 )")" ]
}

# res_line DEV: DEV's object counts (`rdma res show`), without the index,
# CQs of ib_core's shared pool left out: nvmet-rdma and nvme-rdma take
# theirs from it, and ib_core keeps them until the device goes.
res_line() {
	local line pooled
	line=$(rdma res show | sed -n "s/^[0-9]*: $1: //p")
	pooled=$(rdma res show cq dev "$1" | grep -c 'comm \[ib_core\]')
	awk -v p="$pooled" '{ for (i = 1; i < NF; i += 2) if ($i == "cq") $(i + 1) -= p; print }' <<<"$line"
}
declare -A RES_BASE
res_baseline() {
	local d
	for d in "$@"; do
		RES_BASE[$d]=$(res_line "$d")
		note "$d before the load: ${RES_BASE[$d]}"
	done
}
# res_back DEV: DEV's counts are the baseline again (else what is left).
res_back() {
	local now
	now=$(res_line "$1")
	[ "$now" != "${RES_BASE[$1]}" ] || return 0
	echo "$1 now: $now"
	rdma res show qp link "$1/1"
	rdma res show cm_id link "$1/1"
	rdma res show cq dev "$1"
	return 1
}

# --- set-up ------------------------------------------------------------------

# row_devices: veth0 + rswa here, veth1 + rswb in $NS (perftest) or here
# too (fio: the NVMe-oF ULPs resolve addresses in init_net only).
row_devices() {
	local in=()
	step "veth0 $CLI_IP + rswa here, veth1 $SRV_IP + rswb ${NS:-here too}"
	check modprobe veth
	if [ -n "$NS" ]; then
		check ip netns add "$NS"
		in=(ip netns exec "$NS")
		check ip link add veth0 type veth peer name veth1 netns "$NS"
		check "${in[@]}" ip link set lo up
	else
		check ip link add veth0 type veth peer name veth1
	fi
	check ip addr add "$CLI_IP/24" dev veth0
	check ip link set veth0 up
	check "${in[@]}" ip addr add "$SRV_IP/24" dev veth1
	check "${in[@]}" ip link set veth1 up
	rdma_attach rswa rdmap_sw veth0
	check "${in[@]}" rdma link add rswb type rdmap_sw netdev veth1
	poll_until 10 "rswb port ACTIVE" port_active rswb
	res_baseline rsw0 rswa rswb
}

# control_start: the bystander, a verified rping over rsw0 that runs
# across every row.
control_start() {
	step "control connection: verified rping over rsw0, across the events"
	bg ctl.srv "$B/rping" -s -a "$CTL_IP" -p "$CTL_PORT" -V -C 1000000
	poll_until 20 "control server listening" listening "$CTL_PORT"
	bg ctl.cli "$B/rping" -c -a "$CTL_IP" -p "$CTL_PORT" -v -V -C 1000000
	poll_until 60 "control pings flowing" pinging ctl.cli 3
	CTL_SEEN=$(pings ctl.cli)
}

# What the rows of one boot share ($STATE): the modules loaded before the
# first, the control rping's progress, rsw0's counts without it.
save_state() {
	# -g: load_state sources this inside a function.
	declare -p RE_MODS_BEFORE CTL_SEEN RSW0_IDLE | sed 's/^declare /declare -g /' >"$STATE"
}
load_state() {
	[ -r "$STATE" ] || fail "no $STATE: run teardown.sh --begin first"
	# shellcheck disable=SC1090 # written by save_state
	. "$STATE"
}

# begin: the RDMA core, rdmap_sw, rsw0 on dummy0 and the control rping.
begin() {
	re_begin
	rsw_dummy_up rsw0 dummy0 "$CTL_IP/24"
	RSW0_IDLE=$(res_line rsw0)
	control_start
	save_state
}

# nvme_setup: nvmet exports a null_blk on rswa ($CLI_IP:$PORT) and the
# host connects to it there (one device serves both ends, as in
# nvmeof-unplug.sh: a host on rswa reaching a target on rswb in the same
# namespace was reset, -104).  Sets BDEV.
nvme_setup() {
	step "NVMe-oF: target and host on rswa $CLI_IP:$PORT"
	check modprobe null_blk nr_devices=1 memory_backed=1 gb=1
	check modprobe -a nvmet-rdma nvme-rdma
	# When the netdev goes, the target cannot answer what is in flight:
	# the host's commands end at nvme's I/O timeout (30 s by default),
	# and ib_core's unregistration, holding the netdev, waits for them
	# ("unregister_netdevice: waiting", a bug report after 10 s); the
	# host's shutdown then waits out a keep-alive and a Property Set on
	# the admin queue too.  2 s each (I/O here takes at most ~0.2 s
	# under TCG) keeps the event bounded and that message away.
	echo 2 >/sys/module/nvme_core/parameters/io_timeout || fail "nvme_core io_timeout"
	echo 2 >/sys/module/nvme_core/parameters/admin_timeout || fail "nvme_core admin_timeout"
	re_nvmet_export "$NQN" "$CLI_IP" "$PORT" /dev/nullb0
	check nvme connect -t rdma -a "$CLI_IP" -s "$PORT" -n "$NQN" \
		--ctrl-loss-tmo=5 --reconnect-delay=1
	poll_until 30 "namespace block device" nvme_bdev
	BDEV=$(nvme_bdev)
	note "block device $BDEV"
}

# The connected namespace's block device.
nvme_bdev() {
	local d
	for d in /sys/block/nvme*n*; do
		[ -e "$d/device/subsysnqn" ] && [ "$(<"$d/device/subsysnqn")" = "$NQN" ] &&
			[ -b "/dev/${d##*/}" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
ctrl_state() { cat /sys/class/nvme/nvme*/state 2>/dev/null | tr '\n' ' '; }
ctrl_live() { [ "$(ctrl_state)" = "live " ]; }
no_ctrl() { [ -z "$(ctrl_state)" ]; }

# --- loads -------------------------------------------------------------------

# perftest_start: ib_send_bw -R -e until stopped, its server on rswb in $NS
# (a wildcard listener in init_net cannot take it: rdma_cm resolves the
# request's local address in the listener's namespace), its client on
# rswa.  perftest -R connects twice and a client quicker than the server's
# second listen is refused (uverbs.sh, "relisten"): that is retried,
# before any event.
perftest_start() {
	local try pt=(ib_send_bw -R -F -e -n 1000000 -s 65536 -p "$PORT")
	for try in 1 2 3; do
		step "load: ${pt[*]}, server on rswb in $NS, client on rswa (try $try)"
		bg srv ip netns exec "$NS" "${pt[@]}" -d rswb
		poll_until 20 "perftest server listening on rswb" ns_listening "$PORT"
		bg cli "${pt[@]}" -d rswa "$SRV_IP"
		wait_for 60 cli_settled
		load_rts ib_send_bw && return 0
		note "no ib_send_bw QP in RTS on rswa; client log:"
		tail -n 5 "$LOGS/cli" | indent
		kill -9 "${PIDS[cli]}" "${PIDS[srv]}" 2>/dev/null || true
		reap cli 10
		reap srv 10
	done
	fail "perftest did not connect in 3 tries"
}

fio_start() {
	step "load: fio randrw 64k, iodepth 8, direct, until stopped (limit ${LOAD_S}s) on $BDEV"
	[ -d /proc/sysvipc ] || { skip "fio needs SysV IPC, which this kernel lacks"; exit 0; }
	bg fio fio --name=teardown --filename="$BDEV" --thread --ioengine=libaio \
		--direct=1 --rw=randrw --bs=64k --iodepth=8 --size=128M \
		--time_based --runtime="$LOAD_S"
}

cli_settled() { load_rts ib_send_bw || ended cli; }

bdev_sectors() { awk '{ print $3 + $7 }' "/sys/block/${BDEV#/dev/}/stat"; }
sectors_past() { [ "$(bdev_sectors)" -gt "$1" ]; }

# load_running: right before the event, the load's QP is in RTS on rswa,
# veth0 carries at least 1 MiB more (and fio's block device moves), and
# every load process is alive.
load_running() {
	local mark name comm=ib_send_bw
	step "the load is running at the moment of the event"
	[ "$LOAD" = perftest ] || comm=nvme_rdma
	poll_until 30 "a $comm QP in RTS on rswa" load_rts "$comm"
	if [ "$LOAD" = perftest ]; then
		mark=$(veth_bytes)
		poll_until 30 "veth0 carries the load (1 MiB more)" moved "$mark"
		note "$((($(veth_bytes) - mark) / 1024)) KiB over veth0 in the last poll"
	else
		mark=$(bdev_sectors)
		poll_until 30 "$BDEV moves sectors" sectors_past "$mark"
		note "$((($(bdev_sectors) - mark) / 2)) KiB through $BDEV in the last poll"
	fi
	for name in $LOAD_PROCS; do
		alive "$name" || fail "$name ended before the event"
	done
	ok "load processes alive: $LOAD_PROCS"
	CTL_SEEN=$(pings ctl.cli)
}

# --- events ------------------------------------------------------------------

ev_kill-client() { check kill -9 "${PIDS[${LOAD_PROCS%% *}]}"; }
ev_kill-server() { check kill -9 "${PIDS[srv]}"; }
ev_link-flap() {
	check ip link set veth0 down
	sleep 2 # the event: two seconds without a link
	check ip link set veth0 up
	poll_until 10 "rswa port ACTIVE again" port_active rswa
}
ev_netdev-del() {
	check ip link delete veth0
	poll_until "$GONE_S" "rswa and rswb gone with the veth pair" \
		eval 'ib_gone rswa && ib_gone rswb'
}
ev_link-del() {
	check rdma link delete rswa
	poll_until "$GONE_S" "rswa gone" ib_gone rswa
}
# The server process pins $NS: it is killed first (a container dying).
ev_netns-del() {
	local pids
	pids=$(ip netns pids "$NS" | tr '\n' ' ')
	note "SIGKILL to the processes in $NS: ${pids:-none}"
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$pids" ] || check kill -9 $pids
	check ip netns delete "$NS"
	poll_until "$GONE_S" "rswb and rswa gone with $NS (and its veth pair)" \
		eval 'ib_gone rswb && ib_gone rswa'
}

# rmmod: refused (in use) or clean; RMMOD says which.
RMMOD=
ev_rmmod() {
	local rc=0 out
	printf '    $ rmmod rdmap_sw\n'
	out=$(timeout -k 5 "$GONE_S" rmmod rdmap_sw 2>&1) || rc=$?
	[ -z "$out" ] || printf '%s\n' "$out" | indent
	case "$rc" in 124|137) fail "rmmod hung (over ${GONE_S}s)" ;; esac
	if [ "$rc" -eq 0 ]; then
		RMMOD=clean
		poll_until "$GONE_S" "rdmap_sw unloaded, every rsw device gone" \
			eval 'gone /sys/module/rdmap_sw && ib_gone rsw0 && ib_gone rswa && ib_gone rswb'
	else
		RMMOD=refused
		[ -e /sys/module/rdmap_sw ] || fail "rmmod failed ($rc) but the module is gone"
		ok "rmmod refused (exit $rc), rdmap_sw still loaded"
	fi
}

# --- outcomes ----------------------------------------------------------------

# may_survive: the event leaves the load's connection a way to go on.
may_survive() {
	case "$EVENT" in
	link-flap) return 0 ;;
	rmmod) [ "$RMMOD" = refused ] ;;
	*) return 1 ;;
	esac
}

# end_limit: how long a load process may take to end after the event.
end_limit() { echo "$END_S"; }

# moves_again: the load moved data after the event (1 MiB over veth0, or
# sectors on the block device), while every load process lives.
moves_again() {
	local name
	for name in $LOAD_PROCS; do
		alive "$name" || return 1
	done
	if [ "$LOAD" = perftest ]; then moved "$MARK"; else sectors_past "$MARK"; fi
}

# survived: a load that may survive the event either moves data again
# within END_S, and is then stopped (its verdict is the data it moved), or
# every process of it ends within END_S with an error of its own.
survived() {
	local name
	step "$LOAD after $EVENT: moves data again within ${END_S}s, or fails cleanly"
	if wait_for "$END_S" moves_again; then
		ok "$LOAD moved data after the event; stopping it"
		for name in $LOAD_PROCS; do
			stop "$name"
		done
		return 0
	fi
	for name in $LOAD_PROCS; do
		reap "$name" "$END_S"
		failed_cleanly "$name"
	done
}

perftest_outcome() {
	local name killed=
	if may_survive; then
		survived
		return
	fi
	case "$EVENT" in kill-client) killed=cli ;; kill-server|netns-del) killed=srv ;; esac
	step "perftest after $EVENT: every side ends within $(end_limit)s, cleanly"
	for name in cli srv; do
		if [ "$name" = "$killed" ]; then
			reap "$name" 10
			assert_eq "${RCS[$name]}" 137 "$name exit status (SIGKILL)"
			continue
		fi
		if ! wait_for "$(end_limit)" ended "$name"; then
			orphaned "$name"
			continue
		fi
		reap "$name" 1
		failed_cleanly "$name"
	done
}

# orphaned NAME: a perftest side outlived the bound.  Accepted only when
# its device is gone and it is running in user space, not blocked in the
# kernel: perftest watches no async event (uverbs sends it
# IBV_EVENT_DEVICE_FATAL) and polls for ever a completion queue that can no
# longer fill.  It must then die on SIGKILL within 10 s (releasing its
# uverbs file is the kernel's part).  Counted on a "KNOWN:" line.
orphaned() {
	local name=$1 dev=rswa pid st wchan
	pid=$(pid_of "$name")
	[ "$name" = cli ] || dev=rswb
	ib_gone "$dev" || fail "$name hangs although its device $dev is still there"
	if ! st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) ||
		! wchan=$(cat "/proc/$pid/wchan" 2>/dev/null); then
		# It ended just now, its post failing on the dead device.
		reap "$name" 5
		failed_cleanly "$name"
		return
	fi
	note "$name (pid $pid) still runs $(end_limit) s after the event: state $st, wchan ${wchan:-0}"
	[ ! -r "/proc/$pid/stack" ] || indent <"/proc/$pid/stack"
	[ "$st" = R ] || fail "$name is blocked in the kernel (state $st, wchan $wchan)"
	echo "KNOWN: $name spins in user space after $dev went away (perftest ignores IBV_EVENT_DEVICE_FATAL)"
	kill -9 "$pid"
	reap "$name" 10
	assert_eq "${RCS[$name]}" 137 "$name exit status (SIGKILL)"
}

# nvme_after: the host either kept a live controller (a new read works)
# or lost it and its block device, within END_S.
nvme_after() {
	poll_until "$END_S" "the NVMe controller is live or gone (state: $(ctrl_state))" \
		eval 'ctrl_live || no_ctrl'
	if ctrl_live; then
		check dd if="$BDEV" of=/dev/null bs=64k count=16 iflag=direct status=none
		ok "controller live, a new 1 MiB read works"
	else
		poll_until "$END_S" "$BDEV gone" gone "$BDEV"
		ok "controller and block device gone"
	fi
}

fio_outcome() {
	if may_survive; then
		survived
		nvme_after
		return
	fi
	step "fio after $EVENT: ends within $(end_limit)s, cleanly"
	reap fio "$(end_limit)"
	if [ "$EVENT" = kill-client ]; then
		assert_eq "${RCS[fio]}" 137 "fio exit status (SIGKILL)"
		poll_until "$END_S" "the NVMe controller stays live" ctrl_live
	else
		failed_cleanly fio
		# EIO, ENODEV, or (the block layer's word for a controller
		# removed under a write) ENOSPC: an I/O error of fio's own.
		grep -Eq '^fio: io_u error on file|Input/output error|No such device' "$LOGS/fio" ||
			fail "fio failed without an I/O error"
		ok "fio reports the I/O error"
		poll_until "$END_S" "the NVMe controller is gone" no_ctrl
	fi
	nvme_after
}

# control_after: the bystander goes on, unless rmmod took its device: then
# both rpings end by themselves and, with the module reloaded, a new
# verified control rping works (and serves the rows that follow).
control_after() {
	local name
	if [ "$RMMOD" != clean ]; then
		step "the control rping over rsw0 is unaffected"
		ctl_goes_on
		return
	fi
	step "rmmod took rsw0 too: the control rpings end, a new one works"
	for name in ctl.cli ctl.srv; do
		reap "$name" "$END_S"
		[ "${RCS[$name]}" -eq 0 ] || own_error "${RCS[$name]}" ||
			fail "$name ended by a signal or time limit (exit ${RCS[$name]})"
	done
	insmod_deps "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"
	rdma_attach rsw0 rdmap_sw dummy0
	RSW0_IDLE=$(res_line rsw0)
	control_start
	RES_BASE[rsw0]=$(res_line rsw0)
}

# --- the end of a row, and of the boot ---------------------------------------

# quiet_everywhere: no established TCP connection on the load's port, here
# and (while it lives) in $NS.
quiet_everywhere() {
	port_quiet "$PORT" || return 1
	ns_gone || [ -z "$(ip netns exec "$NS" ss -Htn state established "( sport = :$PORT or dport = :$PORT )")" ]
}

# row_finish: the NVMe-oF target goes; then everything the event left
# must be back to where it was before the load (each remaining rsw
# device's `rdma res` counts, no established TCP connection on the load's
# port) and the row's devices and namespace are deleted.
row_finish() {
	local d
	if [ "$LOAD" = fio ]; then
		step "stop the NVMe-oF host and target"
		no_ctrl || check nvme disconnect -n "$NQN"
		poll_until "$END_S" "no NVMe controller left" no_ctrl
		re_nvmet_unexport "$NQN"
	fi
	step "nothing left behind"
	for d in rsw0 rswa rswb; do
		ib_gone "$d" ||
			poll_until 20 "$d's rdma res counts back to before the load (${RES_BASE[$d]})" res_back "$d"
	done
	poll_until "$END_S" "no established TCP connection on port $PORT" quiet_everywhere
	step "delete the row's devices"
	for d in rswa rswb; do
		ib_gone "$d" || { check rdma link delete "$d"; poll_until 10 "$d gone" ib_gone "$d"; }
	done
	ns_gone || check ip netns delete "$NS"
	! ip link show veth0 >/dev/null 2>&1 || check ip link delete veth0
	dmesg_clean
}

rsw0_idle() { [ "$(res_line rsw0)" = "$RSW0_IDLE" ]; }

# end: the control rping went on through every row; stop it, rsw0 back to
# its counts without it, delete everything, every module unloads.
end() {
	local d
	step "the control rping went on through every row; stop it"
	ctl_goes_on
	for d in ctl.cli ctl.srv; do
		stop "$d"
	done
	poll_until 20 "rsw0's rdma res counts back to before the control ($RSW0_IDLE)" \
		rsw0_idle
	step "delete rsw0, unload every module"
	check rdma link delete rsw0
	poll_until 10 "rsw0 gone" ib_gone rsw0
	check ip link delete dummy0
	re_unload_all
	dmesg_clean
}

# --- a row ---------------------------------------------------------------------

row() {
	local t0
	t0=$(now_ms)
	if [ "$LOAD" = fio ]; then PORT=4420 LOAD_PROCS=fio; else LOAD_PROCS="cli srv" NS=rswtd; fi
	row_devices
	[ "$LOAD" = perftest ] || nvme_setup
	"${LOAD}_start"
	load_running
	step "event: $EVENT under $LOAD"
	T_EV=$(now_ms)
	"ev_$EVENT"
	note "the event took $(($(now_ms) - T_EV)) ms"
	if may_survive; then
		if [ "$LOAD" = perftest ]; then MARK=$(veth_bytes); else MARK=$(bdev_sectors); fi
	fi
	"${LOAD}_outcome"
	T_END=$(($(now_ms) - T_EV))
	control_after
	row_finish
	echo "teardown event=$EVENT load=$LOAD: load ended ${T_END} ms after the event, row $((($(now_ms) - t0) / 1000)) s"
}

case "$MODE" in
begin)
	begin
	echo "PASS: $T_NAME --begin on $RSW_KERNEL ($(uname -r))"
	exit 0 ;;
end)
	load_state
	end
	rm -f "$STATE"
	echo "PASS: $T_NAME --end on $RSW_KERNEL ($(uname -r))"
	exit 0 ;;
esac

if [ "$LOAD" = fio ] && [ "$EVENT" = kill-server ]; then
	skip "kill-server under fio: the NVMe-oF target is the kernel (nvmet), no process to kill"
	exit 0
fi
if [ "$LOAD" = fio ] && [ "$EVENT" = netns-del ]; then
	skip "netns-del under fio: nvme-rdma and nvmet-rdma resolve addresses in init_net only, no NVMe-oF connection lives in another namespace"
	exit 0
fi
if [ "$MODE" = shared ]; then
	load_state
	row
	save_state
else
	begin
	row
	end
	rm -f "$STATE"
fi
echo "PASS: $T_NAME $MODE --event $EVENT --load $LOAD on $RSW_KERNEL ($(uname -r))"
