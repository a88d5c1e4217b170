#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""RFC 7306 on the wire: capture iWARP connections and check every header
field of Atomic Request/Response and Immediate Data against the draft
(draft-ietf-storm-rdmap-ext-04: Figs. 1, 2, 4, 5, 6, 7, section 6.3 and
Appendix A), with RFC 5044 (MPA), RFC 5041 (DDP) and RFC 5040 (RDMAP)
framing.  Written from the documents, sharing nothing with the driver.

  rfc7306-wire.py capture --port P --out FILE.pcap [--iface lo]
      AF_PACKET capture of TCP segments to or from port P until SIGTERM or
      SIGINT; writes a classic pcap (Ethernet link type, as lo has) and
      prints the kernel's packet and drop counts.  Outgoing copies on lo
      are skipped (each segment is seen again as incoming).
  rfc7306-wire.py decode --port P --pcap FILE --crc on|off --log WIRELOG
      Reassemble each TCP connection to port P, parse the MPA Request and
      Reply frames (rev 2, no markers), then the FPDUs of both directions,
      and check them.  WIRELOG is ext-verbs' record of what it posted
      (RSW_EXT_WIRE_LOG): each Atomic Request must carry the STag, TO and
      operands posted, in order; each Atomic Response the original value
      the requester got back; each Write with Immediate must be a Write of
      the posted STag, TO and length followed by an Immediate Data message
      carrying the posted 4 octets.  Exit status 0 only if every check
      passed.
  rfc7306-wire.py selftest
      The CRC32c against RFC 3720's test vectors; the decoder against a
      hand-made FPDU stream, and that it catches corrupted fields.
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time

# CRC32c and the pcap reader: pcaplib.py, beside this script (no
# __pycache__ written into the checkout).
sys.dont_write_bytecode = True
from pcaplib import crc_octets, read_pcap  # noqa: E402


# -------------------------------------------------------------- capture
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6


def tcp_of_frame(frame):
    """(src, sport, dst, dport, seq, flags, payload) of an Ethernet/IPv4/TCP
    frame, else None."""
    if len(frame) < 14 + 20 or frame[12:14] != b'\x08\x00':
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    if ip[0] >> 4 != 4 or ip[9] != 6 or len(ip) < ihl + 20:
        return None
    total = struct.unpack('>H', ip[2:4])[0]
    ip = ip[:total] if total else ip
    tcp = ip[ihl:]
    sport, dport, seq = struct.unpack('>HHI', tcp[:8])
    doff = (tcp[12] >> 4) * 4
    flags = tcp[13]
    return (socket.inet_ntoa(ip[12:16]), sport, socket.inet_ntoa(ip[16:20]),
            dport, seq, flags, bytes(tcp[doff:]))


def capture(args):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.bind((args.iface, 0))
    s.settimeout(0.2)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    out = open(args.out, 'wb')
    out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    out.flush()
    if args.ready:
        open(args.ready, 'w').write('ready\n')
    kept = 0
    while True:
        try:
            frame, addr = s.recvfrom(262144)
        except socket.timeout:
            if stop:
                break
            continue
        except InterruptedError:
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        t = tcp_of_frame(frame)
        if not t or args.port not in (t[1], t[3]):
            continue
        now = time.time()
        out.write(struct.pack('<IIII', int(now), int(now % 1 * 1e6),
                              len(frame), len(frame)))
        out.write(frame)
        kept += 1
        if stop:
            # Drain what is queued, then stop at the next timeout.
            continue
    out.close()
    st = s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
    packets, drops = struct.unpack('II', st)
    print('capture: %d TCP segments of port %d kept; kernel: %d packets '
          'since the last read, %d dropped' % (kept, args.port, packets,
                                               drops))
    return 1 if drops else 0


# ----------------------------------------------------------- reassembly
class Flow:
    def __init__(self, key, t):
        self.key = key
        self.first = t
        self.isn = None
        self.segs = {}

    def add(self, seq, flags, payload):
        if flags & 0x02:           # SYN
            self.isn = seq
            return
        if payload:
            self.segs.setdefault(seq, payload)

    def stream(self):
        """The byte stream and a list of holes (offset, length)."""
        if self.isn is None:
            return b'', [('no SYN captured', 0)]
        pos = (self.isn + 1) & 0xFFFFFFFF
        out = bytearray()
        holes = []
        pending = {((s - pos) & 0xFFFFFFFF): p for s, p in self.segs.items()}
        done = 0
        for off in sorted(pending):
            p = pending[off]
            if off > done:
                holes.append((done, off - done))
                break
            if off + len(p) > done:
                out += p[done - off:]
                done = off + len(p)
        return bytes(out), holes


def flows_of(pcap, port):
    flows = {}
    for t, frame, _ in read_pcap(pcap):
        tcp = tcp_of_frame(frame)
        if not tcp:
            continue
        src, sport, dst, dport, seq, flags, payload = tcp
        if port not in (sport, dport):
            continue
        key = (src, sport, dst, dport)
        f = flows.get(key)
        if not f:
            f = flows[key] = Flow(key, t)
        f.add(seq, flags, payload)
    # Connections: (initiator->responder flow, the reverse), by start time.
    conns = []
    for key, f in flows.items():
        if key[3] == port:
            rev = flows.get((key[2], key[3], key[0], key[1]))
            conns.append((f, rev))
    conns.sort(key=lambda c: c[0].first)
    return conns


# ------------------------------------------------------------- checking
class Checks:
    """Counts each named check; keeps the first few failures of each."""

    def __init__(self):
        self.n = {}
        self.bad = {}
        self.examples = []

    def __call__(self, ok, name, detail=''):
        self.n[name] = self.n.get(name, 0) + 1
        if not ok:
            self.bad[name] = self.bad.get(name, 0) + 1
            if len(self.examples) < 40:
                self.examples.append('%s: %s' % (name, detail))
        return ok

    def failed(self):
        return sum(self.bad.values())

    def total(self):
        return sum(self.n.values())


MPA_REQ = b'MPA ID Req Frame'
MPA_REP = b'MPA ID Rep Frame'
OP_NAMES = {0: 'RDMA Write', 1: 'RDMA Read Request', 2: 'RDMA Read Response',
            3: 'Send', 4: 'Send with Invalidate', 5: 'Send with SE',
            6: 'Send with SE and Invalidate', 7: 'Terminate',
            8: 'Immediate Data', 9: 'Immediate Data with SE',
            0xA: 'Atomic Request', 0xB: 'Atomic Response'}
# RFC 5040 / RFC 7306 Fig. 2: tagged flag and queue number of each opcode.
TAGGED = {0: True, 2: True}
QUEUE = {1: 1, 3: 0, 4: 0, 5: 0, 6: 0, 7: 2, 8: 0, 9: 0, 0xA: 1, 0xB: 3}
ALL_ONES = 0xFFFFFFFFFFFFFFFF


def mpa_frame(data, key, ck, who):
    """Parse an MPA Request/Reply at the start of @data: (flags, rev, pd,
    length) or None."""
    if len(data) < 20 or data[:16] != key:
        ck(False, '%s: MPA %s frame' % (who, key[7:10].decode()),
           'stream starts %r' % data[:20])
        return None
    flags, rev, pdlen = data[16], data[17], struct.unpack('>H', data[18:20])[0]
    return flags, rev, data[20:20 + pdlen], 20 + pdlen


def fpdus(data, crc_on, ck, who):
    """Split a stream (after the MPA frame) into ULPDUs, checking the MPA
    framing: length, PAD to 4 octets, CRC.  Yields the ULPDUs."""
    off = 0
    while off < len(data):
        if off + 2 > len(data):
            ck(False, 'MPA framing', '%s: %d stray octets at the end' %
               (who, len(data) - off))
            return
        ulen = struct.unpack('>H', data[off:off + 2])[0]
        pad = (4 - (2 + ulen) % 4) % 4
        end = off + 2 + ulen + pad + 4
        if end > len(data):
            ck(False, 'MPA framing', '%s: FPDU of ULPDU_Length %d at %d runs '
               'past the end of the capture (%d octets)' %
               (who, ulen, off, len(data)))
            return
        body = data[off:off + 2 + ulen + pad]
        crc = data[off + 2 + ulen + pad:end]
        ck(body[2 + ulen:] == b'\0' * pad, 'MPA PAD octets zero',
           '%s at %d: %r' % (who, off, body[2 + ulen:]))
        if crc_on:
            ck(crc == crc_octets(body), 'MPA CRC32c correct',
               '%s at %d: %s, computed %s' % (who, off, crc.hex(),
                                               crc_octets(body).hex()))
        else:
            ck(crc == b'\0' * 4, 'MPA CRC field zero (CRC off)',
               '%s at %d: %s' % (who, off, crc.hex()))
        yield body[2:2 + ulen]
        off = end


class Direction:
    """DDP/RDMAP state of one direction of one connection."""

    def __init__(self, name):
        self.name = name
        self.msn = {0: 1, 1: 1, 2: 1, 3: 1}
        self.in_msg = {}           # QN -> MSN of a message not yet Last
        self.tagged_msg = None     # [stag, first TO, length] of a Write
        self.last_write = None     # the last complete Write message
        self.prev_op = None        # opcode of the last complete message
        self.messages = []         # (opcode, fields) of complete messages
        self.counts = {}


def parse_ddp(u, d, ck):
    """Check the DDP/RDMAP headers common to every message; return
    (opcode, last, header fields, rest) or None."""
    who = d.name
    if len(u) < 2:
        ck(False, 'DDP header present', '%s: ULPDU of %d octets' %
           (who, len(u)))
        return None
    ddp, rdmap = u[0], u[1]
    t, l = ddp >> 7, (ddp >> 6) & 1
    resv, dv = (ddp >> 2) & 0xF, ddp & 3
    rv, rsv, op = rdmap >> 6, (rdmap >> 4) & 3, rdmap & 0xF
    ck(dv == 1, 'DDP DV = 1', '%s: DV %d' % (who, dv))
    ck(resv == 0, 'DDP reserved bits zero', '%s: %x' % (who, resv))
    ck(rv == 1, 'RDMAP RV = 1', '%s: RV %d' % (who, rv))
    ck(rsv == 0, 'RDMAP reserved bits zero', '%s: %x' % (who, rsv))
    name = OP_NAMES.get(op)
    if not ck(name is not None, 'RDMAP opcode defined', '%s: %d' % (who, op)):
        return None
    d.counts[name] = d.counts.get(name, 0) + 1
    ck(t == (1 if TAGGED.get(op) else 0), '%s: T flag' % name,
       '%s: T=%d' % (who, t))
    if t:
        if not ck(len(u) >= 14, '%s: tagged header' % name, who):
            return None
        stag, to = struct.unpack('>IQ', u[2:14])
        return op, l, {'stag': stag, 'to': to}, u[14:]
    if not ck(len(u) >= 18, '%s: untagged header' % name, who):
        return None
    inv, qn, msn, mo = struct.unpack('>IIII', u[2:18])
    if op not in (4, 6):
        ck(inv == 0, '%s: Invalidate STag / Reserved zero' % name,
           '%s: 0x%x' % (who, inv))
    ck(qn == QUEUE.get(op), '%s: QN %d' % (name, QUEUE.get(op)),
       '%s: QN %d' % (who, qn))
    # MSN: per queue, 1 for the first message, +1 per message; every
    # segment of a message carries its MSN.
    if qn in d.msn:
        if qn in d.in_msg:
            ck(msn == d.in_msg[qn], 'MSN sequence per queue',
               '%s: %s segment MSN %d within message %d' %
               (who, name, msn, d.in_msg[qn]))
        else:
            ck(msn == d.msn[qn], 'MSN sequence per queue',
               '%s: %s MSN %d on QN %d, want %d' % (who, name, msn, qn,
                                                    d.msn[qn]))
            d.in_msg[qn] = msn
            d.msn[qn] = msn + 1
        if l:
            del d.in_msg[qn]
    return op, l, {'qn': qn, 'msn': msn, 'mo': mo}, u[18:]


def decode_conn(idx, fwd, rev, crc_on, ck, log):
    """Check one connection; returns the per-direction Direction objects."""
    a, holes_a = fwd.stream()
    b, holes_b = rev.stream() if rev else (b'', [('no reverse flow', 0)])
    ck(not holes_a and not holes_b, 'TCP streams captured without holes',
       'connection %d: %r %r' % (idx, holes_a[:2], holes_b[:2]))
    req = mpa_frame(a, MPA_REQ, ck, 'conn %d initiator' % idx)
    rep = mpa_frame(b, MPA_REP, ck, 'conn %d responder' % idx)
    if not req or not rep:
        return None
    crc_used = bool((req[0] | rep[0]) & 0x40)
    ck(not (req[0] & 0x80) and not (rep[0] & 0x80), 'MPA M (markers) = 0',
       'flags %02x %02x' % (req[0], rep[0]))
    ck(not (rep[0] & 0x20), 'MPA R (reject) = 0 in the Reply',
       'flags %02x' % rep[0])
    ck(req[1] == 2 and rep[1] == 2, 'MPA revision 2',
       'rev %d/%d' % (req[1], rep[1]))
    ck(crc_used == crc_on, 'MPA C flags: CRC %s' % ('on' if crc_on else 'off'),
       'flags %02x %02x' % (req[0], rep[0]))
    if len(req[2]) >= 4 and len(rep[2]) >= 4:
        ird_i, ord_i = struct.unpack('>HH', req[2][:4])
        ird_r, ord_r = struct.unpack('>HH', rep[2][:4])
        log('  conn %d: MPA rev %d, flags Req %02x Rep %02x, IRD/ORD '
            'Req %d/%d Rep %d/%d' % (idx, req[1], req[0], rep[0],
                                     ird_i & 0x3FFF, ord_i & 0x3FFF,
                                     ird_r & 0x3FFF, ord_r & 0x3FFF))
    dirs = (Direction('conn %d initiator->responder' % idx),
            Direction('conn %d responder->initiator' % idx))
    dirs[0].ord = 1
    if len(req[2]) >= 4:
        dirs[0].ord = max(1, struct.unpack('>H', req[2][2:4])[0] & 0x3FFF)
    # The FPDUs of each direction, in order (both are checked alone, then
    # requests are matched with responses).
    for d, data, frame in ((dirs[0], a, req), (dirs[1], b, rep)):
        for u in fpdus(data[frame[3]:], crc_used, ck, d.name):
            parsed = parse_ddp(u, d, ck)
            if parsed:
                check_message(d, parsed, ck)
    return dirs


def check_message(d, parsed, ck):
    op, last, hdr, rest = parsed
    name = OP_NAMES[op]
    who = d.name
    if op in (8, 9, 0xA, 0xB):
        ck(last == 1, '%s: L = 1' % name, '%s: L=%d' % (who, last))
        ck(hdr['mo'] == 0, '%s: MO 0' % name, '%s: MO %d' % (who, hdr['mo']))
    if op == 0:                    # RDMA Write: collect the message
        if d.tagged_msg is None:
            d.tagged_msg = [hdr['stag'], hdr['to'], 0]
        else:
            m = d.tagged_msg
            ck(hdr['stag'] == m[0] and hdr['to'] == m[1] + m[2],
               'RDMA Write segments contiguous', who)
        d.tagged_msg[2] += len(rest)
        if last:
            d.last_write = tuple(d.tagged_msg)
            d.messages.append((0, {'stag': d.last_write[0],
                                   'to': d.last_write[1],
                                   'len': d.last_write[2]}))
            d.tagged_msg = None
            d.prev_op = 0
        return
    if op in (8, 9):
        ck(len(rest) == 8, '%s: exactly 8 octets of Immediate Data' % name,
           '%s: %d octets' % (who, len(rest)))
        ck(d.prev_op == 0, '%s follows a complete RDMA Write' % name,
           '%s: after %s' % (who, OP_NAMES.get(d.prev_op)))
        d.messages.append((op, {'imm': bytes(rest[:8]),
                                'write': d.last_write if d.prev_op == 0
                                else None}))
    elif op == 0xA:
        if not ck(len(rest) == 52, 'Atomic Request: header of 52 octets, '
                  'no payload', '%s: %d octets' % (who, len(rest))):
            return
        w0, rid, stag, to, sd, sm, cd, cm = struct.unpack('>IIIQQQQQ', rest)
        aop = w0 & 0xF
        ck(w0 >> 4 == 0, 'Atomic Request: Reserved (28 bits) zero',
           '%s: 0x%07x' % (who, w0 >> 4))
        ck(aop in (0, 2), 'Atomic Request: AOpCode FetchAdd or CmpSwap',
           '%s: %d' % (who, aop))
        if aop == 0:
            ck(sm == 0, 'FetchAdd: Add Mask 0 (one 64-bit field)',
               '%s: 0x%016x' % (who, sm))
            ck(cd == 0, 'FetchAdd: Compare Data 0', '%s: 0x%016x' % (who, cd))
            ck(cm == ALL_ONES, 'FetchAdd: Compare Mask all ones',
               '%s: 0x%016x' % (who, cm))
        elif aop == 2:
            ck(sm == ALL_ONES, 'CmpSwap: Swap Mask all ones',
               '%s: 0x%016x' % (who, sm))
            ck(cm == ALL_ONES, 'CmpSwap: Compare Mask all ones',
               '%s: 0x%016x' % (who, cm))
        d.messages.append((op, {'aop': aop, 'rid': rid, 'stag': stag,
                                'to': to, 'data': sd, 'compare': cd}))
    elif op == 0xB:
        if not ck(len(rest) == 12, 'Atomic Response: header of 12 octets, '
                  'no payload', '%s: %d octets' % (who, len(rest))):
            return
        rid, orig = struct.unpack('>IQ', rest)
        d.messages.append((op, {'rid': rid, 'orig': orig}))
    elif op == 7:
        d.messages.append((op, {'raw': bytes(rest)}))
    elif last:
        d.messages.append((op, {}))
    if last:
        d.prev_op = op


def parse_log(path):
    """ext-verbs' wire log: a list per connection of posted requests."""
    conns = []
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == 'conn':
            conns.append([])
            continue
        e = {'kind': f[0]}
        if f[0] == 'fadd':
            e.update(stag=int(f[1], 0), to=int(f[2], 0), data=int(f[3], 0),
                     orig=None if f[4] == '-' else int(f[4], 0))
        elif f[0] == 'cswap':
            e.update(stag=int(f[1], 0), to=int(f[2], 0),
                     compare=int(f[3], 0), data=int(f[4], 0),
                     orig=None if f[5] == '-' else int(f[5], 0))
        elif f[0] == 'wimm':
            e.update(stag=int(f[1], 0), to=int(f[2], 0), len=int(f[3]),
                     imm=bytes.fromhex(f[4]), se=f[5] == '1')
        elif f[0] == 'write':
            e.update(stag=int(f[1], 0), to=int(f[2], 0), len=int(f[3]))
        conns[-1].append(e)
    return conns


def match_log(idx, dirs, posted, ck, ord_):
    """The initiator's requests against what was posted, in order; the
    responder's Atomic Responses against the requests."""
    ini, resp = dirs
    reqs = [m for m in ini.messages if m[0] in (0, 8, 9, 0xA)]
    # A Write with Immediate is two messages on the wire: fold them.
    wire = []
    i = 0
    while i < len(reqs):
        op, f = reqs[i]
        if op == 0 and i + 1 < len(reqs) and reqs[i + 1][0] in (8, 9):
            wire.append(('wimm', f, reqs[i + 1]))
            i += 2
            continue
        wire.append(({0: 'write', 0xA: 'atomic'}.get(op, 'imm'), f, None))
        i += 1
    # The RTR of the peer-to-peer exchange may be a zero-length Write.
    if wire and wire[0][0] == 'write' and wire[0][1]['len'] == 0 and \
            (not posted or posted[0]['kind'] != 'write'):
        wire = wire[1:]
    ck(len(wire) == len(posted), 'requests on the wire = requests posted',
       'conn %d: %d on the wire, %d posted' % (idx, len(wire), len(posted)))
    for n, (w, e) in enumerate(zip(wire, posted)):
        kind, f, imm = w
        where = 'conn %d request %d (%s)' % (idx, n, e['kind'])
        if e['kind'] in ('fadd', 'cswap'):
            if not ck(kind == 'atomic', 'posted atomic is an Atomic Request',
                      '%s: %s on the wire' % (where, kind)):
                continue
            aop = 0 if e['kind'] == 'fadd' else 2
            ck(f['aop'] == aop, 'AOpCode as posted',
               '%s: %d' % (where, f['aop']))
            ck(f['stag'] == e['stag'], 'Remote STag as posted',
               '%s: 0x%x, posted 0x%x' % (where, f['stag'], e['stag']))
            ck(f['to'] == e['to'], 'Remote Tagged Offset as posted',
               '%s: 0x%x, posted 0x%x' % (where, f['to'], e['to']))
            ck(f['data'] == e['data'], 'Add or Swap Data as posted '
               '(big-endian)', '%s: 0x%016x, posted 0x%016x' %
               (where, f['data'], e['data']))
            if aop == 2:
                ck(f['compare'] == e['compare'], 'Compare Data as posted '
                   '(big-endian)', '%s: 0x%016x, posted 0x%016x' %
                   (where, f['compare'], e['compare']))
            e['rid'] = f['rid']
        elif e['kind'] == 'wimm':
            if not ck(kind == 'wimm', 'Write with Immediate is a Write, then '
                      'Immediate Data', '%s: %s on the wire' % (where, kind)):
                continue
            op, g = imm
            ck((op == 9) == e['se'], 'Immediate Data with SE iff solicited',
               '%s: opcode %d, solicited %s' % (where, op, e['se']))
            ck((f['stag'], f['to'], f['len']) ==
               (e['stag'], e['to'], e['len']),
               'the Write of a Write with Immediate: STag, TO, length',
               '%s: 0x%x 0x%x %d, posted 0x%x 0x%x %d' %
               (where, f['stag'], f['to'], f['len'], e['stag'], e['to'],
                e['len']))
            ck(g['imm'][:4] == e['imm'], 'Immediate Data: the posted 32 bits '
               'first', '%s: %s, posted %s' % (where, g['imm'].hex(),
                                                 e['imm'].hex()))
            ck(g['imm'][4:] == b'\0' * 4, 'Immediate Data: octets 4-7 zero',
               '%s: %s' % (where, g['imm'].hex()))
        elif e['kind'] == 'write':
            ck(kind == 'write' and (f['stag'], f['to'], f['len']) ==
               (e['stag'], e['to'], e['len']), 'RDMA Write as posted',
               '%s: %s' % (where, kind))
    # Responses: in request order, echoing the Request Identifier.
    atomics = [e for e in posted if e['kind'] in ('fadd', 'cswap') and
               'rid' in e]
    resps = [m[1] for m in resp.messages if m[0] == 0xB]
    terms = [m for m in resp.messages if m[0] == 7]
    answered = [e for e in atomics if e['orig'] is not None]
    refused = [e for e in atomics if e['orig'] is None]
    ck(len(resps) == len(answered), 'one Atomic Response per answered '
       'request', 'conn %d: %d responses, %d answered requests' %
       (idx, len(resps), len(answered)))
    # The identifier names a request while it is outstanding: at most ORD
    # of them are, so any ORD consecutive requests have distinct ones.
    rids = [e['rid'] for e in atomics]
    for n, rid in enumerate(rids):
        ck(rid not in rids[max(0, n - ord_ + 1):n],
           'Request Identifier distinct among any ORD consecutive requests',
           'conn %d request %d: 0x%x again (ORD %d)' % (idx, n, rid, ord_))
    for n, (r, e) in enumerate(zip(resps, answered)):
        where = 'conn %d response %d' % (idx, n)
        ck(r['rid'] == e['rid'], 'Original Request Identifier echoed',
           '%s: 0x%x, request had 0x%x' % (where, r['rid'], e['rid']))
        ck(r['orig'] == e['orig'], 'Original Remote Data Value = the '
           'value returned to the verbs consumer (big-endian)',
           '%s: 0x%016x, consumer got 0x%016x' % (where, r['orig'],
                                                  e['orig']))
    if refused:
        ck(len(terms) >= 1 and not resps, 'refused atomic: a Terminate, no '
           'Atomic Response', 'conn %d: %d Terminates, %d responses' %
           (idx, len(terms), len(resps)))


def decode(args):
    ck = Checks()
    lines = []
    conns = flows_of(args.pcap, args.port)
    posted = parse_log(args.log)
    crc_on = args.crc == 'on'
    print('decode: %s, %d connections to port %d, %d in the wire log, '
          'CRC %s' % (args.pcap, len(conns), args.port, len(posted),
                      args.crc))
    ck(len(conns) == len(posted), 'captured connections = ext-verbs '
       'connections', '%d captured, %d logged' % (len(conns), len(posted)))
    totals = {}
    for idx, (fwd, rev) in enumerate(conns):
        dirs = decode_conn(idx, fwd, rev, crc_on, ck, lines.append)
        if not dirs:
            continue
        for d in dirs:
            for k, v in d.counts.items():
                totals[k] = totals.get(k, 0) + v
            lines.append('  %s: %s' % (d.name, ', '.join(
                '%s %d' % kv for kv in sorted(d.counts.items()))))
        if idx < len(posted):
            match_log(idx, dirs, posted[idx], ck, dirs[0].ord)
    for line in lines:
        print(line)
    for new in ('Atomic Request', 'Atomic Response', 'Immediate Data',
                'Immediate Data with SE'):
        ck(totals.get(new, 0) > 0, 'segments of every new opcode captured',
           '%s: none' % new)
    print('decode: segments: %s' % ', '.join(
        '%s %d' % kv for kv in sorted(totals.items())))
    for name in sorted(ck.n):
        print('%s %d/%d - %s' % ('ok' if not ck.bad.get(name) else 'not ok',
                                 ck.n[name] - ck.bad.get(name, 0),
                                 ck.n[name], name))
    for e in ck.examples:
        print('# FAILED %s' % e)
    print('decode: %d checks in %d kinds, %d failed' %
          (ck.total(), len(ck.n), ck.failed()))
    return 1 if ck.failed() else 0


# ------------------------------------------------------------- selftest
def selftest(_args):
    bad = 0

    def t(ok, what):
        nonlocal bad
        print('%s - %s' % ('ok' if ok else 'not ok', what))
        bad += not ok
    # RFC 3720 B.4.
    t(crc_octets(b'\0' * 32).hex() == 'aa36918a', 'CRC32c of 32 zero octets')
    t(crc_octets(b'\xff' * 32).hex() == '43aba862', 'CRC32c of 32 0xff octets')
    t(crc_octets(bytes(range(32))).hex() == '4e79dd46',
      'CRC32c of 0x00..0x1f')

    def fpdu(u, crc=True):
        body = struct.pack('>H', len(u)) + u
        body += b'\0' * ((4 - len(body) % 4) % 4)
        return body + (crc_octets(body) if crc else b'\0' * 4)

    def untagged(op, qn, msn, payload, last=1):
        return bytes([0x40 * last | 1, 0x40 | op]) + \
            struct.pack('>IIII', 0, qn, msn, 0) + payload

    areq = untagged(0xA, 1, 1, struct.pack('>IIIQQQQQ', 0, 7, 0x1234,
                                            0x1000, 5, 0, 0, ALL_ONES))
    aresp = untagged(0xB, 3, 1, struct.pack('>IQ', 7, 42))
    write = bytes([0xC1, 0x40]) + struct.pack('>IQ', 0x99, 0x2000) + b'x' * 5
    imm = untagged(9, 0, 1, b'\x12\x34\x56\x78\0\0\0\0')

    def run(stream_a, stream_b, log, crc=True):
        ck = Checks()

        class F:
            def __init__(self, s):
                self.s = s

            def stream(self):
                return self.s, []
        req = MPA_REQ + bytes([0x40 if crc else 0, 2]) + \
            struct.pack('>H', 4) + b'\0\4\0\4'
        rep = MPA_REP + bytes([0x40 if crc else 0, 2]) + \
            struct.pack('>H', 4) + b'\0\4\0\4'
        dirs = decode_conn(0, F(req + stream_a), F(rep + stream_b), crc, ck,
                           lambda s: None)
        match_log(0, dirs, log, ck, dirs[0].ord)
        return ck
    log = [{'kind': 'fadd', 'stag': 0x1234, 'to': 0x1000, 'data': 5,
            'orig': 42},
           {'kind': 'wimm', 'stag': 0x99, 'to': 0x2000, 'len': 5,
            'imm': b'\x12\x34\x56\x78', 'se': True}]
    ck = run(fpdu(areq) + fpdu(write) + fpdu(imm), fpdu(aresp),
             [dict(e) for e in log])
    t(ck.failed() == 0 and ck.total() > 40,
      'a well-formed stream passes (%d checks, %d failed: %s)' %
      (ck.total(), ck.failed(), ck.examples[:3]))
    ck = run(fpdu(areq) + fpdu(write) + fpdu(imm), fpdu(aresp),
             [dict(e) for e in log], crc=False)
    t(ck.failed() > 0, 'CRC octets present but the connection says off')
    corrupt = [
        ('CRC', fpdu(areq)[:-1] + b'\0', None),
        ('Add Mask', fpdu(areq[:18 + 28] + b'\xff' + areq[18 + 29:]), None),
        ('Compare Mask', fpdu(areq[:-1] + b'\0'), None),
        ('QN', fpdu(areq[:9] + b'\3' + areq[10:]), None),
        ('MSN', fpdu(areq[:13] + b'\2' + areq[14:]), None),
        ('MO', fpdu(areq[:17] + b'\1' + areq[18:]), None),
        ('DV', fpdu(bytes([0x42]) + areq[1:]), None),
        ('RV', fpdu(areq[:1] + b'\x8a' + areq[2:]), None),
        ('L', fpdu(bytes([0x01]) + areq[1:]), None),
        ('Reserved', fpdu(areq[:18] + b'\0\0\1\0' + areq[22:]), None),
        ('STag', fpdu(areq[:26] + b'\0\0\0\1' + areq[30:]), None),
        ('Request Identifier', None, fpdu(aresp[:21] + b'\x08' + aresp[22:])),
        ('Original value', None, fpdu(aresp[:-1] + b'\x2b')),
    ]
    for what, a, b in corrupt:
        ck = run((a or fpdu(areq)) + fpdu(write) + fpdu(imm),
                 b or fpdu(aresp), [dict(e) for e in log])
        t(ck.failed() > 0, 'a wrong %s is caught (%s)' %
          (what, ck.examples[:1]))
    # Two requests in flight with one identifier.
    areq2 = untagged(0xA, 1, 2, areq[18:])
    aresp2 = untagged(0xB, 3, 2, struct.pack('>IQ', 7, 47))
    log2 = [dict(log[0]), dict(log[0], data=5, orig=47), dict(log[1])]
    ck = run(fpdu(areq) + fpdu(areq2) + fpdu(write) + fpdu(imm),
             fpdu(aresp) + fpdu(aresp2), log2)
    t(ck.bad.get('Request Identifier distinct among any ORD consecutive '
                 'requests') == 1 and ck.failed() == 1,
      'one Request Identifier for two outstanding requests is caught (%s)'
      % ck.examples[:1])
    imm9 = untagged(9, 0, 1, b'\x12\x34\x56\x78\0\0\0\0\0')
    ck = run(fpdu(areq) + fpdu(write) + fpdu(imm9), fpdu(aresp),
             [dict(e) for e in log])
    t(ck.failed() > 0, 'Immediate Data of 9 octets is caught')
    immx = untagged(9, 0, 1, b'\x12\x34\x56\x79\0\0\0\0')
    ck = run(fpdu(areq) + fpdu(write) + fpdu(immx), fpdu(aresp),
             [dict(e) for e in log])
    t(ck.failed() > 0, 'Immediate Data other than posted is caught')
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('capture')
    c.add_argument('--iface', default='lo')
    c.add_argument('--port', type=int, required=True)
    c.add_argument('--out', required=True)
    c.add_argument('--ready')
    d = sub.add_parser('decode')
    d.add_argument('--port', type=int, required=True)
    d.add_argument('--pcap', required=True)
    d.add_argument('--crc', choices=('on', 'off'), required=True)
    d.add_argument('--log', required=True)
    sub.add_parser('selftest')
    args = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    return {'capture': capture, 'decode': decode,
            'selftest': selftest}[args.cmd](args)


if __name__ == '__main__':
    sys.exit(main())
