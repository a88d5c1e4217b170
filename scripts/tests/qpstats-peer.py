#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One side of stats.sh's (step 5) two connections, A and B, with pyverbs' rdma_cm.

    qpstats-peer.py server ADDR PORT_A PORT_B FIFO
    qpstats-peer.py client ADDR PORT_A PORT_B FIFO SERVER_ADDR

The client retries its connects until the server listens.  Each
connection pre-posts PREPOST receives of SIZE octets before it
connects (iWARP has no receiver-not-ready: a Send must find one), prints
"qpn A|B N" and "ready".  Then it obeys lines written to FIFO:
    send KA KB   post KA Sends on A and KB on B, then reap their KA and KB
                 send completions and the peer's as many receives
                 (the peer is told the same); prints "done KA KB"
    close A      destroys A's QP (and its cm_id); prints "closed A"
    quit         exits
Every completion must be a success of SIZE octets, else it exits non-zero.
"""
import sys
import time

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import CMID, AddrInfo
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPCap, QPInitAttr

SIZE = 1000
PREPOST = 100
CONNECT_TRIES = 600


def qp_init():
    cap = QPCap(max_send_wr=64, max_recv_wr=PREPOST + 8, max_send_sge=1,
                max_recv_sge=1)
    return QPInitAttr(qp_type=e.IBV_QPT_RC, cap=cap, sq_sig_all=1)


class Conn:
    def __init__(self, cid):
        self.cid = cid
        self.rmr = cid.reg_msgs(SIZE)
        self.smr = cid.reg_msgs(SIZE)
        for _ in range(PREPOST):
            cid.post_recv(self.rmr)

    def post(self, k):
        for _ in range(k):
            self.cid.post_send(self.smr)

    def reap(self, k):
        for _ in range(k):
            for wc in (self.cid.get_send_comp(), self.cid.get_recv_comp()):
                if wc is None or wc.status != e.IBV_WC_SUCCESS:
                    sys.exit(f"bad completion {wc}")
            if wc.byte_len != SIZE:
                sys.exit(f"received {wc.byte_len} octets, not {SIZE}")


def server(addr, port):
    ai = AddrInfo(src=addr, src_service=port, port_space=ce.RDMA_PS_TCP,
                  flags=ce.RAI_PASSIVE)
    lid = CMID(creator=ai, qp_init_attr=qp_init())
    lid.listen()
    conn = Conn(lid.get_request())
    conn.cid.accept()
    return lid, conn


def client(addr, port, srv):
    """Connect, retrying while the server is not listening yet."""
    for _ in range(CONNECT_TRIES):
        ai = AddrInfo(src=addr, dst=srv, dst_service=port,
                      port_space=ce.RDMA_PS_TCP)
        conn = Conn(CMID(creator=ai, qp_init_attr=qp_init()))
        try:
            conn.cid.connect()
            return None, conn
        except PyverbsRDMAError:
            conn.cid.close()
            time.sleep(0.1)
    sys.exit(f"no connection to {srv}:{port}")


def main():
    role, addr, port_a, port_b, fifo = sys.argv[1:6]
    conns = {}
    keep = []
    for name, port in (("A", port_a), ("B", port_b)):
        if role == "server":
            lid, conn = server(addr, port)
        else:
            lid, conn = client(addr, port, sys.argv[6])
        keep.append(lid)
        conns[name] = conn
        print("qpn", name, conn.cid.qpn, flush=True)
    print("ready", flush=True)
    while True:
        with open(fifo) as cmds:
            for line in cmds:
                words = line.split()
                if words[0] == "send":
                    ks = {n: k for n, k in zip("AB", map(int, words[1:3]))
                          if k}
                    for name, k in ks.items():
                        conns[name].post(k)
                    for name, k in ks.items():
                        conns[name].reap(k)
                    print("done", *words[1:3], flush=True)
                elif words[0] == "close":
                    conns.pop(words[1]).cid.close()
                    print("closed", words[1], flush=True)
                elif words[0] == "quit":
                    return


if __name__ == "__main__":
    main()
